"""The ``@tool`` decorator, the registry of a plugin's tools and the call
path: JSON in, converted arguments, the function, an :class:`Output` or a
:class:`ToolError` out.

Everything here is plain Python, so a plugin's tools can be unit-tested
natively with :func:`call`, the same path the component takes.
"""

from __future__ import annotations

import enum
import inspect
import json
import os
import posixpath
import re
import traceback
import typing
from dataclasses import dataclass
from typing import Any, Callable, Iterator, TypeVar, overload

from . import _docstrings, log
from .convert import InputError, convert_fields, parse_object
from .errors import ErrorKind, ToolError, to_tool_error
from .output import Output
from .schema import (
    Field,
    SchemaError,
    UnresolvedHint,
    dataclass_fields,
    is_input_class,
    is_optional,
    object_schema,
    unwrap,
)

F = TypeVar("F", bound=Callable[..., Any])

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class Danger(str, enum.Enum):
    """How much harm a tool can do; the host's permission rules use it."""

    #: Reads only; can never change anything.
    SAFE = "safe"
    #: Changes files inside the granted directories.
    MODERATE = "moderate"
    #: Runs programs, reaches the network, or deletes data.
    DANGEROUS = "dangerous"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class CallContext:
    """What the host tells a tool about the call it is serving. Declare a
    parameter of this type to receive it (it is not part of the input)."""

    #: The session this call belongs to; stable for the whole session.
    session_id: str
    #: The id the model gave this tool call; unique within the session.
    call_id: str
    #: Absolute path of the workspace, preopened at the same path.
    workspace: str
    #: Absolute path relative paths resolve against (usually the workspace).
    cwd: str

    @classmethod
    def local(cls, cwd: str | None = None) -> "CallContext":
        """A context for calls outside Kaizen (unit tests): the current
        directory is the workspace."""
        here = os.path.abspath(cwd or os.getcwd())
        return cls(session_id="local", call_id="local", workspace=here, cwd=here)

    def resolve(self, path: str) -> str:
        """``path`` made absolute against :attr:`cwd`, with ``.`` and ``..``
        applied lexically (the sandbox refuses ``..`` that climbs out of a
        granted directory, so resolve before touching the file)."""
        return posixpath.normpath(posixpath.join(self.cwd, path))


@dataclass(frozen=True)
class ToolSpec:
    """How a tool is described to the host and the model."""

    name: str
    description: str
    #: The input's JSON Schema, as a dict.
    input_schema: dict[str, Any]
    danger: Danger
    read_only: bool
    #: Left out of the tool list (callable through the `parallel` host
    #: interface only).
    internal: bool

    def schema_json(self) -> str:
        """The input schema as JSON text, as the contract carries it."""
        return json.dumps(self.input_schema, ensure_ascii=False, sort_keys=False)


class Tool:
    """One registered tool: the function and how to call it. Built by
    :meth:`Registry.tool`; the schema is derived on first use (so that
    type hints may name classes defined after the function)."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str,
        description: str,
        param_docs: dict[str, str],
        read_only: bool,
        danger: Danger,
        internal: bool,
    ) -> None:
        self.func = func
        self.name = name
        self._description = description
        self._param_docs = param_docs
        self.read_only = read_only
        self.danger = danger
        self.internal = internal
        self._plan: _Plan | None = None
        self._spec: ToolSpec | None = None

    @property
    def spec(self) -> ToolSpec:
        """The tool's spec; raises :class:`SchemaError` when a type hint
        cannot be described."""
        if self._spec is None:
            plan = self._get_plan()
            self._spec = ToolSpec(
                name=self.name,
                description=self._description,
                input_schema=plan.schema,
                danger=self.danger,
                read_only=self.read_only,
                internal=self.internal,
            )
        return self._spec

    def _get_plan(self) -> "_Plan":
        if self._plan is None:
            self._plan = _plan(self.func, self.name, self._param_docs)
        return self._plan

    def run(self, ctx: CallContext, input: str | bytes | dict[str, Any]) -> Output:
        """Parses and converts ``input``, calls the function and returns its
        result as an Output. Any failure raises a :class:`ToolError`; an
        unexpected exception becomes an internal ``failed`` error naming it
        (and is logged with its traceback)."""
        try:
            plan = self._get_plan()
            try:
                args = plan.arguments(parse_object(input), ctx)
            except InputError as err:
                raise ToolError(ErrorKind.INVALID_INPUT, f"invalid input for {self.name}: {err}") from None
            result = self.func(**args)
            output = _as_output(result, self.name)
            _check_metadata(output, self.name)
            return output
        except BaseException as exc:  # noqa: BLE001 -- a tool must never trap
            if isinstance(exc, (KeyboardInterrupt, GeneratorExit)):
                raise
            error = to_tool_error(exc, self.name)
            if error is not exc and error.message.startswith("internal error"):
                _log_traceback(exc, self.name)
            raise error from None

    def __repr__(self) -> str:
        return f"<kaizen tool {self.name}>"


@dataclass
class _Plan:
    """How JSON input becomes the function's arguments."""

    schema: dict[str, Any]
    #: The object's fields (the parameters, or the dataclass's fields).
    fields: list[Field]
    #: The single dataclass parameter the whole input becomes, if any.
    model: type | None
    model_param: str | None
    #: Parameters that receive the CallContext.
    context_params: list[str]

    def arguments(self, obj: dict[str, Any], ctx: CallContext) -> dict[str, Any]:
        """The function's keyword arguments for the input object ``obj``."""
        values = convert_fields(obj, self.fields)
        kwargs: dict[str, Any] = {name: ctx for name in self.context_params}
        if self.model is not None and self.model_param is not None:
            kwargs[self.model_param] = self.model(**values)
        else:
            kwargs.update(values)
        return kwargs


