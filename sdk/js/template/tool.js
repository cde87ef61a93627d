// @ts-check
import { defineTool, exportTools, ToolError, log } from "./kaizen-sdk/index.js";

export const count = defineTool({
  name: "{{camel_name}}",
  description: "Counts the lines, words and characters of a text. Use it instead of counting by hand.",
  input: {
    type: "object",
    properties: {
      text: { type: "string", description: "The text to count." },
      only: { enum: ["lines", "words", "characters", "all"], default: "all", description: "What to count." },
    },
    required: ["text"],
  },
  readOnly: true,
  danger: "safe",
  call({ text, only }) {
    if (text === "") throw new ToolError("invalid-input", "`text` is empty; pass the text to count");
    const counts = {
      lines: text.split("\n").length - (text.endsWith("\n") ? 1 : 0),
      words: text.split(/\s+/).filter(Boolean).length,
      characters: [...text].length,
    };
    log.debug(`counted ${counts.characters} characters`);
    const shown = only === "all" ? Object.entries(counts) : [[only, counts[only]]];
    return { text: shown.map(([what, n]) => `${what}: ${n}`).join("\n"), metadata: counts };
  },
});

export const tools = exportTools(count);
