"""`py-echo`: a tool plugin in Python, built with componentize-py against the
`tool` world of kaizen:plugin@0.1.0 (which imports only `log`).

Build: componentize-py -d wit/v0.1.0 -w tool componentize app \
           -p tests/plugins/py-echo -o py-echo.wasm
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.tools import ErrorKind, ToolError, ToolOutput, ToolSpec
from wit_world.imports import log
from wit_world.imports.types import CallContext, ContentPart_Text, DangerLevel, LogLevel

ECHO_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The text to echo."}},
        "required": ["text"],
    }
)
EMPTY_SCHEMA = json.dumps({"type": "object", "properties": {}})


class Tools(exports.Tools):
    def tools(self) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="PyEcho",
                description="Returns the text it was given.",
                input_schema=ECHO_SCHEMA,
                danger=DangerLevel.SAFE,
                read_only=True,
            ),
            ToolSpec(
                name="PyFail",
                description="Always fails with an invalid-input error.",
                input_schema=EMPTY_SCHEMA,
                danger=DangerLevel.SAFE,
                read_only=True,
            ),
        ]

    def call(self, ctx: CallContext, name: str, input: str) -> ToolOutput:
        if name == "PyEcho":
            text = json.loads(input)["text"]
            log.log(LogLevel.INFO, f"PyEcho echoing {len(text)} characters")
            return ToolOutput(
                content=[ContentPart_Text(text)],
                metadata=json.dumps({"length": len(text)}),
            )
        if name == "PyFail":
            raise Err(ToolError(kind=ErrorKind.INVALID_INPUT, message="python says no"))
        raise Err(ToolError(kind=ErrorKind.NOT_FOUND, message=f"this plugin has no tool named `{name}`"))