def _plan(func: Callable[..., Any], name: str, docs: dict[str, str]) -> _Plan:
    where = f"tool `{name}` ({func.__qualname__})"
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except NameError as err:
        raise UnresolvedHint(
            f"{where}: cannot resolve its type hints: {err}; define the types it names at module level"
        ) from None
    params = []
    context_params = []
    for p in inspect.signature(func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise SchemaError(
                f"{where}: *args and **kwargs cannot be described to the model; name each input"
            )
        if p.kind is p.POSITIONAL_ONLY:
            raise SchemaError(f"{where}: parameter `{p.name}` is positional-only; inputs are passed by name")
        tp = hints.get(p.name, p.annotation)
        if tp is inspect.Parameter.empty:
            raise SchemaError(
                f"{where}: parameter `{p.name}` has no type hint; annotate it (e.g. `{p.name}: str`) "
                f"so the model knows what to send"
            )
        if unwrap(tp)[0] is CallContext:
            context_params.append(p.name)
            continue
        params.append((p, tp))

    base = unwrap(params[0][1])[0] if len(params) == 1 else None
    if base is not None and is_input_class(base) and params[0][0].default is inspect.Parameter.empty:
        # One dataclass parameter: the whole input is that object (as a
        # FastAPI body); its fields are the input's fields.
        fields = dataclass_fields(base, where)
        schema = object_schema(fields, where, (base,))
        return _Plan(schema, fields, base, params[0][0].name, context_params)

    fields = []
    for p, tp in params:
        has_default = p.default is not inspect.Parameter.empty
        _, annotated, _ = unwrap(tp)
        fields.append(
            Field(
                name=p.name,
                type=tp,
                required=not has_default and not is_optional(tp),
                default=p.default if has_default else None,
                description=annotated or docs.get(p.name),
            )
        )
    return _Plan(object_schema(fields, where), fields, None, None, context_params)


def _as_output(result: Any, name: str) -> Output:
    if isinstance(result, Output):
        return result
    if isinstance(result, str):
        return Output(result)
    if result is None:
        return Output()
    raise ToolError(
        ErrorKind.FAILED,
        f"internal error in tool `{name}`: it returned {type(result).__name__}; a tool returns a str "
        f"or a kaizen_sdk.Output (structured data goes in Output(..., metadata=...)). "
        f"This is a bug in the plugin",
    )


def _check_metadata(output: Output, name: str) -> None:
    try:
        output.metadata_json()
    except (TypeError, ValueError) as err:
        raise ToolError(
            ErrorKind.FAILED,
            f"internal error in tool `{name}`: its output metadata is not JSON ({err}). "
            f"This is a bug in the plugin",
        ) from None


def _log_traceback(exc: BaseException, name: str) -> None:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    log.error(f"tool `{name}` raised an unexpected exception:\n{text}")


def camel_name(func_name: str) -> str:
    """``word_count`` -> ``WordCount``: the style of Kaizen's own tools."""
    return "".join(part[:1].upper() + part[1:] for part in func_name.split("_") if part)


class Registry:
    """A plugin's tools, by name. The module-level :func:`tool` and
    :func:`call` use the default registry, which the component exports;
    tests may make their own."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    @overload
    def tool(self, func: F) -> F: ...

    @overload
    def tool(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        danger: Danger | str = Danger.MODERATE,
        internal: bool = False,
    ) -> Callable[[F], F]: ...

    def tool(
        self,
        func: Callable[..., Any] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        danger: Danger | str = Danger.MODERATE,
        internal: bool = False,
    ) -> Any:
        """Registers a function as a tool; use as ``@tool`` or
        ``@tool(read_only=True, danger=Danger.SAFE)``.

        - ``name``: what the model calls it (default: the function's name in
          CamelCase, ``word_count`` -> ``WordCount``); ``[A-Za-z0-9_-]{1,64}``,
          unique across all loaded plugins.
        - ``description``: for the model (default: the docstring, less its
          ``Args:`` section, whose entries describe the parameters).
        - ``read_only``: never changes anything, so calls may run
          concurrently (default False).
        - ``danger``: ``Danger.SAFE``, ``MODERATE`` (default) or ``DANGEROUS``.
        - ``internal``: left out of the tool list; only the plugin itself
          calls it, through the ``parallel`` host interface.

        The parameters are the input's fields (a parameter typed
        :class:`CallContext` receives the context instead); a single
        dataclass parameter makes its fields the input's fields. The
        function is returned unchanged, so it can still be called directly.
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
                raise TypeError(f"tool {fn.__qualname__}: async functions are not supported; use a plain def")
            tool_name = name if name is not None else camel_name(fn.__name__)
            if not _NAME.match(tool_name):
                raise ValueError(
                    f"tool name {tool_name!r} is not valid: use 1 to 64 letters, digits, '_' or '-' "
                    f"(pass name=... to @tool)"
                )
            if tool_name in self._tools:
                raise ValueError(
                    f"two tools are named `{tool_name}` ({self._tools[tool_name].func.__qualname__} and "
                    f"{fn.__qualname__}); tool names must be unique, pass name=... to one of them"
                )
            text, param_docs = _docstrings.split(fn.__doc__)
            text = description if description is not None else text
            if not text or not text.strip():
                raise ValueError(
                    f"tool `{tool_name}` has no description: give {fn.__qualname__} a docstring saying what "
                    f"it does and when to use it (the model reads it), or pass description=..."
                )
            try:
                level = Danger(danger)
            except ValueError:
                raise ValueError(
                    f"tool `{tool_name}`: danger {danger!r} is not one of safe, moderate, dangerous"
                ) from None
            entry = Tool(
                fn,
                name=tool_name,
                description=text.strip(),
                param_docs=param_docs,
                read_only=bool(read_only),
                danger=level,
                internal=bool(internal),
            )
            # Derive the schema now when the hints resolve, so mistakes show
            # where the tool is defined; names defined later are retried on
            # first use.
            try:
                _ = entry.spec
            except UnresolvedHint:
                pass
            self._tools[tool_name] = entry
            fn.kaizen_tool = entry  # type: ignore[attr-defined]
            return fn

        if func is not None:
            return register(func)
        return register

    def get(self, name: str) -> Tool | None:
        """The tool named ``name``, if registered."""
        return self._tools.get(name)

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def specs(self) -> list[ToolSpec]:
        """The specs of the listed (not internal) tools, in definition order."""
        return [t.spec for t in self._tools.values() if not t.internal]

    def call(
        self, name: str, input: str | bytes | dict[str, Any] | None = None, ctx: CallContext | None = None
    ) -> Output:
        """Runs tool ``name`` the way the host does: ``input`` is JSON text
        or a dict (default ``{}``). Returns the Output; every failure raises
        a :class:`ToolError` (an unknown name is ``not-found``)."""
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(t.name for t in self._tools.values()) or "none"
            raise ToolError(
                ErrorKind.NOT_FOUND, f"this plugin has no tool named `{name}`; its tools are: {known}"
            )
        return tool.run(ctx or CallContext.local(), {} if input is None else input)


#: The registry the component exports.
default_registry = Registry()
tool = default_registry.tool
call = default_registry.call
