"""`py-planner`: a planner in Python, built with componentize-py against
the `planner` world of kaizen:plugin@0.1.4 (which imports only `log`).

Before each THINK it adds the task and the cycle to the system prompt; an
answer without text is sent back once for a real answer. Its instance
lives for the whole run, so it counts revisions in a module global.

Build: componentize-py -d <the newest contract in full> -w planner \
           componentize app -p tests/plugins/py-planner -o py-planner.wasm
(tests/artifacts' build puts the contract together from wit/.)
"""

import json

from wit_world import exports
from wit_world.exports.planning import (
    ThinkContext,
    ThinkPlan,
    Verdict,
    Verdict_Accept,
    Verdict_Revise,
)

_revised = False


class Planning(exports.Planning):
    def plan(self, ctx: ThinkContext) -> ThinkPlan:
        messages = json.loads(ctx.transcript)
        addition = (
            f"PY-PLANNER: cycle {ctx.cycle}, {len(messages)} message(s) so far. "
            f"Stay on the task: {ctx.task}"
        )
        return ThinkPlan(system_additions=[addition], injected=[], candidates=1, todos=None)

    def select(self, ctx: ThinkContext, candidates: list[str]) -> int:
        return 0

    def verify(self, ctx: ThinkContext, final_answer: str) -> Verdict:
        global _revised
        if final_answer.strip() or _revised:
            return Verdict_Accept()
        _revised = True
        return Verdict_Revise("PY-PLANNER: the answer was empty; answer the task in words.")
