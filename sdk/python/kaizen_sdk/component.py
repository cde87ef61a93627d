"""The component's ``tools`` export, made from the registered tools.

componentize-py is pointed at this module (``componentize
kaizen_sdk.component``), not at the author's code: it imports the author's
module ``app`` (which registers its tools with ``@tool``) and defines the
``Tools`` class the generated bindings expect. componentize-py runs this
import once at build time and snapshots the result, so the specs and
schemas below are computed then, and a mistake in a type hint fails the
build rather than a call.

Only importable inside the build (it needs the generated ``wit_world``).
"""

from __future__ import annotations

import importlib

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import tools as wit

from . import _bindings, host, http, log, session  # noqa: F401 -- see below
from .errors import ErrorKind, ToolError
from .output import Text
from .registry import CallContext, default_registry

#: The module holding the plugin's tools, in the project directory.
APP_MODULE = "app"

importlib.import_module(APP_MODULE)

# Only modules imported now exist at run time, so every host interface the
# world has is imported here, for the kit's wrappers to find later.
for _name in (
    "log", "session", "interaction", "process", "agent", "parallel", "llm",
    "outgoing_handler", "wasi_http_types", "streams", "poll", "error", "monotonic_clock",
):  # fmt: skip
    _bindings.imported(_name)

if not len(default_registry):
    raise RuntimeError(
        f"{APP_MODULE}.py registered no tools: decorate at least one function with @kaizen_sdk.tool"
    )

_types = _bindings.kaizen_types()
_DANGER = {
    "safe": _types.DangerLevel.SAFE,
    "moderate": _types.DangerLevel.MODERATE,
    "dangerous": _types.DangerLevel.DANGEROUS,
}
_KINDS = {kind: wit.ErrorKind[kind.name] for kind in ErrorKind}

# Computed at build time (see the module's docstring), the internal
# tools' too, though they are not listed.
_SPECS = [
    wit.ToolSpec(
        name=spec.name,
        description=spec.description,
        input_schema=spec.schema_json(),
        danger=_DANGER[spec.danger.value],
        read_only=spec.read_only,
    )
    for spec in [t.spec for t in default_registry]
    if not spec.internal
]


class Tools(exports.Tools):
    """``kaizen:plugin/tools``: the registered tools, routed by name."""

    def tools(self) -> list[wit.ToolSpec]:
        return list(_SPECS)

    def call(self, ctx: _types.CallContext, name: str, input: str) -> wit.ToolOutput:
        context = CallContext(
            session_id=ctx.session_id, call_id=ctx.call_id, workspace=ctx.workspace, cwd=ctx.cwd
        )
        try:
            output = default_registry.call(name, input, context)
            content = [
                _types.ContentPart_Text(part.text)
                if isinstance(part, Text)
                else _types.ContentPart_Image(_types.Image(media_type=part.media_type, data=part.data))
                for part in output.content
            ]
            return wit.ToolOutput(content=content, metadata=output.metadata_json())
        except ToolError as err:
            raise Err(wit.ToolError(kind=_KINDS[err.kind], message=err.message)) from None
        except BaseException as exc:  # noqa: BLE001 -- a bug here must not trap
            message = f"internal error in the Kaizen Python kit: {type(exc).__name__}: {exc}"
            raise Err(wit.ToolError(kind=wit.ErrorKind.FAILED, message=message)) from None
