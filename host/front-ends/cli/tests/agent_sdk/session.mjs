// The session of session.py, driven through Claude's Agent SDK for
// TypeScript with `kaizen` as its CLI (`pathToClaudeCodeExecutable`):
// three turns in one streaming query, the program answering the
// permission questions (one with its own input), serving a tool of its
// own (an in-process MCP server), running hooks of its own, interrupting
// the second turn and switching to plan mode before the third. The report on stdout is
// what the Rust test checks, with session.py's shape.
//
// Usage: node session.mjs KAIZEN WORKSPACE NODE_MODULES (where the SDK
// is installed)

import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [kaizen, workspace, modules] = process.argv.slice(2);
const sdk = join(modules, "@anthropic-ai", "claude-agent-sdk", "sdk.mjs");
const { query, tool, createSdkMcpServer } = await import(pathToFileURL(sdk).href);
const { z } = createRequire(join(modules, "modules.js"))("zod");
const report = { asked: [], turns: [], server_info: null, tallied: [], hooked: [] };

// Adds to every prompt, as a UserPromptSubmit hook may.
const onPrompt = async (input) => {
  report.hooked.push(input.hook_event_name);
  return {
    hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "The program says hi." },
  };
};

// Sees each Bash call before it runs.
const onBash = async (input) => {
  report.hooked.push(input.tool_input.command);
  return {};
};

// The program's own tool, served in process.
const tally = tool("tally", "Counts the words of a text.", { text: z.string() }, async ({ text }) => {
  report.tallied.push(text);
  return { content: [{ type: "text", text: `${text.split(/\s+/).filter(Boolean).length} words` }] };
});

function describe(message) {
  switch (message.type) {
    case "system":
      return { kind: "SystemMessage", subtype: message.subtype, data: message };
    case "assistant":
    case "user": {
      const content = Array.isArray(message.message.content) ? message.message.content : [];
      const blocks = content.map((block) => {
        if (block.type === "text") return { text: block.text };
        if (block.type === "tool_use") return { tool_use: block.name, id: block.id, input: block.input };
        if (block.type === "tool_result")
          return { tool_result: block.tool_use_id, is_error: block.is_error, content: block.content };
        return { other: block.type };
      });
      const kind = message.type === "assistant" ? "AssistantMessage" : "UserMessage";
      return { kind, blocks, parent: message.parent_tool_use_id };
    }
    case "result":
      return { kind: "ResultMessage", ...message };
    default:
      return { kind: message.type };
  }
}

// The prompts, each sent once the turn before it has its result.
let next;
const ready = () => new Promise((resolve) => (next = resolve));
async function* prompts() {
  for (const text of ["Write the notes.", "Wait a while.", "Now write again."]) {
    yield { type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" };
    await ready();
  }
}

const session = query({
  prompt: prompts(),
  options: {
    pathToClaudeCodeExecutable: kaizen,
    cwd: workspace,
    model: "gpt-4o-mini",
    mcpServers: { counter: createSdkMcpServer({ name: "counter", tools: [tally] }) },
    hooks: {
      UserPromptSubmit: [{ hooks: [onPrompt] }],
      PreToolUse: [{ matcher: "Bash", hooks: [onBash] }],
    },
    canUseTool: async (toolName, input, { toolUseID, suggestions }) => {
      report.asked.push({ tool: toolName, input, tool_use_id: toolUseID, suggestions: (suggestions ?? []).length });
      if (toolName === "Write") {
        return { behavior: "allow", updatedInput: { ...input, content: "written by the program\n" } };
      }
      return { behavior: "allow", updatedInput: input };
    },
  },
});

report.server_info = await session.initializationResult?.().catch(() => null) ?? null;
let seen = [];
for await (const message of session) {
  seen.push(describe(message));
  const turn = report.turns.length;
  if (turn === 1 && message.type === "assistant" &&
      message.message.content.some((b) => b.type === "tool_use" && b.name === "Bash")) {
    await session.interrupt();
    seen.push({ kind: "interrupt sent" });
  }
  if (message.type === "result") {
    report.turns.push(seen);
    seen = [];
    if (report.turns.length === 2) await session.setPermissionMode("plan");
    if (report.turns.length === 3) break;
    next();
  }
}
console.log(JSON.stringify(report));
process.exit(0);
