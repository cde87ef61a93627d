// Unit tests of the tool, under plain Node: `node --test` (or `npm test`).
// `invoke` runs a tool as Kaizen would: input checks, `call`, the result.
import { test } from "node:test";
import assert from "node:assert/strict";
import { count, tools } from "./tool.js";

test("counts lines, words and characters", async () => {
  const result = await count.invoke({ text: "one two\nthree\n" });
  assert.equal(result.text, "lines: 2\nwords: 3\ncharacters: 14");
  assert.deepEqual(result.metadata, { lines: 2, words: 3, characters: 14 });
});

test("counts one thing when asked", async () => {
  const result = await count.invoke({ text: "héllo wörld", only: "characters" });
  assert.equal(result.text, "characters: 11");
});

test("an empty text is an invalid input", async () => {
  await assert.rejects(count.invoke({ text: "" }), { kind: "invalid-input", message: /empty/ });
});

test("a missing field is named", async () => {
  await assert.rejects(count.invoke({}), { kind: "invalid-input", message: /missing required field `text`/ });
});

test("the plugin exports the tool", () => {
  assert.deepEqual(tools.tools().map((spec) => spec.name), ["{{camel_name}}"]);
});
