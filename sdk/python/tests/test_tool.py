"""The call path: results, errors by kind, unexpected exceptions, the
context, and the component glue (against fake bindings)."""

import errno
import importlib
import json
import os
import sys
import types
import unittest
from dataclasses import dataclass
from pathlib import Path
from typing import Optional
from unittest import mock

KIT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(KIT))

from kaizen_sdk import (  # noqa: E402
    CallContext,
    ErrorKind,
    HostUnavailable,
    Image,
    Output,
    Registry,
    Text,
    ToolError,
)
from kaizen_sdk.errors import to_tool_error  # noqa: E402
from kaizen_sdk.http import HttpError, HttpErrorKind  # noqa: E402


def registry_with(func, **options):
    registry = Registry()
    registry.tool(**options)(func)
    return registry


class Results(unittest.TestCase):
    def test_a_str_is_one_text_part(self):
        def greet(name: str) -> str:
            """Greets."""
            return f"Hello, {name}!"

        out = registry_with(greet).call("Greet", '{"name": "Ada"}')
        self.assertEqual(out, Output("Hello, Ada!"))
        self.assertEqual(out.content, [Text("Hello, Ada!")])

    def test_an_output_keeps_its_parts_and_metadata(self):
        def draw() -> Output:
            """Draws."""
            return Output("a", "b", metadata={"n": 1}).with_image("image/png", b"\x89PNG")

        out = registry_with(draw).call("Draw")
        self.assertEqual(out.content, [Text("a"), Text("b"), Image("image/png", b"\x89PNG")])
        self.assertEqual(out.text, "ab")
        self.assertEqual(out.metadata_json(), '{"n": 1}')

    def test_none_is_an_empty_output(self):
        def nothing() -> None:
            """Does nothing."""

        self.assertEqual(registry_with(nothing).call("Nothing").content, [])

    def test_other_return_types_are_internal_errors(self):
        def number() -> int:
            """Returns a number."""
            return 3

        with self.assertRaisesRegex(
            ToolError, "internal error in tool `Number`: it returned int; a tool returns a str"
        ):
            registry_with(number).call("Number")

    def test_metadata_must_be_json(self):
        def odd() -> Output:
            """Returns a set."""
            return Output("x", metadata={1, 2})

        with self.assertRaises(ToolError) as caught:
            registry_with(odd).call("Odd")
        self.assertEqual(caught.exception.kind, ErrorKind.FAILED)
        self.assertIn("metadata is not JSON", caught.exception.message)

    def test_dataclass_input_and_dict_or_text_input(self):
        @dataclass
        class Pair:
            a: int
            b: int = 2

        def add(pair: Pair) -> str:
            """Adds."""
            return str(pair.a + pair.b)

        registry = registry_with(add)
        self.assertEqual(registry.call("Add", {"a": 1}).text, "3")
        self.assertEqual(registry.call("Add", '{"a": 1, "b": 5}').text, "6")


