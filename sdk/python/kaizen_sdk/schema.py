"""JSON Schema (draft 2020-12) derived from Python type hints.

What the model sees of a tool's input is this schema, and the host
validates every call against it before the plugin runs. Supported types:

========================================  ==================================
Python                                    JSON Schema
========================================  ==================================
``str``, ``int``, ``float``, ``bool``     ``string``, ``integer``, ``number``, ``boolean``
``list[T]``, ``tuple[T, ...]``            ``array`` of ``T``
``tuple[A, B]``                           ``array`` with ``prefixItems``
``dict``, ``dict[str, T]``                ``object`` (values ``T``)
``Optional[T]``, ``T | None``             ``T`` or ``null``; not required
``Union[A, B]``                           ``anyOf``
``Literal["a", "b"]``                     ``enum``
an ``enum.Enum``                          ``enum`` of its values
a dataclass                               ``object`` with its fields
``typing.Any``                            any value
========================================  ==================================

A field is required unless it has a default (or is Optional). Its
description comes from ``Annotated[T, "text"]``, a dataclass field's
``metadata={"description": ...}``, or the ``Args:``/``Attributes:``
section of the docstring (or reST ``:param name:``), in that order. A dict
in ``Annotated`` is merged into the field's schema, for constraints the
host checks: ``Annotated[int, {"minimum": 1}]``.

Objects are closed (``additionalProperties: false``): a misspelt field is
refused with its name rather than silently dropped.

This module is plain Python, usable without the component bindings.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import json
import types
import typing
from dataclasses import MISSING
from typing import Annotated, Any, Callable, Literal, Optional, Union, get_args, get_origin

from . import _docstrings

NoneType = type(None)

_SCALARS: dict[type, str] = {str: "string", bool: "boolean", int: "integer", float: "number"}
_SEQUENCES = (list, collections.abc.Sequence, collections.abc.MutableSequence)
_MAPPINGS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)


class SchemaError(TypeError):
    """A type hint the kit cannot describe; the message names where it is
    and what would work."""


class UnresolvedHint(SchemaError):
    """A type hint names something not defined (yet): a class defined after
    the function that uses it."""


@dataclasses.dataclass
class Field:
    """One property of an input object."""

    name: str
    #: The annotation, ``Annotated`` included.
    type: Any
    required: bool
    #: What an absent optional field gets (None for an Optional one).
    default: Any = None
    #: Makes the default instead, when set (a dataclass default_factory).
    default_factory: Optional[Callable[[], Any]] = None
    description: str | None = None

    def default_value(self) -> Any:
        """The value an absent optional field gets."""
        if self.default_factory is not None:
            return self.default_factory()
        return self.default


def unwrap(tp: Any) -> tuple[Any, str | None, dict[str, Any]]:
    """Splits ``Annotated[T, ...]`` into ``T``, its description (the first
    str) and the schema keywords of its dicts."""
    description: str | None = None
    extra: dict[str, Any] = {}
    while get_origin(tp) is Annotated:
        for meta in tp.__metadata__:
            if isinstance(meta, str) and description is None:
                description = meta
            elif isinstance(meta, dict):
                extra = {**meta, **extra}
        tp = tp.__origin__
    return tp, description, extra


def is_optional(tp: Any) -> bool:
    """True for ``Optional[T]`` / ``T | None`` (possibly ``Annotated``)."""
    base, _, _ = unwrap(tp)
    return _is_union(base) and NoneType in get_args(base)


def _is_union(tp: Any) -> bool:
    return get_origin(tp) is Union or isinstance(tp, types.UnionType)


def is_input_class(tp: Any) -> bool:
    """True for a class whose fields can be an input object: a dataclass."""
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def dataclass_fields(cls: type, where: str) -> list[Field]:
    """The init fields of dataclass ``cls``, with their descriptions."""
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except NameError as err:
        raise UnresolvedHint(
            f"{where}: cannot resolve the type hints of dataclass `{cls.__name__}`: {err}; "
            f"define the types it names before the tools are listed"
        ) from None
    _, documented = _docstrings.split(_own_doc(cls))
    fields = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        tp = hints.get(f.name, f.type)
        _, annotated, _ = unwrap(tp)
        description = annotated or f.metadata.get("description") or documented.get(f.name)
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        fields.append(
            Field(
                name=f.name,
                type=tp,
                required=not has_default and not is_optional(tp),
                default=None if f.default is MISSING else f.default,
                default_factory=None if f.default_factory is MISSING else f.default_factory,
                description=description,
            )
        )
    return fields


def _own_doc(cls: type) -> str | None:
    """The class's docstring, or None for the one ``@dataclass`` makes up
    (``Point(x: int, y: int)``), which says nothing to a model."""
    doc = cls.__dict__.get("__doc__")
    if not doc:
        return None
    if dataclasses.is_dataclass(cls) and doc.startswith(cls.__name__ + "("):
        return None
    return doc


def class_description(cls: type) -> str | None:
    """A dataclass's docstring without its ``Attributes:`` section."""
    text, _ = _docstrings.split(_own_doc(cls))
    return text or None


