"""A session driven through Claude's Agent SDK for Python, with `kaizen`
as its CLI: the SDK starts it, handshakes, sends the turns, answers its
permission questions (editing one input), serves a tool of its own (an
in-process MCP server), runs hooks of its own, interrupts a turn and
changes the permission mode. Every message is parsed by the SDK's own types; the report on
stdout is what the Rust test checks.

Usage: session.py KAIZEN WORKSPACE
"""

import asyncio
import dataclasses
import json
import sys

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    ResultMessage,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    tool,
)

kaizen, workspace = sys.argv[1], sys.argv[2]
report = {"asked": [], "turns": [], "server_info": None, "tallied": [], "hooked": []}


async def on_prompt(input_data, tool_use_id, context):
    """Adds to every prompt, as a UserPromptSubmit hook may."""
    report["hooked"].append(input_data["hook_event_name"])
    return {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "The program says hi.",
        }
    }


async def on_bash(input_data, tool_use_id, context):
    """Sees each Bash call before it runs."""
    report["hooked"].append(input_data["tool_input"]["command"])
    return {}


@tool("tally", "Counts the words of a text.", {"text": str})
async def tally(args):
    """The program's own tool, served in process."""
    report["tallied"].append(args["text"])
    return {"content": [{"type": "text", "text": f"{len(args['text'].split())} words"}]}


def describe(message):
    """The message as the SDK typed it."""
    kind = type(message).__name__
    if isinstance(message, SystemMessage):
        return {"kind": kind, "subtype": message.subtype, "data": message.data}
    if isinstance(message, (AssistantMessage, UserMessage)):
        blocks = []
        content = message.content if isinstance(message.content, list) else []
        for block in content:
            if isinstance(block, TextBlock):
                blocks.append({"text": block.text})
            elif isinstance(block, ToolUseBlock):
                blocks.append({"tool_use": block.name, "id": block.id, "input": block.input})
            elif isinstance(block, ToolResultBlock):
                blocks.append(
                    {"tool_result": block.tool_use_id, "is_error": block.is_error,
                     "content": block.content}
                )
        return {"kind": kind, "blocks": blocks, "parent": message.parent_tool_use_id}
    if isinstance(message, ResultMessage):
        return {"kind": kind, **dataclasses.asdict(message)}
    return {"kind": kind}


async def ask(tool_name, tool_input, context):
    """Allows every call, but writes its own content into a Write."""
    report["asked"].append(
        {"tool": tool_name, "input": tool_input, "tool_use_id": context.tool_use_id,
         "suggestions": len(context.suggestions)}
    )
    if tool_name == "Write":
        return PermissionResultAllow(updated_input={**tool_input, "content": "written by the program\n"})
    return PermissionResultAllow()


async def turn(client, prompt, interrupt_on=None):
    """One turn: its messages, up to and with its result; interrupts when
    a call of `interrupt_on` starts."""
    seen = []
    await client.query(prompt)
    async for message in client.receive_response():
        seen.append(describe(message))
        if interrupt_on and isinstance(message, AssistantMessage):
            if any(isinstance(b, ToolUseBlock) and b.name == interrupt_on for b in message.content):
                await client.interrupt()
                seen.append({"kind": "interrupt sent"})
    report["turns"].append(seen)


async def main():
    options = ClaudeAgentOptions(
        cli_path=kaizen,
        cwd=workspace,
        model="gpt-4o-mini",
        can_use_tool=ask,
        mcp_servers={"counter": create_sdk_mcp_server(name="counter", tools=[tally])},
        hooks={
            "UserPromptSubmit": [HookMatcher(hooks=[on_prompt])],
            "PreToolUse": [HookMatcher(matcher="Bash", hooks=[on_bash])],
        },
    )
    async with ClaudeSDKClient(options) as client:
        report["server_info"] = await client.get_server_info()
        await turn(client, "Write the notes.")
        await turn(client, "Wait a while.", interrupt_on="Bash")
        await client.set_permission_mode("plan")
        await turn(client, "Now write again.")
    print(json.dumps(report, default=str))


asyncio.run(main())
