"""The vote, natively: `kaizen plugins test` (or `python3 -m unittest`
with the Python kit on PYTHONPATH)."""

import json
import unittest

from kaizen_sdk import PlannerContext
from kaizen_sdk.planning import default_planner

import app


def answer(text):
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def calls(*pairs, text="Let me look."):
    blocks = [{"type": "text", "text": text}]
    for i, (name, arguments) in enumerate(pairs):
        blocks.append({"type": "tool_use", "id": f"c{i}", "name": name, "arguments": arguments})
    return {"role": "assistant", "content": blocks}


class Vote(unittest.TestCase):
    def test_the_action_most_candidates_take_wins(self):
        ls = calls(("Bash", '{"command": "ls"}'))
        grep = calls(("Grep", '{"pattern": "x"}'))
        self.assertEqual(app.majority([grep, ls, ls]), 1)

    def test_arguments_compare_as_json_and_calls_in_any_order(self):
        a = calls(("Read", '{"path": "a", "limit": 5}'), ("Glob", '{"pattern": "*"}'))
        b = calls(("Glob", '{"pattern":"*"}'), ("Read", '{"limit": 5, "path": "a"}'), text="Other words.")
        c = calls(("Read", '{"path": "b"}'))
        self.assertEqual(app.majority([c, a, b]), 1)

    def test_answers_compare_without_case_spacing_or_final_stop(self):
        self.assertEqual(app.majority([answer("41"), answer("The answer is  42."), answer("the answer is 42")]), 1)

    def test_a_tie_goes_to_the_earliest(self):
        self.assertEqual(app.majority([answer("a"), answer("b")]), 0)

    def test_an_answer_and_a_call_differ(self):
        self.assertEqual(app.majority([answer("done"), calls(("Bash", "{}")), calls(("Bash", "{}"))]), 1)


class Plans(unittest.TestCase):
    def plan(self, cycle, **settings):
        return default_planner.plan(PlannerContext("t", cycle=cycle, settings=settings)).candidates

    def test_samples_for_the_first_steps_only(self):
        self.assertEqual([self.plan(c) for c in (1, 3, 4)], [3, 3, 1])

    def test_settings_bounded(self):
        self.assertEqual(self.plan(5, samples=5, **{"max-depth": 0}), 5)
        self.assertEqual(self.plan(1, samples=50), 8)
        self.assertEqual(self.plan(1, samples="many"), 3)

    def test_select_goes_through_the_registered_planner(self):
        ls = calls(("Bash", json.dumps({"command": "ls"})))
        self.assertEqual(default_planner.select(PlannerContext("t"), [answer("x"), ls, ls]), 1)


if __name__ == "__main__":
    unittest.main()
