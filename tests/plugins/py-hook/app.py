"""`py-hook`: a hook plugin in Python, built with componentize-py against
the `hook` world of kaizen:plugin@0.1.0 (which imports only `log`).

It does nothing unless the workspace holds `.test-hooks-on` (other suites
load every test plugin). Before Bash runs `echo WORDS`, it rewrites the command to shout the words
and tells the model so; after Bash returns output with SECRET in it, it
tells the model not to repeat it; it refuses commands naming `curl`.

Build: componentize-py -d wit/v0.1.0 -w hook componentize app \
           -p tests/plugins/py-hook -o py-hook.wasm
"""

import json
import os

from wit_world import exports
from wit_world.exports.hooks import (
    HookAction_Continue,
    HookAction_Deny,
    HookDecision,
    HookEvent,
    Subscription,
)


def carry_on(context=None, updated_input=None):
    return HookDecision(
        action=HookAction_Continue(),
        updated_input=updated_input,
        added_context=context,
    )


class Hooks(exports.Hooks):
    def subscriptions(self) -> list[Subscription]:
        return [
            Subscription(event=HookEvent.PRE_TOOL_USE, matcher="Bash", priority=100),
            Subscription(event=HookEvent.POST_TOOL_USE, matcher="Bash", priority=100),
        ]

    def handle(self, event: HookEvent, payload: str) -> HookDecision:
        data = json.loads(payload)
        if not os.path.exists(os.path.join(data.get("cwd", ""), ".test-hooks-on")):
            return carry_on()
        if event == HookEvent.PRE_TOOL_USE:
            tool_input = data.get("tool_input", {})
            command = tool_input.get("command", "")
            if "curl" in command.split():
                return HookDecision(
                    action=HookAction_Deny("py-hook: no network clients"),
                    updated_input=None,
                    added_context=None,
                )
            if command.startswith("echo "):
                tool_input["command"] = "echo " + command[len("echo "):].upper()
                return carry_on("py-hook: shouted the echo", json.dumps(tool_input))
        if event == HookEvent.POST_TOOL_USE:
            output = data.get("tool_response", {}).get("content", "")
            if "SECRET" in output:
                return carry_on("py-hook: the output holds a secret; do not repeat it")
        return carry_on()
