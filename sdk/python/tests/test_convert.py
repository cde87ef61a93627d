"""Input conversion: JSON values to the hinted Python types, and errors that
name the field, what was expected and what came."""

import enum
import sys
import unittest
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kaizen_sdk.convert import InputError, convert, convert_fields, parse_object  # noqa: E402
from kaizen_sdk.schema import dataclass_fields  # noqa: E402


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass
class Point:
    x: int
    y: int = 0


@dataclass
class Shape:
    points: list[Point]
    color: Color = Color.RED
    tags: list[str] = field(default_factory=list)
    note: Optional[str] = None


class Values(unittest.TestCase):
    def test_scalars(self):
        self.assertEqual(convert("a", str), "a")
        self.assertEqual(convert(3, int), 3)
        self.assertEqual(convert(True, bool), True)
        self.assertEqual(convert(2, float), 2.0)
        self.assertIsInstance(convert(2, float), float)

    def test_whole_floats_are_integers(self):
        self.assertEqual(convert(2.0, int), 2)
        self.assertIsInstance(convert(2.0, int), int)

    def test_containers(self):
        self.assertEqual(convert([1, 2], list[int]), [1, 2])
        self.assertEqual(convert([1, 2], tuple[int, ...]), (1, 2))
        self.assertEqual(convert(["a", 1], tuple[str, int]), ("a", 1))
        self.assertEqual(convert({"a": 1}, dict[str, int]), {"a": 1})
        self.assertEqual(convert({"a": [1]}, dict), {"a": [1]})
        self.assertEqual(convert([{"x": 1}], list[Point]), [Point(1, 0)])

    def test_choices(self):
        self.assertIsNone(convert(None, Optional[int]))
        self.assertEqual(convert(4, Optional[int]), 4)
        self.assertEqual(convert("b", Literal["a", "b"]), "b")
        self.assertIs(convert("blue", Color), Color.BLUE)
        self.assertEqual(convert("x", Union[int, str]), "x")
        self.assertEqual(convert(5, Union[int, str]), 5)
        self.assertEqual(convert({"k": None}, Any), {"k": None})
        self.assertEqual(convert("a", Annotated[str, "doc"]), "a")

    def test_nested_dataclasses_with_defaults(self):
        shape = convert({"points": [{"x": 1, "y": 2}], "color": "blue"}, Shape)
        self.assertEqual(shape, Shape([Point(1, 2)], Color.BLUE, [], None))


class Errors(unittest.TestCase):
    def check(self, value, tp, path, message):
        with self.assertRaises(InputError) as caught:
            convert(value, tp)
        self.assertEqual(caught.exception.path, path)
        self.assertEqual(caught.exception.problem, message)

    def test_wrong_scalars(self):
        self.check(3, str, "", "expected a string, got the number 3")
        self.check("3", int, "", 'expected an integer, got the string "3"')
        self.check(2.5, int, "", "expected an integer, got the number 2.5")
        self.check(True, int, "", "expected an integer, got true")
        self.check(True, float, "", "expected a number, got true")
        self.check(1, bool, "", "expected a boolean (true or false), got the number 1")
        self.check(None, str, "", "expected a string, got null")

    def test_long_strings_are_cut_in_messages(self):
        self.check("x" * 100, int, "", f'expected an integer, got the string "{"x" * 37}..."')

    def test_wrong_choices(self):
        self.check("green", Color, "", 'expected one of "red", "blue", got the string "green"')
        self.check("c", Literal["a", "b"], "", 'expected one of "a", "b", got the string "c"')
        self.check(1, Literal[True], "", "expected one of true, got the number 1")
        self.check(
            [],
            Union[int, str],
            "",
            "no alternative fits: expected an integer, got an array of 0 items; "
            "expected a string, got an array of 0 items",
        )

    def test_wrong_containers(self):
        self.check({}, list[int], "", "expected an array, got an object")
        self.check([1], tuple[int, int], "", "expected an array of 2 items, got 1")
        self.check([], dict, "", "expected an object, got an array of 0 items")

    def test_paths_lead_to_the_bad_value(self):
        value = {"points": [{"x": 1}, {"x": "2"}]}
        self.check(value, Shape, "points[1].x", 'expected an integer, got the string "2"')
        self.check({"a": [1, "b"]}, dict[str, list[int]], "a[1]", 'expected an integer, got the string "b"')

    def test_missing_and_unknown_fields(self):
        self.check({"color": "red"}, Shape, "points", "missing required field")
        self.check(
            {"points": [], "colour": "red"},
            Shape,
            "colour",
            "unknown field; did you mean `color`? (the fields are: points, color, tags, note)",
        )
        self.check(
            {"points": [{"x": 1, "z": 2}]}, Shape, "points[0].z", "unknown field (the fields are: x, y)"
        )

    def test_missing_fields_quote_their_description(self):
        @dataclass
        class Q:
            path: Annotated[str, "The file to read."]

        with self.assertRaisesRegex(InputError, r"^`path`: missing required field \(The file to read.\)$"):
            convert_fields({}, dataclass_fields(Q, "Q"))


class Parsing(unittest.TestCase):
    def test_objects_parse_and_dicts_pass(self):
        self.assertEqual(parse_object('{"a": 1}'), {"a": 1})
        self.assertEqual(parse_object(b'{"a": 1}'), {"a": 1})
        self.assertEqual(parse_object({"a": 1}), {"a": 1})

    def test_invalid_json_and_non_objects_are_refused(self):
        with self.assertRaisesRegex(InputError, "^the input is not valid JSON: Expecting value"):
            parse_object("nope")
        with self.assertRaisesRegex(InputError, "^the input must be a JSON object, got an array of 1 items$"):
            parse_object("[1]")


if __name__ == "__main__":
    unittest.main()
