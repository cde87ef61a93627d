"""Planner plugins: a class that shapes each THINK step of a run.

A planner never ends a run (the loop does, when a response has no tool
calls). Before each model call it may add to the system prompt for that
call, add user messages, set the todo list and ask for several candidate
responses; it picks one of the candidates, and it may send a final answer
back for a bounded revision. A planner plugin's ``app.py``::

    from kaizen_sdk import Plan, PlannerContext, planner

    @planner
    class StayFocused:
        def plan(self, ctx: PlannerContext) -> Plan:
            return Plan(system_additions=[f"Remember the task: {ctx.task}"])

Only ``plan`` is required: by default a planner takes the first candidate
(``select``) and accepts every answer (``verify``). The manifest says
``kinds = ["planner"]``; a planner that asks the model itself also requests
``llm = true`` and uses ``kaizen_sdk.host.llm``.

The host keeps one instance per run, so the planner object may keep state
in its attributes. A method that raises is a bug: the traceback goes to the
host's log, the call traps, and the host reports the planner as failed and
goes on as plain ReAct (there is no safe answer to make up for it).

Everything here is plain Python: unit tests make a :class:`PlannerContext`
and call the planner's methods directly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional

#: The todo statuses ``TodoWrite`` takes.
TODO_STATUSES = ("pending", "in_progress", "completed")


@dataclass
class PlannerContext:
    """What the planner sees before a model call."""

    #: The run's task: its first user message.
    task: str
    #: 1-based number of the coming model call.
    cycle: int = 1
    #: The conversation so far, oldest first: dicts ``{"role", "content":
    #: [block, ...]}`` with blocks ``{"type": "text", "text"}``,
    #: ``{"type": "tool_use", "id", "name", "arguments"}`` (the arguments as
    #: the model wrote them, JSON text) and ``{"type": "tool_result",
    #: "tool_use_id", "content", "is_error"}``.
    transcript: list[dict[str, Any]] = field(default_factory=list)
    #: The tools the model may call.
    tools: list[str] = field(default_factory=list)
    #: The planner's settings from the operator's config (``[planners.NAME]``).
    settings: dict[str, Any] = field(default_factory=dict)
    #: The session's id.
    session_id: str = ""

    def setting(self, key: str, default: Any) -> Any:
        """Setting ``key``, or ``default`` when it is missing or of another
        type than ``default`` (an int setting also takes a whole float)."""
        value = self.settings.get(key, default)
        if isinstance(default, bool) or not isinstance(default, (int, float)):
            return value if isinstance(value, type(default)) else default
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return default
        if isinstance(default, int) and not float(value).is_integer():
            return default
        return type(default)(value)

    @classmethod
    def from_json(
        cls, session_id: str, cycle: int, task: str, transcript: str, tools: list[str], settings: str
    ) -> "PlannerContext":
        """The context from the contract's fields (``transcript`` and
        ``settings`` as JSON text; what does not parse is left empty)."""
        return cls(
            task=task,
            cycle=cycle,
            transcript=_parsed(transcript, list),
            tools=list(tools),
            settings=_parsed(settings, dict),
            session_id=session_id,
        )


def _parsed(text: str, kind: type) -> Any:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return kind()
    return value if isinstance(value, kind) else kind()


@dataclass
class Plan:
    """How to run the coming model call; ``Plan()`` changes nothing."""

    #: Text appended to the system prompt of this call only.
    system_additions: list[str] = field(default_factory=list)
    #: User messages added to the conversation before the call (they stay).
    injected: list[str] = field(default_factory=list)
    #: How many candidate responses to ask for (0 and 1: the usual single
    #: call); the host caps it (``[planner] max-candidates``).
    candidates: int = 1
    #: A new todo list, as ``TodoWrite`` takes it (dicts ``{"content",
    #: "status", "activeForm"}``), or None to leave it as it is.
    todos: Optional[list[dict[str, Any]]] = None

    def __post_init__(self) -> None:
        for name in ("system_additions", "injected"):
            value = getattr(self, name)
            if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
                raise TypeError(f"Plan.{name} is a list of str, got {value!r}")
        if isinstance(self.candidates, bool) or not isinstance(self.candidates, int) or not 0 <= self.candidates < 2**32:
            raise TypeError(f"Plan.candidates is a count (an int from 0), got {self.candidates!r}")
        if self.todos is not None:
            if not isinstance(self.todos, list):
                raise TypeError(f"Plan.todos is a list of dicts or None, got {type(self.todos).__name__}")
            for item in self.todos:
                if not isinstance(item, dict) or item.get("status") not in TODO_STATUSES:
                    raise ValueError(
                        f"each todo is a dict with a `status` of {', '.join(TODO_STATUSES)}; got {item!r}"
                    )

    def todos_json(self) -> Optional[str]:
        """The todo list as the contract carries it, JSON text."""
        return None if self.todos is None else json.dumps(self.todos)


@dataclass(frozen=True)
class Verdict:
    """What to do with a final answer: :meth:`accept` it, or :meth:`revise`
    (one more turn, with this user message first; the host bounds how many
    a run gets)."""

    #: The message asking for a revision, or None to accept.
    revision: Optional[str] = None

    @classmethod
    def accept(cls) -> "Verdict":
        """The answer stands; the run ends."""
        return cls()

    @classmethod
    def revise(cls, message: str) -> "Verdict":
        """One more turn, with ``message`` added as a user message."""
        if not isinstance(message, str) or not message.strip():
            raise ValueError("Verdict.revise needs a message saying what to change")
        return cls(message)


def message_text(message: dict[str, Any]) -> str:
    """The text blocks of a transcript message (or candidate), joined."""
    blocks = message.get("content") if isinstance(message, dict) else None
    if not isinstance(blocks, list):
        return ""
    return "\n".join(
        block["text"]
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
    )


def tool_calls(message: dict[str, Any]) -> list[tuple[str, Any]]:
    """The ``(name, arguments)`` of a message's tool calls, in order; the
    arguments parsed from JSON, or the text as written when it does not
    parse."""
    blocks = message.get("content") if isinstance(message, dict) else None
    calls = []
    for block in blocks if isinstance(blocks, list) else []:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            arguments = block.get("arguments", "")
            try:
                arguments = json.loads(arguments)
            except (TypeError, ValueError):
                pass
            calls.append((str(block.get("name", "")), arguments))
    return calls


class _Slot:
    """The plugin's one planner."""

    def __init__(self) -> None:
        self.planner: Any = None

    def register(self, planner: Any) -> None:
        if self.planner is not None:
            raise RuntimeError(
                f"a plugin has one planner; {type(self.planner).__name__} is registered already "
                f"and {type(planner).__name__} is another"
            )
        if not callable(getattr(planner, "plan", None)):
            raise TypeError(f"{type(planner).__name__} has no plan(self, ctx) method; a planner needs one")
        self.planner = planner

    def plan(self, ctx: PlannerContext) -> Plan:
        plan = self.planner.plan(ctx)
        if not isinstance(plan, Plan):
            raise TypeError(f"{type(self.planner).__name__}.plan returned {plan!r}, not a Plan")
        return plan

    def select(self, ctx: PlannerContext, candidates: list[dict[str, Any]]) -> int:
        select = getattr(self.planner, "select", None)
        if select is None:
            return 0
        chosen = select(ctx, candidates)
        if isinstance(chosen, bool) or not isinstance(chosen, int) or not 0 <= chosen < len(candidates):
            raise ValueError(
                f"{type(self.planner).__name__}.select returned {chosen!r}; "
                f"it returns an index below {len(candidates)}"
            )
        return chosen

    def verify(self, ctx: PlannerContext, answer: str) -> Verdict:
        verify = getattr(self.planner, "verify", None)
        if verify is None:
            return Verdict.accept()
        verdict = verify(ctx, answer)
        if not isinstance(verdict, Verdict):
            raise TypeError(f"{type(self.planner).__name__}.verify returned {verdict!r}, not a Verdict")
        return verdict


#: The planner ``@planner`` registered, for the component.
default_planner = _Slot()


def planner(cls: type) -> type:
    """Registers the class as the plugin's planner (one instance, made now:
    in a component, at build time). Returns the class unchanged."""
    default_planner.register(cls())
    return cls
