"""Planners: the context, plans and verdicts, the one-planner rule, what a
planner's methods may return, and the component glue (against fake
bindings)."""

import json
import sys
import types
import unittest
from dataclasses import dataclass
from pathlib import Path

KIT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(KIT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kaizen_sdk import Plan, PlannerContext, Verdict, planning  # noqa: E402
from kaizen_sdk.planning import default_planner, message_text, tool_calls  # noqa: E402

ANSWER = {"role": "assistant", "content": [{"type": "text", "text": "Done."}]}
CALL = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Looking."},
        {"type": "tool_use", "id": "c1", "name": "Glob", "arguments": '{"pattern": "*.rs"}'},
        {"type": "tool_use", "id": "c2", "name": "Bash", "arguments": "not json"},
    ],
}


class Context(unittest.TestCase):
    def test_from_the_contracts_fields(self):
        ctx = PlannerContext.from_json("s1", 3, "Fix it.", json.dumps([ANSWER]), ["Read"], '{"k": 2}')
        self.assertEqual((ctx.session_id, ctx.cycle, ctx.task), ("s1", 3, "Fix it."))
        self.assertEqual((ctx.transcript, ctx.tools, ctx.settings), ([ANSWER], ["Read"], {"k": 2}))

    def test_what_does_not_parse_is_left_empty(self):
        ctx = PlannerContext.from_json("s", 1, "t", "{not json", [], "[1, 2]")
        self.assertEqual((ctx.transcript, ctx.settings), ([], {}))

    def test_settings_of_the_wrong_type_give_the_default(self):
        ctx = PlannerContext("t", settings={"n": 4, "f": 2.0, "half": 2.5, "s": 3, "b": 1, "no": True})
        self.assertEqual(ctx.setting("n", 3), 4)
        self.assertEqual(ctx.setting("f", 3), 2)
        self.assertEqual(ctx.setting("half", 3), 3)
        self.assertEqual(ctx.setting("s", "x"), "x")
        self.assertEqual(ctx.setting("b", False), False)
        self.assertEqual(ctx.setting("no", 7), 7)
        self.assertEqual(ctx.setting("missing", 1.5), 1.5)


class Messages(unittest.TestCase):
    def test_text_and_tool_calls(self):
        self.assertEqual(message_text(CALL), "Looking.")
        self.assertEqual(tool_calls(CALL), [("Glob", {"pattern": "*.rs"}), ("Bash", "not json")])
        self.assertEqual((message_text(None), tool_calls({"content": "x"})), ("", []))


class Plans(unittest.TestCase):
    def test_a_plain_plan_changes_nothing(self):
        plan = Plan()
        self.assertEqual((plan.system_additions, plan.injected, plan.candidates, plan.todos_json()), ([], [], 1, None))

    def test_fields_are_checked(self):
        for bad in (
            {"system_additions": "text"},
            {"injected": [1]},
            {"candidates": -1},
            {"candidates": True},
            {"todos": "x"},
        ):
            with self.assertRaises(TypeError, msg=bad):
                Plan(**bad)
        with self.assertRaisesRegex(ValueError, "status"):
            Plan(todos=[{"content": "a", "status": "done"}])
        todo = {"content": "a", "status": "pending", "activeForm": "Doing a"}
        self.assertEqual(json.loads(Plan(todos=[todo]).todos_json()), [todo])

    def test_verdicts(self):
        self.assertIsNone(Verdict.accept().revision)
        self.assertEqual(Verdict.revise("Say more.").revision, "Say more.")
        with self.assertRaises(ValueError):
            Verdict.revise("  ")


class Slot(unittest.TestCase):
    def setUp(self):
        self.slot = planning._Slot()

    def test_one_planner_per_plugin(self):
        class A:
            def plan(self, ctx):
                return Plan()

        self.slot.register(A())
        with self.assertRaisesRegex(RuntimeError, "one planner; A is registered already"):
            self.slot.register(A())

    def test_a_planner_needs_plan(self):
        with self.assertRaisesRegex(TypeError, "has no plan"):
            self.slot.register(object())

    def test_defaults_take_the_first_and_accept(self):
        class Minimal:
            def plan(self, ctx):
                return Plan()

        self.slot.register(Minimal())
        ctx = PlannerContext("t")
        self.assertEqual(self.slot.select(ctx, [ANSWER, ANSWER]), 0)
        self.assertEqual(self.slot.verify(ctx, "x"), Verdict.accept())

    def test_wrong_returns_name_the_method(self):
        class Wrong:
            def plan(self, ctx):
                return {"candidates": 2}

            def select(self, ctx, candidates):
                return len(candidates)

            def verify(self, ctx, answer):
                return True

        self.slot.register(Wrong())
        ctx = PlannerContext("t")
        with self.assertRaisesRegex(TypeError, "Wrong.plan returned"):
            self.slot.plan(ctx)
        with self.assertRaisesRegex(ValueError, "Wrong.select returned 2; it returns an index below 2"):
            self.slot.select(ctx, [ANSWER, CALL])
        with self.assertRaisesRegex(TypeError, "Wrong.verify returned True"):
            self.slot.verify(ctx, "x")


