"""The ``@hook`` decorator, :class:`Decision` and the dispatch of one event
to a plugin's hooks.

A hook plugin's ``app.py``::

    from kaizen_sdk import Decision, hook

    @hook("PreToolUse", matcher="Bash", priority=200)
    def no_rm_rf(payload: dict) -> Decision | None:
        if "rm -rf" in payload["tool_input"].get("command", ""):
            return Decision.deny("rm -rf is not allowed here")
        return None  # no opinion: carry on

Events have Claude Code's names (see :data:`EVENTS`); the payload is the
event's JSON object as a dict (the project's docs/hooks.md lists its
fields). The host calls the plugin once per event (at the highest priority
among its subscriptions that match); the kit then runs this plugin's hooks
for that event whose matcher matches, highest priority first (ties in
definition order), and merges their answers as the host merges plugins':

- the action: the strongest (stop > deny > ask > allow > continue); the
  reason is the first hook's of that kind;
- ``updated_input`` and ``updated_output``: the last one given; a later
  hook's payload already has them (in ``tool_input``, and in
  ``tool_response.content`` or ``error``);
- ``added_context`` and ``system_message``: joined with newlines, in order.

A hook that raises, or returns something other than ``None`` or a
Decision, fails open: the traceback goes to the host's log and that hook
gives no decision (continue). Whether a failing plugin should fail closed
is the operator's choice (``required = true`` in the host's config).

Everything here is plain Python: :func:`handle` runs an event natively,
the way the component does, for unit tests.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, TypeVar

from . import log

F = TypeVar("F", bound=Callable[..., Any])

#: Claude Code's (and Kaizen's) event names -> the contract's ``hook-event``.
EVENTS: dict[str, str] = {
    "SessionStart": "session-start",
    "SessionEnd": "session-end",
    "UserPromptSubmit": "user-prompt",
    "PreThink": "pre-think",
    "PostThink": "post-think",
    "PreToolUse": "pre-tool-use",
    "PostToolUse": "post-tool-use",
    "PostToolUseFailure": "post-tool-use-failure",
    "Stop": "stop",
    "PreCompact": "pre-compact",
    "PreCheckpoint": "pre-checkpoint",
    "PostCheckpoint": "post-checkpoint",
    "SubagentStart": "subagent-start",
    "SubagentStop": "subagent-stop",
    "Interrupt": "interrupt",
    "PermissionRequest": "permission-request",
    "Notification": "notification",
}
_BY_WIT = {wit: name for name, wit in EVENTS.items()}

#: The payload field a matcher matches, per event (as the host does); an
#: event not listed has no value, so a hook with a matcher never runs on it.
MATCHED_FIELD: dict[str, str] = {
    "PreToolUse": "tool_name",
    "PostToolUse": "tool_name",
    "PostToolUseFailure": "tool_name",
    "PermissionRequest": "tool_name",
    "SessionStart": "source",
    "SessionEnd": "reason",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
    "Notification": "notification_type",
    "PreCheckpoint": "reason",
    "PostCheckpoint": "reason",
    "PreCompact": "trigger",
}

#: Actions, weakest first.
ACTIONS = ("continue", "allow", "ask", "deny", "stop")
_STRENGTH = {action: i for i, action in enumerate(ACTIONS)}

_S32 = (-(2**31), 2**31 - 1)


def event_name(event: str) -> str:
    """``event`` as Claude Code names it; accepts the contract's name too
    (``pre-tool-use``). Raises ValueError listing the valid names."""
    if isinstance(event, str) and event in EVENTS:
        return event
    if isinstance(event, str) and event in _BY_WIT:
        return _BY_WIT[event]
    raise ValueError(f"unknown hook event {event!r}; the events are: {', '.join(EVENTS)}")


@dataclass(frozen=True)
class Decision:
    """A hook's answer to one event. Make one with :meth:`proceed`,
    :meth:`allow`, :meth:`deny`, :meth:`ask` or :meth:`stop`; each takes the
    optional fields as keywords."""

    #: ``continue``, ``allow``, ``deny``, ``ask`` or ``stop``.
    action: str = "continue"
    #: For deny, ask and stop: why (deny's goes to the model, stop's to the user).
    reason: Optional[str] = None
    #: For PreToolUse: the tool's new input (a dict; checked against the
    #: tool's schema again).
    updated_input: Optional[dict[str, Any]] = None
    #: Text added to the model's context with the event's result.
    added_context: Optional[str] = None
    #: For PostToolUse(Failure): what the model sees instead of the result's text.
    updated_output: Optional[str] = None
    #: A message for the user (not the model).
    system_message: Optional[str] = None

    def __post_init__(self) -> None:
        if self.action not in _STRENGTH:
            raise ValueError(f"hook action {self.action!r} is not one of {', '.join(ACTIONS)}")
        needs_reason = self.action in ("deny", "ask", "stop")
        if needs_reason and not isinstance(self.reason, str):
            raise TypeError(f"Decision.{self.action} needs a reason (a str), got {self.reason!r}")
        if not needs_reason and self.reason is not None:
            raise ValueError(f"a `{self.action}` decision carries no reason")
        if self.updated_input is not None and not isinstance(self.updated_input, dict):
            raise TypeError(
                f"updated_input is the tool's whole new input, a dict; got {type(self.updated_input).__name__}"
            )
        for name in ("added_context", "updated_output", "system_message"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a str, got {type(value).__name__}")

    @classmethod
    def proceed(cls, **fields: Any) -> "Decision":
        """No opinion: carry on (the contract's ``continue``)."""
        return cls("continue", None, **fields)

    @classmethod
    def allow(cls, **fields: Any) -> "Decision":
        """Let the tool call run without asking the user."""
        return cls("allow", None, **fields)

    @classmethod
    def deny(cls, reason: str, **fields: Any) -> "Decision":
        """Refuse the tool call (or the prompt; for Stop, send the model
        back to work); ``reason`` goes to the model."""
        return cls("deny", reason, **fields)

    @classmethod
    def ask(cls, reason: str, **fields: Any) -> "Decision":
        """Ask the user before going on; ``reason`` says why."""
        return cls("ask", reason, **fields)

    @classmethod
    def stop(cls, reason: str, **fields: Any) -> "Decision":
        """End the session; ``reason`` is reported to the user."""
        return cls("stop", reason, **fields)

    def updated_input_json(self) -> Optional[str]:
        """``updated_input`` as the JSON text the contract carries."""
        if self.updated_input is None:
            return None
        return json.dumps(self.updated_input, ensure_ascii=False)


@dataclass(frozen=True)
class Subscription:
    """One hook's subscription, as the component reports it."""

    event: str
    matcher: Optional[str]
    priority: int


@dataclass
class Hook:
    """One registered hook function."""

    func: Callable[[dict[str, Any]], Optional[Decision]]
    event: str
    matcher: Optional[str]
    priority: int
    _match: Optional[Callable[[Optional[str]], bool]] = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.func.__qualname__

    def matches(self, value: Optional[str]) -> bool:
        return self._match(value) if self._match is not None else True


def _matcher(text: Optional[str], where: str) -> tuple[Optional[str], Optional[Callable[[Optional[str]], bool]]]:
    """Claude Code's matcher syntax, as the host reads it: none, empty or
    ``*`` match everything; ``A|B`` (letters, digits, ``_``, ``-``) match
    those names exactly; anything else is a regular expression searched in
    the value. A matcher never matches an event without a value."""
    if text is None:
        return None, None
    if not isinstance(text, str):
        raise TypeError(f"{where}: matcher must be a str or None, got {type(text).__name__}")
    stripped = text.strip()
    if stripped in ("", "*"):
        return text, None
    if re.fullmatch(r"[A-Za-z0-9_|-]+", stripped):
        names = {name for name in stripped.split("|") if name}
        return text, lambda value: value is not None and value in names
    try:
        regex = re.compile(stripped)
    except re.error as err:
        raise ValueError(f"{where}: the matcher {text!r} is not a valid regular expression: {err}") from None
    return text, lambda value: value is not None and regex.search(value) is not None


class HookRegistry:
    """A plugin's hooks. The module-level :func:`hook` and :func:`handle`
    use the default registry, which the component exports; tests may make
    their own."""

    def __init__(self) -> None:
        self._hooks: list[Hook] = []

    def hook(self, event: str, matcher: Optional[str] = None, priority: int = 0) -> Callable[[F], F]:
        """Registers a function as a hook for ``event`` (Claude Code's name:
        ``"PreToolUse"``, ``"UserPromptSubmit"``, ...; see :data:`EVENTS`).

        - ``matcher``: for tool events a tool name, ``Edit|Write`` or a
          regular expression over the tool's name (for other events, what
          the host matches: SessionStart's ``source``, a sub-agent's type,
          ...); None matches everything.
        - ``priority``: higher runs first (ties in definition order). The
          host orders plugins by their highest matching priority; its
          levels are CRITICAL 300, HIGH 200, NORMAL 100, LOW 0.

        The function takes the payload (a dict) and returns None (carry on)
        or a :class:`Decision`; it is returned unchanged.
        """
        if callable(event) and not isinstance(event, str):
            raise TypeError('@hook needs the event: write @hook("PreToolUse"), not a bare @hook')
        name = event_name(event)
        if isinstance(priority, bool) or not isinstance(priority, int) or not _S32[0] <= priority <= _S32[1]:
            raise ValueError(f"hook priority must be a 32-bit int, got {priority!r}")

        def register(fn: F) -> F:
            where = f"hook {fn.__qualname__} ({name})"
            if not callable(fn):
                raise TypeError(f"@hook decorates a function, got {fn!r}")
            if inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn):
                raise TypeError(f"{where}: async functions are not supported; use a plain def")
            text, match = _matcher(matcher, where)
            entry = Hook(fn, name, text, priority, match)
            self._hooks.append(entry)
            try:
                fn.kaizen_hook = entry  # type: ignore[attr-defined]
            except (AttributeError, TypeError):  # a builtin or a bound method
                pass
            return fn

        return register

    def __iter__(self):
        return iter(self._hooks)

    def __len__(self) -> int:
        return len(self._hooks)

    def subscriptions(self) -> list[Subscription]:
        """One subscription per hook (identical ones once), in definition order."""
        seen: list[Subscription] = []
        for h in self._hooks:
            sub = Subscription(h.event, h.matcher, h.priority)
            if sub not in seen:
                seen.append(sub)
        return seen

    def handle(self, event: str, payload: str | bytes | dict[str, Any] | None = None) -> Decision:
        """Runs this plugin's hooks for ``event`` on ``payload`` (JSON text
        or a dict) the way the component does, and returns the merged
        Decision (see the module's docstring). Never raises for a hook's
        failure: it is logged and the hook gives no decision."""
        name = event_name(event)
        data = _parse(payload)
        key = MATCHED_FIELD.get(name)
        value = data.get(key) if key else None
        value = value if isinstance(value, str) else None
        chosen = [h for h in self._hooks if h.event == name and h.matches(value)]
        chosen.sort(key=lambda h: -h.priority)  # stable: ties in definition order

        action, reason = "continue", None
        updated_input: Optional[dict[str, Any]] = None
        updated_output: Optional[str] = None
        contexts: list[str] = []
        messages: list[str] = []
        for h in chosen:
            decision = _run(h, copy.deepcopy(data))
            if decision is None:
                continue
            if _STRENGTH[decision.action] > _STRENGTH[action]:
                action, reason = decision.action, decision.reason
            if decision.updated_input is not None:
                updated_input = decision.updated_input
                data["tool_input"] = copy.deepcopy(updated_input)
            if decision.updated_output is not None:
                updated_output = decision.updated_output
                response = data.get("tool_response")
                if isinstance(response, dict):
                    response["content"] = updated_output
                elif "error" in data:
                    data["error"] = updated_output
            if decision.added_context is not None:
                contexts.append(decision.added_context)
            if decision.system_message is not None:
                messages.append(decision.system_message)
        return Decision(
            action,
            reason,
            updated_input=updated_input,
            added_context="\n".join(contexts) if contexts else None,
            updated_output=updated_output,
            system_message="\n".join(messages) if messages else None,
        )