class Errors(unittest.TestCase):
    def raising(self, exc):
        def fail(x: Optional[int] = None) -> str:
            """Fails."""
            raise exc

        # The traceback of an unexpected exception is logged; not here.
        with self.assertRaises(ToolError) as caught, mock.patch("kaizen_sdk.registry._log_traceback"):
            registry_with(fail).call("Fail")
        return caught.exception

    def test_tool_errors_pass_through(self):
        err = self.raising(ToolError(ErrorKind.NOT_FOUND, "no user bob"))
        self.assertEqual((err.kind, err.message), (ErrorKind.NOT_FOUND, "no user bob"))

    def test_kinds_by_name_and_shorthands(self):
        self.assertEqual(ToolError("permission-denied", "x").kind, ErrorKind.PERMISSION_DENIED)
        self.assertEqual(ToolError.conflict("x"), ToolError(ErrorKind.CONFLICT, "x"))
        self.assertEqual(ToolError.timeout("x").kind.value, "timeout")
        self.assertEqual(ToolError.failed("x").context("a.txt").message, "a.txt: x")
        with self.assertRaisesRegex(ValueError, "not one of the contract's kinds"):
            ToolError("nope", "x")

    def test_os_errors_map_by_type_and_name_the_file(self):
        cases = [
            (FileNotFoundError(errno.ENOENT, "No such file or directory", "/w/a.txt"), ErrorKind.NOT_FOUND),
            (PermissionError(errno.EACCES, "Permission denied", "/w/a.txt"), ErrorKind.PERMISSION_DENIED),
            (FileExistsError(errno.EEXIST, "File exists", "/w/a.txt"), ErrorKind.CONFLICT),
            (IsADirectoryError(errno.EISDIR, "Is a directory", "/w/a.txt"), ErrorKind.INVALID_INPUT),
            (TimeoutError(errno.ETIMEDOUT, "Timed out", "/w/a.txt"), ErrorKind.TIMEOUT),
            (OSError(errno.EIO, "I/O error", "/w/a.txt"), ErrorKind.FAILED),
        ]
        for exc, kind in cases:
            err = to_tool_error(exc, "T")
            self.assertEqual(err.kind, kind, exc)
            self.assertTrue(err.message.endswith(": /w/a.txt"), err.message)

    def test_a_real_missing_file(self):
        def read(path: str) -> str:
            """Reads."""
            with open(path) as f:
                return f.read()

        with self.assertRaises(ToolError) as caught:
            registry_with(read).call("Read", {"path": "/nonexistent/kit-test"})
        self.assertEqual(caught.exception.kind, ErrorKind.NOT_FOUND)
        self.assertEqual(caught.exception.message, "No such file or directory: /nonexistent/kit-test")

    def test_http_errors_map_by_kind(self):
        self.assertEqual(
            to_tool_error(HttpError(HttpErrorKind.REFUSED, "no"), "T").kind, ErrorKind.PERMISSION_DENIED
        )
        self.assertEqual(to_tool_error(HttpError(HttpErrorKind.TIMEOUT, "slow"), "T").kind, ErrorKind.TIMEOUT)
        err = to_tool_error(HttpError(HttpErrorKind.BAD_RESPONSE, "gone", "http://x/", 404), "T")
        self.assertEqual(
            (err.kind, err.message), (ErrorKind.NOT_FOUND, "HTTP request to http://x/ failed: gone")
        )

    def test_host_unavailable_keeps_its_message(self):
        err = to_tool_error(HostUnavailable("request process under [capabilities]"), "T")
        self.assertEqual((err.kind, err.message), (ErrorKind.FAILED, "request process under [capabilities]"))

    def test_unexpected_exceptions_are_internal_errors_naming_them(self):
        def divide(a: int, b: int) -> str:
            """Divides."""
            return str(a // b)

        with self.assertLogs("kaizen_sdk.plugin", "ERROR") as logs, self.assertRaises(ToolError) as caught:
            registry_with(divide).call("Divide", {"a": 1, "b": 0})
        err = caught.exception
        self.assertEqual(err.kind, ErrorKind.FAILED)
        self.assertRegex(
            err.message,
            r"^internal error in tool `Divide`: ZeroDivisionError: integer division or modulo by zero "
            r"\(at test_tool.py:\d+ in divide\)\. This is a bug in the plugin",
        )
        self.assertIn("Traceback", logs.output[0])

    def test_import_errors_explain_the_build_time_rule(self):
        err = to_tool_error(ModuleNotFoundError("No module named 'csv'"), "T")
        self.assertIn("only modules imported at build time exist", err.message)

    def test_sys_exit_is_an_error_not_an_exit(self):
        err = self.raising(SystemExit(3))
        self.assertIn("it called sys.exit(3)", err.message)

    def test_invalid_input_names_the_tool_and_field(self):
        def greet(name: str) -> str:
            """Greets."""

        with self.assertRaises(ToolError) as caught:
            registry_with(greet).call("Greet", {"name": 5})
        self.assertEqual(caught.exception.kind, ErrorKind.INVALID_INPUT)
        self.assertEqual(
            caught.exception.message, "invalid input for Greet: `name`: expected a string, got the number 5"
        )

    def test_unknown_tools_are_not_found_and_listed(self):
        def greet(name: str) -> str:
            """Greets."""

        with self.assertRaises(ToolError) as caught:
            registry_with(greet).call("Nope", {})
        self.assertEqual(caught.exception.kind, ErrorKind.NOT_FOUND)
        self.assertEqual(
            caught.exception.message, "this plugin has no tool named `Nope`; its tools are: Greet"
        )


class Context(unittest.TestCase):
    def test_the_context_is_passed_by_type(self):
        seen = []

        def where(ctx: CallContext, name: str = "x") -> str:
            """Says where."""
            seen.append(ctx)
            return ctx.cwd

        ctx = CallContext(session_id="s", call_id="c", workspace="/w", cwd="/w/src")
        self.assertEqual(registry_with(where).call("Where", {}, ctx).text, "/w/src")
        self.assertIs(seen[0], ctx)

    def test_the_local_context_is_the_current_directory(self):
        ctx = CallContext.local()
        self.assertEqual((ctx.cwd, ctx.workspace), (os.getcwd(), os.getcwd()))

    def test_resolve_applies_dots_lexically(self):
        ctx = CallContext(session_id="s", call_id="c", workspace="/w", cwd="/w/src")
        self.assertEqual(ctx.resolve("a.txt"), "/w/src/a.txt")
        self.assertEqual(ctx.resolve("../README.md"), "/w/README.md")
        self.assertEqual(ctx.resolve("/etc/x/../y"), "/etc/y")


class ForwardReferences(unittest.TestCase):
    def test_hints_naming_later_classes_resolve_on_first_use(self):
        module = types.ModuleType("late_module")
        sys.modules["late_module"] = module
        self.addCleanup(sys.modules.pop, "late_module")
        registry = Registry()
        module.registry = registry
        code = (
            "from __future__ import annotations\n"
            "from dataclasses import dataclass\n"
            "@registry.tool\n"
            "def draw(p: Later) -> str:\n"
            "    '''Draws.'''\n"
            "    return str(p.x)\n"
            "@dataclass\n"
            "class Later:\n"
            "    x: int\n"
        )
        exec(compile(code, "late_module.py", "exec"), module.__dict__)
        self.assertEqual(registry.specs()[0].input_schema["required"], ["x"])
        self.assertEqual(registry.call("Draw", {"x": 4}).text, "4")


def _fake_bindings():
    """``wit_world``, ``componentize_py_types`` and ``app`` as componentize-py
    would make them, enough for kaizen_sdk.component."""
    from enum import Enum

    def record(name, *fields):
        return dataclass(type(name, (), {"__annotations__": {f: object for f in fields}}))

    ctypes = types.ModuleType("componentize_py_types")

    @dataclass(frozen=True)
    class Err(Exception):
        value: object

    ctypes.Err = Err

    kaizen_types = types.ModuleType("wit_world.imports.types")
    kaizen_types.CallContext = record("CallContext", "session_id", "call_id", "workspace", "cwd")
    kaizen_types.DangerLevel = Enum("DangerLevel", "SAFE MODERATE DANGEROUS")
    kaizen_types.LogLevel = Enum("LogLevel", "TRACE DEBUG INFO WARN ERROR")
    kaizen_types.Image = record("Image", "media_type", "data")
    kaizen_types.ContentPart_Text = record("ContentPart_Text", "value")
    kaizen_types.ContentPart_Image = record("ContentPart_Image", "value")

    log = types.ModuleType("wit_world.imports.log")
    log.lines = []
    log.log = lambda level, message: log.lines.append((level.name, message))

    tools = types.ModuleType("wit_world.exports.tools")
    tools.ToolSpec = record("ToolSpec", "name", "description", "input_schema", "danger", "read_only")
    tools.ToolOutput = record("ToolOutput", "content", "metadata")
    tools.ToolError = record("ToolError", "kind", "message")
    tools.ErrorKind = Enum("ErrorKind", "INVALID_INPUT NOT_FOUND PERMISSION_DENIED CONFLICT TIMEOUT FAILED")

    exports = types.ModuleType("wit_world.exports")
    exports.Tools = type("Tools", (), {})
    exports.tools = tools
    imports = types.ModuleType("wit_world.imports")
    world = types.ModuleType("wit_world")
    world.exports, world.imports = exports, imports

    app = types.ModuleType("app")
    exec(
        "from kaizen_sdk import Danger, Output, ToolError, tool, log\n"
        "@tool(read_only=True, danger=Danger.SAFE)\n"
        "def echo(text: str) -> Output:\n"
        "    '''Echoes.'''\n"
        "    log.info('echoing')\n"
        "    if not text:\n"
        "        raise ToolError.invalid_input('empty')\n"
        "    return Output(text, metadata={'n': len(text)}).with_image('image/png', b'x')\n",
        app.__dict__,
    )
    return {
        "componentize_py_types": ctypes,
        "wit_world": world,
        "wit_world.exports": exports,
        "wit_world.exports.tools": tools,
        "wit_world.imports": imports,
        "wit_world.imports.types": kaizen_types,
        "wit_world.imports.log": log,
    }, app


def import_component(case, modules, app):
    """Imports kaizen_sdk.component afresh against the fake binding
    `modules` and `app`, undoing it all when `case` ends."""
    from kaizen_sdk import _bindings

    patcher = mock.patch.dict(sys.modules, {**modules, "app": app})
    patcher.start()
    case.addCleanup(patcher.stop)
    sys.modules.pop("kaizen_sdk.component", None)
    case.addCleanup(sys.modules.pop, "kaizen_sdk.component", None)
    case.addCleanup(_bindings._cache.clear)
    _bindings._cache.clear()
    return importlib.import_module("kaizen_sdk.component")


class ComponentGlue(unittest.TestCase):
    """kaizen_sdk.component against fake bindings: specs, outputs and errors
    in the contract's types."""

    def setUp(self):
        from kaizen_sdk import registry

        self.registry = registry.default_registry
        saved = dict(self.registry._tools)
        self.addCleanup(lambda: (self.registry._tools.clear(), self.registry._tools.update(saved)))
        self.registry._tools.clear()
        modules, app = _fake_bindings()
        self.component = import_component(self, modules, app)
        self.log = modules["wit_world.imports.log"]
        self.types = modules["wit_world.imports.types"]

    def test_specs_carry_the_schema_as_json(self):
        (spec,) = self.component.Tools().tools()
        self.assertEqual((spec.name, spec.read_only, spec.danger.name), ("Echo", True, "SAFE"))
        self.assertEqual(json.loads(spec.input_schema)["required"], ["text"])

    def test_a_call_returns_content_parts_and_metadata(self):
        ctx = self.types.CallContext("s", "c", "/w", "/w")
        out = self.component.Tools().call(ctx, "Echo", '{"text": "hi"}')
        self.assertEqual(out.content[0], self.types.ContentPart_Text("hi"))
        self.assertEqual(out.content[1].value.media_type, "image/png")
        self.assertEqual(out.metadata, '{"n": 2}')
        self.assertEqual(self.log.lines, [("INFO", "echoing")])

    def test_errors_are_raised_as_err_of_the_contract_error(self):
        Err = sys.modules["componentize_py_types"].Err
        ctx = self.types.CallContext("s", "c", "/w", "/w")
        with self.assertRaises(Err) as caught:
            self.component.Tools().call(ctx, "Echo", '{"text": ""}')
        self.assertEqual(
            (caught.exception.value.kind.name, caught.exception.value.message), ("INVALID_INPUT", "empty")
        )
        with self.assertRaises(Err) as caught:
            self.component.Tools().call(ctx, "Nope", "{}")
        self.assertEqual(caught.exception.value.kind.name, "NOT_FOUND")


if __name__ == "__main__":
    unittest.main()
