"""Parsed JSON to the Python values a tool's type hints ask for.

The host validates the input against the derived schema before the plugin
runs, so in a component this rarely fails; it matters when a tool is
called natively (unit tests, :func:`kaizen_sdk.call`) and for what a schema
cannot say (an ``int`` sent as ``2.0``). Errors name the field's path
(``items[2].name``), what was expected and what came.

This module is plain Python, usable without the component bindings.
"""

from __future__ import annotations

import difflib
import enum
import json
from typing import Any, Literal, get_args, get_origin

from .schema import (
    _MAPPINGS,
    _SEQUENCES,
    Field,
    NoneType,
    _is_union,
    dataclass_fields,
    is_input_class,
    unwrap,
)


class InputError(ValueError):
    """The input does not fit the tool's type hints; ``path`` is where
    (empty for the whole input)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.problem = message
        super().__init__(f"`{path}`: {message}" if path else message)


def convert(value: Any, tp: Any, path: str = "") -> Any:
    """``value`` (parsed JSON) as type ``tp``; raises :class:`InputError`."""
    tp, _, _ = unwrap(tp)
    if tp is Any or tp is object:
        return value
    if tp is None or tp is NoneType:
        if value is not None:
            raise InputError(path, f"expected null, got {describe(value)}")
        return None
    origin = get_origin(tp)
    args = get_args(tp)
    if _is_union(tp):
        return _convert_union(value, args, path)
    if origin is Literal:
        for allowed in args:
            plain = allowed.value if isinstance(allowed, enum.Enum) else allowed
            if type(plain) is type(value) and plain == value:
                return allowed
        raise InputError(path, f"expected one of {_list(args)}, got {describe(value)}")
    if tp is bool:
        if isinstance(value, bool):
            return value
        raise InputError(path, f"expected a boolean (true or false), got {describe(value)}")
    if tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise InputError(path, f"expected an integer, got {describe(value)}")
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise InputError(path, f"expected a number, got {describe(value)}")
    if tp is str:
        if isinstance(value, str):
            return value
        raise InputError(path, f"expected a string, got {describe(value)}")
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        for member in tp:
            if type(member.value) is type(value) and member.value == value:
                return member
        raise InputError(path, f"expected one of {_list([m.value for m in tp])}, got {describe(value)}")
    if is_input_class(tp):
        if not isinstance(value, dict):
            raise InputError(path, f"expected an object, got {describe(value)}")
        return tp(**convert_fields(value, dataclass_fields(tp, tp.__name__), path))
    container = origin or tp
    if container is tuple:
        items = _expect_list(value, path)
        if not args:
            return tuple(items)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert(v, args[0], f"{path}[{i}]") for i, v in enumerate(items))
        if args == ((),):
            args = ()
        if len(items) != len(args):
            raise InputError(path, f"expected an array of {len(args)} items, got {len(items)}")
        return tuple(convert(v, t, f"{path}[{i}]") for i, (v, t) in enumerate(zip(items, args, strict=True)))
    if container in _SEQUENCES:
        items = _expect_list(value, path)
        if not args:
            return list(items)
        return [convert(v, args[0], f"{path}[{i}]") for i, v in enumerate(items)]
    if container in _MAPPINGS:
        if not isinstance(value, dict):
            raise InputError(path, f"expected an object, got {describe(value)}")
        if not args:
            return dict(value)
        return {k: convert(v, args[1], _join(path, k)) for k, v in value.items()}
    raise InputError(path, f"the tool declares a type the kit cannot convert to ({tp!r})")


def convert_fields(obj: dict[str, Any], fields: list[Field], path: str = "") -> dict[str, Any]:
    """The keyword arguments for ``fields`` from the JSON object ``obj``:
    unknown keys and missing required fields are errors; absent optional
    fields get their defaults."""
    known = {f.name for f in fields}
    for key in obj:
        if key not in known:
            hint = difflib.get_close_matches(key, known, n=1)
            also = f"; did you mean `{hint[0]}`?" if hint else ""
            names = ", ".join(f.name for f in fields) or "none"
            raise InputError(_join(path, key), f"unknown field{also} (the fields are: {names})")
    out: dict[str, Any] = {}
    for f in fields:
        if f.name in obj:
            out[f.name] = convert(obj[f.name], f.type, _join(path, f.name))
        elif f.required:
            about = f" ({f.description})" if f.description else ""
            raise InputError(_join(path, f.name), f"missing required field{about}")
        else:
            out[f.name] = f.default_value()
    return out


def parse_object(text: str | bytes | dict[str, Any]) -> dict[str, Any]:
    """The input as a dict: JSON text is parsed; a dict passes through."""
    if isinstance(text, dict):
        return text
    try:
        value = json.loads(text)
    except ValueError as err:
        raise InputError("", f"the input is not valid JSON: {err}") from None
    if not isinstance(value, dict):
        raise InputError("", f"the input must be a JSON object, got {describe(value)}")
    return value


def _convert_union(value: Any, args: tuple[Any, ...], path: str) -> Any:
    if value is None and NoneType in args:
        return None
    options = [a for a in args if a is not NoneType]
    if len(options) == 1:
        return convert(value, options[0], path)
    problems = []
    for option in options:
        try:
            return convert(value, option, path)
        except InputError as err:
            problems.append(err.problem)
    raise InputError(path, "no alternative fits: " + "; ".join(problems))


def _expect_list(value: Any, path: str) -> list[Any]:
    if not isinstance(value, list):
        raise InputError(path, f"expected an array, got {describe(value)}")
    return value


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _list(values: Any) -> str:
    plain = [v.value if isinstance(v, enum.Enum) else v for v in values]
    return ", ".join(json.dumps(v) for v in plain)


def describe(value: Any) -> str:
    """A short description of a JSON value for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {json.dumps(shown)}"
    if isinstance(value, list):
        return f"an array of {len(value)} items"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
