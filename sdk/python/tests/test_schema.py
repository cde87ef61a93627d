"""Schema derivation: every supported type, descriptions, defaults, and the
errors for what cannot be described."""

import enum
import sys
import typing
import unittest
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Dict, List, Literal, Optional, Tuple, Union

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kaizen_sdk import Danger, Registry  # noqa: E402
from kaizen_sdk.schema import SchemaError, type_schema  # noqa: E402


def schema_of(func):
    """The input schema of ``func`` registered as a tool."""
    return Registry().tool(func).kaizen_tool.spec.input_schema


def prop(func, name):
    return schema_of(func)["properties"][name]


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass
class Point:
    """A point on the plane.

    Attributes:
        x: Horizontal coordinate.
    """

    x: float
    y: Annotated[float, "Vertical coordinate."] = 0.0
    label: str = field(default="", metadata={"description": "A name for it."})


@dataclass
class Undocumented:
    n: int


@dataclass
class Shape:
    points: list[Point]
    color: Color = Color.RED


class ScalarTypes(unittest.TestCase):
    def test_scalars(self):
        self.assertEqual(type_schema(str, "t"), {"type": "string"})
        self.assertEqual(type_schema(int, "t"), {"type": "integer"})
        self.assertEqual(type_schema(float, "t"), {"type": "number"})
        self.assertEqual(type_schema(bool, "t"), {"type": "boolean"})

    def test_any_is_unconstrained(self):
        self.assertEqual(type_schema(Any, "t"), {})
        self.assertEqual(type_schema(object, "t"), {})


