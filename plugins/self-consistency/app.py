"""`self-consistency`: sample several responses for a step and keep the
one most of them agree on (Wang et al., "Self-Consistency Improves Chain of
Thought Reasoning in Language Models", 2022), applied to an agent's steps.

For the first `max-depth` steps of a run it asks for `samples` candidate
responses (one request with OpenAI's `n`; parallel requests elsewhere).
Each candidate is reduced to the action it takes: its tool calls (names
and arguments, in any order), or for an answer, its text without case,
spacing or trailing punctuation. The action most candidates take wins; a
tie goes to the earliest. Unlike tree-of-thoughts there is no evaluator:
the vote costs nothing beyond the candidates.

Settings (`[planners.self-consistency]`): `samples` (3; 1 to 8, where 1
turns sampling off) and `max-depth` (3; 0 means every step).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, Hashable

from kaizen_sdk import Plan, PlannerContext, log, planner
from kaizen_sdk.planning import message_text, tool_calls

SAMPLES = 3
MAX_DEPTH = 3
MAX_SAMPLES = 8


def action(candidate: dict[str, Any]) -> Hashable:
    """What a candidate does, in a form equal candidates share."""
    calls = tool_calls(candidate)
    if calls:
        return ("tools",) + tuple(
            sorted((name, json.dumps(arguments, sort_keys=True)) for name, arguments in calls)
        )
    text = re.sub(r"\s+", " ", message_text(candidate)).strip().lower()
    return ("answer", text.rstrip(".!"))


def majority(candidates: list[dict[str, Any]]) -> int:
    """The index of the first candidate whose action the most share."""
    actions = [action(candidate) for candidate in candidates]
    votes = Counter(actions)
    best = max(votes.values())
    return next(i for i, act in enumerate(actions) if votes[act] == best)


@planner
class SelfConsistency:
    def plan(self, ctx: PlannerContext) -> Plan:
        samples = min(max(ctx.setting("samples", SAMPLES), 1), MAX_SAMPLES)
        depth = ctx.setting("max-depth", MAX_DEPTH)
        if depth > 0 and ctx.cycle > depth:
            return Plan()
        return Plan(candidates=samples)

    def select(self, ctx: PlannerContext, candidates: list[dict[str, Any]]) -> int:
        chosen = majority(candidates)
        actions = [action(candidate) for candidate in candidates]
        log.debug(
            f"cycle {ctx.cycle}: {actions.count(actions[chosen])} of {len(candidates)} candidates agree; "
            f"keeping candidate {chosen}"
        )
        return chosen
