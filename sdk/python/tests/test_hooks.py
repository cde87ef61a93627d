"""Hooks: the decorator, event names, matchers, merging decisions, failing
open, and the component glue (against fake bindings)."""

import json
import sys
import types
import unittest
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

KIT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(KIT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kaizen_sdk import EVENTS, Decision, HookRegistry  # noqa: E402
from kaizen_sdk.hooks import default_hooks  # noqa: E402
from shipped_contract import contract_wit  # noqa: E402

PRE_BASH = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"}}


class Decorator(unittest.TestCase):
    def test_registers_and_returns_the_function(self):
        hooks = HookRegistry()

        def guard(payload):
            return None

        self.assertIs(hooks.hook("PreToolUse", matcher="Bash", priority=200)(guard), guard)
        self.assertEqual(
            [(s.event, s.matcher, s.priority) for s in hooks.subscriptions()], [("PreToolUse", "Bash", 200)]
        )

    def test_unknown_events_list_the_valid_ones(self):
        with self.assertRaises(ValueError) as caught:
            HookRegistry().hook("PreToolCall")
        self.assertIn("unknown hook event 'PreToolCall'", str(caught.exception))
        self.assertIn("PreToolUse, PostToolUse", str(caught.exception))
        self.assertIn("UserPromptSubmit", str(caught.exception))

    def test_bad_options_fail_at_decoration(self):
        hooks = HookRegistry()
        with self.assertRaisesRegex(TypeError, "needs the event"):
            hooks.hook(lambda p: None)
        with self.assertRaisesRegex(ValueError, "32-bit int"):
            hooks.hook("Stop", priority=2**31)
        with self.assertRaisesRegex(ValueError, "not a valid regular expression"):
            hooks.hook("PreToolUse", matcher="Bash(")(lambda p: None)

        async def later(payload):
            return None

        with self.assertRaisesRegex(TypeError, "async functions are not supported"):
            hooks.hook("Stop")(later)
        self.assertEqual(len(hooks), 0)

    def test_every_event_maps_to_the_contract(self):
        self.assertEqual(len(EVENTS), 17)
        self.assertEqual(EVENTS["UserPromptSubmit"], "user-prompt")
        self.assertEqual(EVENTS["PostToolUseFailure"], "post-tool-use-failure")
        self.assertEqual(EVENTS["PermissionRequest"], "permission-request")
        wit = (contract_wit() / "hook.wit").read_text()
        enum = wit.split("enum hook-event {", 1)[1].split("}", 1)[0]
        members = [line.strip().rstrip(",") for line in enum.splitlines() if line.strip().endswith(",")]
        self.assertEqual(sorted(members), sorted(EVENTS.values()))


class Decisions(unittest.TestCase):
    def test_constructors(self):
        self.assertEqual(Decision.proceed().action, "continue")
        self.assertEqual(Decision.allow(system_message="ok").system_message, "ok")
        self.assertEqual((Decision.deny("no").action, Decision.deny("no").reason), ("deny", "no"))
        self.assertEqual(Decision.ask("sure?").reason, "sure?")
        self.assertEqual(Decision.stop("done", added_context="c").added_context, "c")
        with self.assertRaisesRegex(TypeError, "needs a reason"):
            Decision.deny(None)
        with self.assertRaisesRegex(TypeError, "a dict"):
            Decision.proceed(updated_input='{"command": "ls"}')
        with self.assertRaises(TypeError):
            Decision.proceed(bogus=1)

    def test_updated_input_is_json(self):
        decision = Decision.allow(updated_input={"command": "ls -l", "n": 1, "é": True})
        self.assertEqual(json.loads(decision.updated_input_json()), {"command": "ls -l", "n": 1, "é": True})
        self.assertIsNone(Decision.allow().updated_input_json())


class Handle(unittest.TestCase):
    def setUp(self):
        self.hooks = HookRegistry()

    def test_no_hook_is_continue(self):
        self.assertEqual(self.hooks.handle("PreToolUse", PRE_BASH), Decision.proceed())

    def test_only_the_events_hooks_run_and_matchers_apply(self):
        ran = []
        self.hooks.hook("PreToolUse", matcher="Bash")(lambda p: ran.append("bash"))
        self.hooks.hook("PreToolUse", matcher="Edit|Write")(lambda p: ran.append("edit"))
        self.hooks.hook("PreToolUse", matcher="^B.*h$")(lambda p: ran.append("regex"))
        self.hooks.hook("PreToolUse", matcher="*")(lambda p: ran.append("star"))
        self.hooks.hook("PostToolUse")(lambda p: ran.append("post"))
        self.hooks.hook("Stop", matcher="x")(lambda p: ran.append("stop"))
        self.hooks.handle("PreToolUse", json.dumps(PRE_BASH))
        self.assertEqual(ran, ["bash", "regex", "star"])
        self.hooks.handle("Stop", {})  # a matcher never matches an event without a value
        self.assertEqual(ran, ["bash", "regex", "star"])

    def test_strongest_action_wins_with_the_first_reason_of_its_kind(self):
        self.hooks.hook("PreToolUse")(lambda p: Decision.allow())
        self.hooks.hook("PreToolUse")(lambda p: Decision.deny("first"))
        self.hooks.hook("PreToolUse")(lambda p: Decision.ask("ask"))
        self.hooks.hook("PreToolUse")(lambda p: Decision.deny("second"))
        self.assertEqual(self.hooks.handle("PreToolUse", PRE_BASH), Decision.deny("first"))
        self.hooks.hook("PreToolUse")(lambda p: Decision.stop("halt"))
        self.assertEqual(self.hooks.handle("PreToolUse", PRE_BASH).reason, "halt")

    def test_priority_orders_and_later_hooks_see_the_updated_input(self):
        seen = []
        self.hooks.hook("PreToolUse", priority=0)(lambda p: seen.append(p["tool_input"]["command"]))
        self.hooks.hook("PreToolUse", priority=10)(
            lambda p: Decision.proceed(updated_input={"command": p["tool_input"]["command"] + " -l"})
        )
        self.hooks.hook("PreToolUse", priority=5)(
            lambda p: Decision.proceed(updated_input={"command": p["tool_input"]["command"] + " -a"})
        )
        decision = self.hooks.handle("PreToolUse", PRE_BASH)
        self.assertEqual(seen, ["ls -l -a"])
        self.assertEqual(decision.updated_input, {"command": "ls -l -a"})
        self.assertEqual(json.loads(decision.updated_input_json()), {"command": "ls -l -a"})
        self.assertEqual(PRE_BASH["tool_input"], {"command": "ls"})  # the caller's dict is untouched

    def test_texts_are_joined_and_the_last_output_wins(self):
        self.hooks.hook("PostToolUse")(lambda p: Decision.proceed(added_context="a", updated_output="x"))
        self.hooks.hook("PostToolUse")(
            lambda p: Decision.proceed(
                added_context="b", system_message=p["tool_response"]["content"], updated_output="y"
            )
        )
        payload = {"tool_name": "Read", "tool_response": {"content": "secret"}}
        decision = self.hooks.handle("PostToolUse", payload)
        self.assertEqual(
            (decision.added_context, decision.system_message, decision.updated_output), ("a\nb", "x", "y")
        )

    def test_a_failing_hook_is_logged_and_gives_no_decision(self):
        def broken(payload):
            return 1 / 0

        self.hooks.hook("PreToolUse", priority=9)(broken)
        self.hooks.hook("PreToolUse")(lambda p: "deny")
        self.hooks.hook("PreToolUse")(lambda p: Decision.proceed(updated_input={"s": {1, 2}}))
        self.hooks.hook("PreToolUse")(lambda p: Decision.ask("still asked"))
        with self.assertLogs("kaizen_sdk.plugin", "ERROR") as logs:
            decision = self.hooks.handle("PreToolUse", PRE_BASH)
        self.assertEqual(decision, Decision.ask("still asked"))
        self.assertEqual(len(logs.output), 3)
        self.assertIn("hook Handle.test_a_failing_hook_is_logged_and_gives_no_decision.<locals>.broken "
                      "failed on PreToolUse", logs.output[0])
        self.assertIn("ZeroDivisionError", logs.output[0])
        self.assertIn("Traceback", logs.output[0])
        self.assertIn("it returned str", logs.output[1])
        self.assertIn("not JSON serializable", logs.output[2])

    def test_a_payload_that_is_not_json_is_empty(self):
        seen = []
        self.hooks.hook("Stop")(seen.append)
        with self.assertLogs("kaizen_sdk.plugin", "WARNING"):
            self.hooks.handle("Stop", "{nope")
        self.assertEqual(seen, [{}])

    def test_contract_names_are_accepted_too(self):
        self.hooks.hook("user-prompt")(lambda p: Decision.deny(p["prompt"]))
        self.assertEqual(self.hooks.handle("UserPromptSubmit", {"prompt": "no"}).reason, "no")


def _fake_bindings(kinds):
    """``wit_world`` as componentize-py makes it for a world with ``kinds``,
    and an ``app`` with a tool and two hooks."""
    import test_tool

    from kaizen_sdk.registry import default_registry

    modules, _ = test_tool._fake_bindings()
    default_registry._tools.clear()  # its app registered a tool; ours are below

    def record(name, *fields):
        return dataclass(type(name, (), {"__annotations__": {f: object for f in fields}}))

    hooks = types.ModuleType("wit_world.exports.hooks")
    hooks.HookEvent = Enum("HookEvent", [kebab.upper().replace("-", "_") for kebab in EVENTS.values()])
    hooks.Subscription = record("Subscription", "event", "matcher", "priority")
    hooks.HookDecision = record(
        "HookDecision", "action", "updated_input", "added_context", "updated_output", "system_message"
    )
    hooks.HookAction_Continue = record("HookAction_Continue")
    hooks.HookAction_Allow = record("HookAction_Allow")
    for name in ("Deny", "Ask", "Stop"):
        setattr(hooks, f"HookAction_{name}", record(f"HookAction_{name}", "value"))

    exports = modules["wit_world.exports"]
    if "tool" not in kinds:
        del exports.Tools
        del modules["wit_world.exports.tools"]
    if "hook" in kinds:
        exports.Hooks = type("Hooks", (), {})
        exports.hooks = hooks
        modules["wit_world.exports.hooks"] = hooks

    app = types.ModuleType("app")
    source = (
        "from kaizen_sdk import Decision, hook, tool\n"
        "@hook('PreToolUse', matcher='Bash', priority=200)\n"
        "def no_rm(payload):\n"
        "    if 'rm -rf' in payload['tool_input']['command']:\n"
        "        return Decision.deny('no rm -rf', system_message='refused')\n"
        "    return Decision.proceed(updated_input={'command': payload['tool_input']['command'] + ' -v'})\n"
        "@hook('UserPromptSubmit')\n"
        "def crash(payload):\n"
        "    raise RuntimeError('boom')\n"
    )
    if "tool" in kinds:
        source += "@tool\ndef echo(text: str) -> str:\n    '''Echoes.'''\n    return text\n"
    exec(source, app.__dict__)
    return modules, app


class ComponentGlue(unittest.TestCase):
    """kaizen_sdk.component against fake bindings for hook worlds."""

    def load(self, kinds):
        from kaizen_sdk import registry

        for reg, attr in ((registry.default_registry, "_tools"), (default_hooks, "_hooks")):
            store = getattr(reg, attr)
            saved = store.copy()
            self.addCleanup(lambda store=store, saved=saved: (store.clear(), store.update(saved)) if isinstance(
                store, dict) else store.__setitem__(slice(None), saved))
            store.clear()
        modules, app = _fake_bindings(kinds)
        self.log = modules["wit_world.imports.log"]
        self.wit = modules.get("wit_world.exports.hooks")
        import test_tool

        return test_tool.import_component(self, modules, app)

    def test_a_hook_plugin_exports_hooks_only(self):
        component = self.load(["hook"])
        self.assertFalse(hasattr(component, "Tools"))
        subs = component.Hooks().subscriptions()
        self.assertEqual(
            [(s.event.name, s.matcher, s.priority) for s in subs],
            [("PRE_TOOL_USE", "Bash", 200), ("USER_PROMPT", None, 0)],
        )

    def test_decisions_in_the_contracts_types(self):
        component = self.load(["hook"])
        E = self.wit.HookEvent
        payload = {"tool_name": "Bash", "tool_input": {"command": "rm -rf /"}}
        out = component.Hooks().handle(E.PRE_TOOL_USE, json.dumps(payload))
        self.assertEqual(out.action, self.wit.HookAction_Deny("no rm -rf"))
        self.assertEqual(out.system_message, "refused")
        payload["tool_input"]["command"] = "ls"
        out = component.Hooks().handle(E.PRE_TOOL_USE, json.dumps(payload))
        self.assertEqual(out.action, self.wit.HookAction_Continue())
        self.assertEqual(json.loads(out.updated_input), {"command": "ls -v"})
        payload["tool_name"] = "Read"
        out = component.Hooks().handle(E.PRE_TOOL_USE, json.dumps(payload))
        self.assertEqual((out.action, out.updated_input), (self.wit.HookAction_Continue(), None))

    def test_a_raising_hook_continues_and_logs(self):
        component = self.load(["hook"])
        out = component.Hooks().handle(self.wit.HookEvent.USER_PROMPT, '{"prompt": "hi"}')
        self.assertEqual(out.action, self.wit.HookAction_Continue())
        ((level, message),) = self.log.lines
        self.assertEqual(level, "ERROR")
        self.assertIn("hook crash failed on UserPromptSubmit", message)
        self.assertIn("RuntimeError: boom", message)

    def test_tools_and_hooks_together(self):
        component = self.load(["tool", "hook"])
        self.assertEqual([s.name for s in component.Tools().tools()], ["Echo"])
        self.assertEqual(len(component.Hooks().subscriptions()), 2)

    def test_hooks_without_the_hook_kind_fail_the_build(self):
        with self.assertRaisesRegex(RuntimeError, 'registers hooks: add "hook" to kinds'):
            self.load(["tool"])


if __name__ == "__main__":
    unittest.main()
