import { defineTool, exportTools, ToolError, type FromSchema } from "../../kaizen-sdk/index.js";

const greet = defineTool({
  name: "Greet",
  description: "Greets.",
  input: {
    type: "object",
    properties: {
      name: { type: "string" },
      times: { type: "integer", default: 1 },
      loud: { type: "boolean" },
      tags: { type: "array", items: { type: "string" } },
      mode: { enum: ["a", "b"] },
      nick: { type: ["string", "null"] },
    },
    required: ["name"],
  },
  call(input) {
    const n: string = input.name;
    const t: number = input.times;
    const l: boolean | undefined = input.loud;
    const tags: string[] | undefined = input.tags;
    const m: "a" | "b" | undefined = input.mode;
    const k: string | null | undefined = input.nick;
    // @ts-expect-error name is a string
    const bad: number = input.name;
    if (!n) throw ToolError.invalidInput("no name");
    return { text: `${n}${t}${l}${tags}${m}${k}${bad}`, metadata: { n } };
  },
});
const none = defineTool({ name: "None", description: "x", call: (input) => { const r: Record<string, never> = input; return String(r); } });
// @ts-expect-error a result must be text or an output object
defineTool({ name: "Bad", description: "x", call: () => 42 });
type T = FromSchema<{ type: "object"; properties: { a: { type: "string" } } }>;
const t: T = {};
export const tools = exportTools(greet, none);
void t;
