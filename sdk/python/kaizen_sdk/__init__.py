"""Write Kaizen tool, hook and planner plugins in Python.

A plugin's ``app.py``::

    from typing import Annotated
    from kaizen_sdk import Danger, tool

    @tool(read_only=True, danger=Danger.SAFE)
    def greet(name: Annotated[str, "Who to greet."]) -> str:
        \"\"\"Greets someone by name.\"\"\"
        return f"Hello, {name}!"

The input's JSON Schema is derived from the type hints (see
:mod:`kaizen_sdk.schema`); the tool's description is the docstring. A tool
returns a ``str`` or an :class:`Output`, and fails with
``raise ToolError(ErrorKind.NOT_FOUND, "...")``; any other exception
becomes an internal error naming it. ``kaizen plugins build`` builds the
component; :func:`call` runs a tool natively, the way the host does, for
unit tests (``kaizen plugins test``).

A hook plugin decorates functions with ``@hook("PreToolUse",
matcher="Bash")``; each takes the event's payload as a dict and returns
None (carry on) or a :class:`Decision` (see :mod:`kaizen_sdk.hooks`);
:func:`handle` runs an event natively for unit tests. A plugin may have
tools and hooks both (``kinds = ["tool", "hook"]``).

A planner plugin (``kinds = ["planner"]``) decorates one class with
``@planner``; its ``plan`` shapes each model call (see
:mod:`kaizen_sdk.planning`).

Host interfaces: :mod:`kaizen_sdk.log` and :mod:`kaizen_sdk.session`
(always granted), :mod:`kaizen_sdk.http` (with an ``http`` grant) and the
raw ``interaction``, ``process``, ``agent``, ``parallel`` and ``llm``
modules in :mod:`kaizen_sdk.host` (with their grants). The build imports an
interface only when the manifest requests it (session: when the code
mentions ``kaizen_sdk.session``).

In a component only modules imported at build time exist: import what a
tool uses at the top of the module, never inside the function.
"""

# Every submodule is imported here, not on first use: in a component only
# modules imported at build time exist (componentize-py snapshots them).
from . import convert, hooks, host, http, log, planning, registry, schema, session
from .errors import ErrorKind, HostUnavailable, ToolError
from .hooks import EVENTS, Decision, HookRegistry, default_hooks, handle, hook
from .output import Image, Output, Text
from .planning import Plan, PlannerContext, Verdict, planner
from .registry import CallContext, Danger, Registry, Tool, ToolSpec, call, default_registry, tool

__all__ = [
    "CallContext",
    "Danger",
    "Decision",
    "EVENTS",
    "ErrorKind",
    "HookRegistry",
    "HostUnavailable",
    "Image",
    "Output",
    "Plan",
    "PlannerContext",
    "Registry",
    "Text",
    "convert",
    "host",
    "http",
    "log",
    "planner",
    "planning",
    "registry",
    "schema",
    "session",
    "Tool",
    "ToolError",
    "ToolSpec",
    "Verdict",
    "call",
    "default_hooks",
    "default_registry",
    "handle",
    "hook",
    "hooks",
    "tool",
]