def object_schema(fields: list[Field], where: str, stack: tuple[type, ...] = ()) -> dict[str, Any]:
    """The schema of an object with ``fields``."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in fields:
        schema = type_schema(f.type, f"{where}, field `{f.name}`", stack)
        if f.description:
            schema = {"description": f.description, **{k: v for k, v in schema.items() if k != "description"}}
        default = _json_default(f)
        if default is not MISSING:
            schema["default"] = default
        properties[f.name] = schema
        if f.required:
            required.append(f.name)
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out


def _json_default(f: Field) -> Any:
    """The field's default as JSON, when it has a plain one worth showing."""
    if f.required or f.default_factory is not None or f.default is None:
        return MISSING
    value = to_json(f.default)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return MISSING
    return value


def to_json(value: Any) -> Any:
    """``value`` with enums, dataclasses and tuples turned into JSON types."""
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: to_json(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    return value


def type_schema(tp: Any, where: str, stack: tuple[type, ...] = ()) -> dict[str, Any]:
    """The schema of one type hint; ``where`` names it in errors."""
    base, description, extra = unwrap(tp)
    schema = _base_schema(base, where, stack)
    if description:
        schema["description"] = description
    schema.update(extra)
    return schema


def _base_schema(tp: Any, where: str, stack: tuple[type, ...]) -> dict[str, Any]:
    if tp is Any or tp is object:
        return {}
    if tp is None or tp is NoneType:
        return {"type": "null"}
    if isinstance(tp, (str, typing.ForwardRef)):
        raise UnresolvedHint(f"{where}: the type hint {tp!r} is an unresolved forward reference")
    origin = get_origin(tp)
    args = get_args(tp)
    if _is_union(tp):
        return _union_schema(args, where, stack)
    if origin is Literal:
        return _literal_schema(args, where)
    if tp in _SCALARS:
        return {"type": _SCALARS[tp]}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum_schema(tp, where)
    if is_input_class(tp):
        if tp in stack:
            raise SchemaError(
                f"{where}: dataclass `{tp.__name__}` contains itself; recursive inputs are not "
                f"supported (use a list of a flat dataclass, or `dict`)"
            )
        fields = dataclass_fields(tp, where)
        schema = object_schema(fields, f"{where} ({tp.__name__})", stack + (tp,))
        description = class_description(tp)
        return {"description": description, **schema} if description else schema
    container = origin or tp
    if container is tuple:
        if not args:
            return {"type": "array"}
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": type_schema(args[0], f"{where} (items)", stack)}
        if args == ((),):
            return {"type": "array", "maxItems": 0}
        return {
            "type": "array",
            "prefixItems": [type_schema(a, f"{where} (item {i})", stack) for i, a in enumerate(args)],
            "items": False,
            "minItems": len(args),
        }
    if container in _SEQUENCES:
        if not args:
            return {"type": "array"}
        return {"type": "array", "items": type_schema(args[0], f"{where} (items)", stack)}
    if container in _MAPPINGS:
        if not args:
            return {"type": "object"}
        key, value = args
        if unwrap(key)[0] is not str:
            raise SchemaError(f"{where}: a dict's keys must be `str` (JSON object keys), not {key!r}")
        return {"type": "object", "additionalProperties": type_schema(value, f"{where} (values)", stack)}
    raise SchemaError(
        f"{where}: the type {_name(tp)} cannot be described to the model; use str, int, float, bool, "
        f"list[T], tuple[T, ...], dict[str, T], Optional[T], Literal[...], an Enum or a dataclass"
    )


def _union_schema(args: tuple[Any, ...], where: str, stack: tuple[type, ...]) -> dict[str, Any]:
    nullable = NoneType in args
    rest = [a for a in args if a is not NoneType]
    if len(rest) == 1:
        schema = type_schema(rest[0], where, stack)
    else:
        schema = {"anyOf": [type_schema(a, where, stack) for a in rest]}
    return _with_null(schema) if nullable else schema


def _with_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also admits ``null``."""
    schema = dict(schema)
    ty = schema.get("type")
    if isinstance(ty, str) and "enum" not in schema:
        schema["type"] = [ty, "null"]
        return schema
    if isinstance(ty, str) and "enum" in schema:
        schema["type"] = [ty, "null"]
        schema["enum"] = [*schema["enum"], None]
        return schema
    if "anyOf" in schema:
        schema["anyOf"] = [*schema["anyOf"], {"type": "null"}]
        return schema
    if not schema:
        return schema
    description = schema.pop("description", None)
    out: dict[str, Any] = {"anyOf": [schema, {"type": "null"}]}
    if description:
        out["description"] = description
    return out


def _json_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    return None


def _literal_schema(values: tuple[Any, ...], where: str) -> dict[str, Any]:
    json_values = [v.value if isinstance(v, enum.Enum) else v for v in values]
    kinds = {_json_type(v) for v in json_values}
    if None in kinds:
        raise SchemaError(f"{where}: Literal values must be str, int, float, bool or None, not {values!r}")
    schema: dict[str, Any] = {"enum": json_values}
    if len(kinds) == 1:
        schema = {"type": kinds.pop(), **schema}
    return schema


def _enum_schema(cls: type[enum.Enum], where: str) -> dict[str, Any]:
    values = [member.value for member in cls]
    kinds = {_json_type(v) for v in values}
    if None in kinds or "null" in kinds:
        raise SchemaError(
            f"{where}: enum `{cls.__name__}` has values that are not JSON scalars; give its members "
            f"str or int values"
        )
    schema: dict[str, Any] = {"enum": values}
    if len(kinds) == 1:
        schema = {"type": kinds.pop(), **schema}
    return schema


def _name(tp: Any) -> str:
    return getattr(tp, "__qualname__", None) or repr(tp)