def _parse(payload: str | bytes | dict[str, Any] | None) -> dict[str, Any]:
    if payload is None:
        return {}
    if isinstance(payload, dict):
        return copy.deepcopy(payload)
    try:
        data = json.loads(payload)
    except ValueError as err:
        log.warn(f"the hook payload is not JSON ({err}); the hooks get an empty payload")
        return {}
    return data if isinstance(data, dict) else {}


def _run(h: Hook, payload: dict[str, Any]) -> Optional[Decision]:
    """The hook's Decision, or None (no opinion, or it failed: logged)."""
    try:
        result = h.func(payload)
        if result is None or isinstance(result, Decision):
            if result is not None and result.updated_input is not None:
                result.updated_input_json()  # not JSON: a failure of this hook
            return result
        raise TypeError(f"it returned {type(result).__name__}; a hook returns None or a kaizen_sdk.Decision")
    except BaseException as exc:  # noqa: BLE001 -- a hook must never trap
        if isinstance(exc, (KeyboardInterrupt, GeneratorExit)):
            raise
        trace = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        log.error(
            f"hook {h.name} failed on {h.event} and gave no decision (the kit fails open): "
            f"{type(exc).__name__}: {exc}\n{trace}"
        )
        return None


#: The registry the component exports.
default_hooks = HookRegistry()
hook = default_hooks.hook
handle = default_hooks.handle