class ContainerTypes(unittest.TestCase):
    def test_lists(self):
        self.assertEqual(type_schema(list[str], "t"), {"type": "array", "items": {"type": "string"}})
        self.assertEqual(type_schema(List[int], "t"), {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(
            type_schema(typing.Sequence[bool], "t"), {"type": "array", "items": {"type": "boolean"}}
        )
        self.assertEqual(type_schema(list, "t"), {"type": "array"})
        self.assertEqual(type_schema(List, "t"), {"type": "array"})

    def test_tuples(self):
        self.assertEqual(type_schema(tuple[int, ...], "t"), {"type": "array", "items": {"type": "integer"}})
        self.assertEqual(
            type_schema(Tuple[str, int], "t"),
            {
                "type": "array",
                "prefixItems": [{"type": "string"}, {"type": "integer"}],
                "items": False,
                "minItems": 2,
            },
        )

    def test_dicts(self):
        self.assertEqual(type_schema(dict, "t"), {"type": "object"})
        self.assertEqual(type_schema(Dict, "t"), {"type": "object"})
        self.assertEqual(
            type_schema(dict[str, int], "t"), {"type": "object", "additionalProperties": {"type": "integer"}}
        )

    def test_nested_lists(self):
        self.assertEqual(
            type_schema(list[list[float]], "t"),
            {"type": "array", "items": {"type": "array", "items": {"type": "number"}}},
        )


class ChoiceTypes(unittest.TestCase):
    def test_optional_admits_null(self):
        self.assertEqual(type_schema(Optional[str], "t"), {"type": ["string", "null"]})
        self.assertEqual(type_schema(int | None, "t"), {"type": ["integer", "null"]})

    def test_optional_object_admits_null(self):
        schema = type_schema(Optional[Undocumented], "t")
        self.assertEqual(schema["type"], ["object", "null"])
        self.assertEqual(schema["required"], ["n"])

    def test_optional_untyped_schema_admits_null_with_any_of(self):
        self.assertEqual(
            type_schema(Optional[Literal["a", 1]], "t"), {"anyOf": [{"enum": ["a", 1]}, {"type": "null"}]}
        )
        self.assertEqual(type_schema(Optional[Any], "t"), {})

    def test_union_is_any_of(self):
        self.assertEqual(
            type_schema(Union[int, str], "t"), {"anyOf": [{"type": "integer"}, {"type": "string"}]}
        )
        self.assertEqual(
            type_schema(Union[int, str, None], "t"),
            {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
        )

    def test_literals(self):
        self.assertEqual(type_schema(Literal["a", "b"], "t"), {"type": "string", "enum": ["a", "b"]})
        self.assertEqual(type_schema(Literal[1, 2], "t"), {"type": "integer", "enum": [1, 2]})
        self.assertEqual(type_schema(Literal["a", 1], "t"), {"enum": ["a", 1]})

    def test_enums_list_their_values(self):
        self.assertEqual(type_schema(Color, "t"), {"type": "string", "enum": ["red", "blue"]})
        self.assertEqual(type_schema(Level, "t"), {"type": "integer", "enum": [1, 2]})

    def test_optional_enum_adds_null_to_the_values(self):
        self.assertEqual(
            type_schema(Optional[Color], "t"), {"type": ["string", "null"], "enum": ["red", "blue", None]}
        )


class Dataclasses(unittest.TestCase):
    def test_fields_descriptions_and_defaults(self):
        schema = type_schema(Point, "t")
        self.assertEqual(schema["description"], "A point on the plane.")
        self.assertEqual(schema["type"], "object")
        self.assertEqual(schema["required"], ["x"])
        self.assertFalse(schema["additionalProperties"])
        self.assertEqual(
            schema["properties"],
            {
                "x": {"description": "Horizontal coordinate.", "type": "number"},
                "y": {"description": "Vertical coordinate.", "type": "number", "default": 0.0},
                "label": {"description": "A name for it.", "type": "string", "default": ""},
            },
        )

    def test_the_generated_dataclass_doc_is_not_a_description(self):
        self.assertNotIn("description", type_schema(Undocumented, "t"))

    def test_nested_dataclasses_and_enum_defaults(self):
        schema = type_schema(Shape, "t")
        self.assertEqual(schema["properties"]["points"]["items"]["properties"]["x"]["type"], "number")
        self.assertEqual(schema["properties"]["color"]["default"], "red")

    def test_factory_defaults_are_optional_without_a_default_shown(self):
        @dataclass
        class Tags:
            names: list[str] = field(default_factory=list)

        schema = type_schema(Tags, "t")
        self.assertNotIn("required", schema)
        self.assertNotIn("default", schema["properties"]["names"])

    def test_recursive_dataclasses_are_refused(self):
        @dataclass
        class Node:
            children: "list[Node]"

        Node.__annotations__["children"] = list[Node]
        with self.assertRaisesRegex(SchemaError, "contains itself"):
            type_schema(Node, "t")


class Unsupported(unittest.TestCase):
    def test_unsupported_types_name_the_place_and_the_alternatives(self):
        for tp in (bytes, set[int], complex):
            with self.assertRaisesRegex(SchemaError, r"^here: the type .* use str, int"):
                type_schema(tp, "here")

    def test_dict_keys_must_be_strings(self):
        with self.assertRaisesRegex(SchemaError, "keys must be `str`"):
            type_schema(dict[int, str], "t")

    def test_enums_need_json_values(self):
        class Odd(enum.Enum):
            A = (1, 2)

        with self.assertRaisesRegex(SchemaError, "not JSON scalars"):
            type_schema(Odd, "t")


class FunctionInputs(unittest.TestCase):
    def test_parameters_are_fields_and_defaults_optional(self):
        def f(name: str, times: int = 2, loud: bool = False) -> str:
            """Greets."""

        self.assertEqual(
            schema_of(f),
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "times": {"type": "integer", "default": 2},
                    "loud": {"type": "boolean", "default": False},
                },
                "required": ["name"],
                "additionalProperties": False,
            },
        )

    def test_optional_without_default_is_not_required(self):
        def f(name: Optional[str]) -> str:
            """Greets."""

        self.assertNotIn("required", schema_of(f))

    def test_annotated_descriptions_and_constraints(self):
        def f(count: Annotated[int, "How many.", {"minimum": 1, "maximum": 9}]) -> str:
            """Counts."""

        self.assertEqual(
            prop(f, "count"), {"description": "How many.", "type": "integer", "minimum": 1, "maximum": 9}
        )

    def test_google_style_args_describe_parameters(self):
        def f(path: str, limit: int = 10) -> str:
            """Reads a file.

            Args:
                path (str): Absolute path of the file,
                    inside the workspace.
                limit: At most this many lines.

            Returns:
                The lines.
            """

        tool = Registry().tool(f).kaizen_tool
        self.assertEqual(tool.spec.description, "Reads a file.\n\nReturns:\n    The lines.")
        props = tool.spec.input_schema["properties"]
        self.assertEqual(props["path"]["description"], "Absolute path of the file, inside the workspace.")
        self.assertEqual(props["limit"]["description"], "At most this many lines.")

    def test_rest_params_describe_parameters(self):
        def f(path: str) -> str:
            """Reads a file.

            :param path: The file.
            :type path: str
            """

        tool = Registry().tool(f).kaizen_tool
        self.assertEqual(tool.spec.description, "Reads a file.")
        self.assertEqual(tool.spec.input_schema["properties"]["path"]["description"], "The file.")

    def test_annotated_wins_over_the_docstring(self):
        def f(path: Annotated[str, "From Annotated."]) -> str:
            """Reads.

            Args:
                path: From the docstring.
            """

        self.assertEqual(prop(f, "path")["description"], "From Annotated.")

    def test_a_single_dataclass_parameter_is_the_whole_input(self):
        def f(shape: Shape) -> str:
            """Draws."""

        schema = schema_of(f)
        self.assertEqual(list(schema["properties"]), ["points", "color"])
        self.assertEqual(schema["required"], ["points"])

    def test_a_dataclass_beside_other_parameters_is_a_nested_field(self):
        def f(shape: Shape, scale: float = 1.0) -> str:
            """Draws."""

        self.assertEqual(schema_of(f)["properties"]["shape"]["type"], "object")

    def test_the_context_parameter_is_not_an_input(self):
        from kaizen_sdk import CallContext

        def f(ctx: CallContext, name: str) -> str:
            """Greets."""

        self.assertEqual(list(schema_of(f)["properties"]), ["name"])

    def test_no_parameters_is_the_empty_object(self):
        def f() -> str:
            """Pings."""

        self.assertEqual(schema_of(f), {"type": "object", "properties": {}, "additionalProperties": False})

    def test_string_annotations_resolve(self):
        def f(p: "Point", c: "Optional[Color]" = None) -> str:
            """Draws."""

        schema = schema_of(f)
        self.assertEqual(schema["properties"]["p"]["type"], "object")
        self.assertEqual(schema["properties"]["c"]["enum"], ["red", "blue", None])


class FunctionErrors(unittest.TestCase):
    def test_missing_hints_are_refused(self):
        def f(name) -> str:
            """Greets."""

        with self.assertRaisesRegex(SchemaError, "parameter `name` has no type hint; annotate it"):
            Registry().tool(f)

    def test_var_args_are_refused(self):
        def f(*names: str) -> str:
            """Greets."""

        with self.assertRaisesRegex(SchemaError, r"\*args and \*\*kwargs"):
            Registry().tool(f)

    def test_unsupported_parameter_types_name_the_tool_and_parameter(self):
        def f(data: bytes) -> str:
            """Eats."""

        with self.assertRaisesRegex(SchemaError, r"tool `F` .*field `data`: the type bytes"):
            Registry().tool(f)

    def test_names_descriptions_and_flags(self):
        registry = Registry()

        @registry.tool(read_only=True, danger=Danger.SAFE)
        def word_count(text: str) -> str:
            """Counts words."""

        @registry.tool(name="custom-name", danger="dangerous", description="Given.")
        def other() -> str:
            pass

        @registry.tool(internal=True)
        def shard(n: int) -> str:
            """A shard."""

        specs = registry.specs()
        self.assertEqual([s.name for s in specs], ["WordCount", "custom-name"])
        self.assertEqual((specs[0].read_only, specs[0].danger), (True, Danger.SAFE))
        self.assertEqual(
            (specs[1].read_only, specs[1].danger, specs[1].description), (False, Danger.DANGEROUS, "Given.")
        )
        self.assertEqual(len(registry), 3)

    def test_bad_names_duplicates_and_missing_descriptions_are_refused(self):
        registry = Registry()

        def f() -> str:
            """Does."""

        def g() -> str:
            pass

        with self.assertRaisesRegex(ValueError, "not valid"):
            registry.tool(name="has space")(f)
        registry.tool(name="Same")(f)
        with self.assertRaisesRegex(ValueError, "two tools are named `Same`"):
            registry.tool(name="Same")(f)
        with self.assertRaisesRegex(ValueError, r"has no description: give .*\.g a docstring"):
            registry.tool(g)
        with self.assertRaisesRegex(ValueError, "not one of safe, moderate, dangerous"):
            registry.tool(danger="extreme")(f)

    def test_async_functions_are_refused(self):
        async def f() -> str:
            """Waits."""

        with self.assertRaisesRegex(TypeError, "async functions are not supported"):
            Registry().tool(f)

    def test_the_decorator_returns_the_function(self):
        def f(n: int) -> str:
            """Echoes."""
            return str(n)

        self.assertIs(Registry().tool(f), f)
        self.assertEqual(f(3), "3")


if __name__ == "__main__":
    unittest.main()
