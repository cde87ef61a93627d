"""Unit tests of {{name}}, run natively: `kaizen plugins test` (or
python3 -m unittest with the kit on PYTHONPATH)."""

import unittest

import app  # noqa: F401 -- registers the tool

from kaizen_sdk import ErrorKind, ToolError, call


class {{camel_name}}Test(unittest.TestCase):
    def test_counts_words_lines_and_characters(self):
        out = call("{{camel_name}}", {"text": "The cat saw the dog.\nThe end", "top": 1})
        self.assertEqual(out.metadata, {"words": 7, "lines": 2, "characters": 28})
        self.assertEqual(out.text, "7 words, 2 lines, 28 characters. Most frequent: the (3)")

    def test_a_negative_top_is_invalid_input(self):
        with self.assertRaises(ToolError) as caught:
            call("{{camel_name}}", {"text": "a b", "top": -1})
        self.assertEqual(caught.exception.kind, ErrorKind.INVALID_INPUT)

    def test_the_text_is_required(self):
        with self.assertRaisesRegex(ToolError, "text.*missing required field"):
            call("{{camel_name}}", {})


if __name__ == "__main__":
    unittest.main()