def _fake_bindings(with_planner_kind, app_source):
    """``wit_world`` for a planner world and an ``app`` from source."""
    import test_tool

    from kaizen_sdk.registry import default_registry

    modules, _ = test_tool._fake_bindings()
    default_registry._tools.clear()

    def record(name, *fields):
        return dataclass(type(name, (), {"__annotations__": {f: object for f in fields}}))

    wit = types.ModuleType("wit_world.exports.planning")
    wit.ThinkPlan = record("ThinkPlan", "system_additions", "injected", "candidates", "todos")
    wit.Verdict_Accept = record("Verdict_Accept")
    wit.Verdict_Revise = record("Verdict_Revise", "value")
    exports = modules["wit_world.exports"]
    del exports.Tools
    del modules["wit_world.exports.tools"]
    if with_planner_kind:
        exports.Planning = type("Planning", (), {})
        exports.planning = wit
        modules["wit_world.exports.planning"] = wit
    app = types.ModuleType("app")
    exec(app_source, app.__dict__)
    return modules, app


APP = """
from kaizen_sdk import Plan, Verdict, planner
from kaizen_sdk.planning import tool_calls

@planner
class Echo:
    def __init__(self):
        self.seen = 0

    def plan(self, ctx):
        self.seen += 1
        if ctx.cycle == 9:
            raise RuntimeError("cycle nine")
        return Plan(system_additions=[f"{ctx.task} #{self.seen} {ctx.settings.get('k')}"], candidates=2,
                    todos=[{"content": "a", "status": "pending", "activeForm": "A"}])

    def select(self, ctx, candidates):
        return next(i for i, c in enumerate(candidates) if tool_calls(c))

    def verify(self, ctx, answer):
        return Verdict.accept() if answer else Verdict.revise("Answer in words.")
"""


class ComponentGlue(unittest.TestCase):
    def load(self, with_planner_kind=True, source=APP):
        saved = default_planner.planner
        self.addCleanup(setattr, default_planner, "planner", saved)
        default_planner.planner = None
        modules, app = _fake_bindings(with_planner_kind, source)
        self.log = modules["wit_world.imports.log"]
        self.wit = modules.get("wit_world.exports.planning")
        import test_tool

        return test_tool.import_component(self, modules, app)

    def ctx(self, cycle=1):
        return types.SimpleNamespace(
            session_id="s", cycle=cycle, task="Fix it.", transcript="[]", tools=["Read"], settings='{"k": 5}'
        )

    def test_plans_candidates_and_verdicts_in_the_contracts_types(self):
        component = self.load()
        planning_export = component.Planning()
        plan = planning_export.plan(self.ctx())
        self.assertEqual(plan.system_additions, ["Fix it. #1 5"])
        self.assertEqual((plan.injected, plan.candidates), ([], 2))
        self.assertEqual(json.loads(plan.todos)[0]["status"], "pending")
        # The instance keeps its state between calls.
        self.assertEqual(planning_export.plan(self.ctx()).system_additions, ["Fix it. #2 5"])
        chosen = planning_export.select(self.ctx(), [json.dumps(ANSWER), json.dumps(CALL)])
        self.assertEqual(chosen, 1)
        self.assertEqual(planning_export.verify(self.ctx(), "Done."), self.wit.Verdict_Accept())
        self.assertEqual(planning_export.verify(self.ctx(), ""), self.wit.Verdict_Revise("Answer in words."))

    def test_a_raising_planner_logs_its_traceback_and_traps(self):
        component = self.load()
        with self.assertRaisesRegex(RuntimeError, "cycle nine"):
            component.Planning().plan(self.ctx(cycle=9))
        ((level, message),) = self.log.lines
        self.assertEqual(level, "ERROR")
        self.assertIn("the planner's plan failed", message)
        self.assertIn("RuntimeError: cycle nine", message)

    def test_the_kind_and_the_registration_must_agree(self):
        with self.assertRaisesRegex(RuntimeError, 'registers a planner: add "planner" to kinds'):
            self.load(with_planner_kind=False)
        with self.assertRaisesRegex(RuntimeError, "registered no planner"):
            self.load(source="")


if __name__ == "__main__":
    unittest.main()
