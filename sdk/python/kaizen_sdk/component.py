"""The component's ``tools``, ``hooks`` and ``planning`` exports, made
from the registered tools, hooks and planner.

componentize-py is pointed at this module (``componentize
kaizen_sdk.component``), not at the author's code: it imports the author's
module ``app`` (which registers its tools with ``@tool``, its hooks with
``@hook`` and its planner with ``@planner``) and defines the ``Tools``,
``Hooks`` and ``Planning`` classes the generated bindings expect, each when
the world exports that interface (the build
chose the world from ``kinds``). componentize-py runs this
import once at build time and snapshots the result, so the specs and
schemas below are computed then, and a mistake in a type hint fails the
build rather than a call.

Only importable inside the build (it needs the generated ``wit_world``).
"""

from __future__ import annotations

import importlib
import json
import traceback

from componentize_py_types import Err
from wit_world import exports

from . import _bindings, host, http, log, session  # noqa: F401 -- see below
from .errors import ErrorKind, ToolError
from .hooks import EVENTS, default_hooks
from .output import Text
from .planning import PlannerContext, default_planner
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

_EXPORTS_TOOLS = hasattr(exports, "Tools")
_EXPORTS_HOOKS = hasattr(exports, "Hooks")
_EXPORTS_PLANNING = hasattr(exports, "Planning")

if _EXPORTS_TOOLS and not len(default_registry):
    raise RuntimeError(
        f"{APP_MODULE}.py registered no tools: decorate at least one function with @kaizen_sdk.tool, "
        f'or take "tool" out of kinds in plugin.toml'
    )
if _EXPORTS_HOOKS and not len(default_hooks):
    raise RuntimeError(
        f"{APP_MODULE}.py registered no hooks: decorate at least one function with "
        f'@kaizen_sdk.hook("PreToolUse", ...), or take "hook" out of kinds in plugin.toml'
    )
if _EXPORTS_PLANNING and default_planner.planner is None:
    raise RuntimeError(
        f"{APP_MODULE}.py registered no planner: decorate a class with @kaizen_sdk.planner, "
        f'or take "planner" out of kinds in plugin.toml'
    )
if default_planner.planner is not None and not _EXPORTS_PLANNING:
    raise RuntimeError(f'{APP_MODULE}.py registers a planner: add "planner" to kinds in plugin.toml')
if len(default_registry) and not _EXPORTS_TOOLS:
    raise RuntimeError(f'{APP_MODULE}.py registers tools: add "tool" to kinds in plugin.toml')
if len(default_hooks) and not _EXPORTS_HOOKS:
    raise RuntimeError(f'{APP_MODULE}.py registers hooks: add "hook" to kinds in plugin.toml')

_types = _bindings.kaizen_types()
if _EXPORTS_TOOLS:
    from wit_world.exports import tools as wit

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


if _EXPORTS_HOOKS:
    from wit_world.exports import hooks as wit_hooks

    # Claude Code's names <-> the generated enum (`pre-tool-use` ->
    # PRE_TOOL_USE); an older contract lacks some events.
    _EVENT_TO_WIT = {
        name: getattr(wit_hooks.HookEvent, kebab.upper().replace("-", "_"))
        for name, kebab in EVENTS.items()
        if hasattr(wit_hooks.HookEvent, kebab.upper().replace("-", "_"))
    }
    _EVENT_FROM_WIT = {member: name for name, member in _EVENT_TO_WIT.items()}
    for _sub in default_hooks.subscriptions():
        if _sub.event not in _EVENT_TO_WIT:
            raise RuntimeError(f"the contract this plugin is built against has no {_sub.event} event")
    _SUBSCRIPTIONS = [
        wit_hooks.Subscription(event=_EVENT_TO_WIT[sub.event], matcher=sub.matcher, priority=sub.priority)
        for sub in default_hooks.subscriptions()
    ]

    def _action(decision):
        if decision.action == "allow":
            return wit_hooks.HookAction_Allow()
        if decision.action == "deny":
            return wit_hooks.HookAction_Deny(decision.reason)
        if decision.action == "ask":
            return wit_hooks.HookAction_Ask(decision.reason)
        if decision.action == "stop":
            return wit_hooks.HookAction_Stop(decision.reason)
        return wit_hooks.HookAction_Continue()

    def _carry_on():
        return wit_hooks.HookDecision(
            action=wit_hooks.HookAction_Continue(),
            updated_input=None,
            added_context=None,
            updated_output=None,
            system_message=None,
        )

    class Hooks(exports.Hooks):
        """``kaizen:plugin/hooks``: the registered hooks, by event."""

        def subscriptions(self) -> list:
            return list(_SUBSCRIPTIONS)

        def handle(self, event, payload: str):
            try:
                decision = default_hooks.handle(_EVENT_FROM_WIT[event], payload)
                return wit_hooks.HookDecision(
                    action=_action(decision),
                    updated_input=decision.updated_input_json(),
                    added_context=decision.added_context,
                    updated_output=decision.updated_output,
                    system_message=decision.system_message,
                )
            except BaseException as exc:  # noqa: BLE001 -- a bug here must not trap
                log.error(f"internal error in the Kaizen Python kit's hooks: {type(exc).__name__}: {exc}")
                return _carry_on()


if _EXPORTS_PLANNING:
    from wit_world.exports import planning as wit_planning

    def _context(ctx) -> PlannerContext:
        return PlannerContext.from_json(
            ctx.session_id, ctx.cycle, ctx.task, ctx.transcript, ctx.tools, ctx.settings
        )

    def _failed(stage: str, exc: BaseException) -> None:
        # Re-raised after this: the call traps and the host reports the
        # planner as failed, with this traceback in its log.
        log.error(f"the planner's {stage} failed:\n{''.join(traceback.format_exception(exc)).rstrip()}")

    class Planning(exports.Planning):
        """``kaizen:plugin/planning``: the registered planner."""

        def plan(self, ctx):
            try:
                plan = default_planner.plan(_context(ctx))
            except BaseException as exc:
                _failed("plan", exc)
                raise
            return wit_planning.ThinkPlan(
                system_additions=list(plan.system_additions),
                injected=list(plan.injected),
                candidates=plan.candidates,
                todos=plan.todos_json(),
            )

        def select(self, ctx, candidates: list[str]) -> int:
            try:
                parsed = [json.loads(candidate) for candidate in candidates]
                return default_planner.select(_context(ctx), parsed)
            except BaseException as exc:
                _failed("select", exc)
                raise

        def verify(self, ctx, final_answer: str):
            try:
                verdict = default_planner.verify(_context(ctx), final_answer)
            except BaseException as exc:
                _failed("verify", exc)
                raise
            if verdict.revision is None:
                return wit_planning.Verdict_Accept()
            return wit_planning.Verdict_Revise(verdict.revision)
