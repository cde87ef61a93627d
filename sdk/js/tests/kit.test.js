// Unit tests of the kit under plain Node: `node --test sdk/js/tests/`.
// They call the `tools` export the way the component's bindings do, so the
// shapes checked here are the contract's (see tests/plugins/py-echo).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ContractError,
  Danger,
  ErrorKind,
  ToolError,
  defineTool,
  exportTools,
  isTool,
  log,
  setLogSink,
  toErrorValue,
  toOutput,
  validateInput,
} from "../kaizen-sdk/index.js";

// The internal errors these tests provoke log their stacks; keep them out
// of the test output (the tests that check logging set their own sink).
setLogSink(() => {});

const CTX = { sessionId: "s1", callId: "c1", workspace: "/ws", cwd: "/ws/sub" };

const echo = defineTool({
  name: "Echo",
  description: "Returns the text it was given.",
  input: {
    type: "object",
    properties: {
      text: { type: "string", description: "The text to echo." },
      times: { type: "integer", default: 1 },
    },
    required: ["text"],
  },
  readOnly: true,
  danger: "safe",
  call: ({ text, times }) => ({ text: text.repeat(times), metadata: { length: text.length } }),
});

/** Calls `tools.call` as the bindings do: the output, or the thrown payload. */
async function callOf(tools, name, input, ctx = CTX) {
  try {
    return { ok: await tools.call(ctx, name, typeof input === "string" ? input : JSON.stringify(input)) };
  } catch (err) {
    assert.ok(Object.hasOwn(err, "payload"), `call threw without a payload: ${err}`);
    return { err: err.payload };
  }
}

function single(def) {
  return exportTools(defineTool({ name: "T", description: "A test tool.", ...def }));
}

test("the spec carries the schema as JSON text and the flags", () => {
  const tools = exportTools(echo);
  assert.deepEqual(tools.tools(), [
    {
      name: "Echo",
      description: "Returns the text it was given.",
      inputSchema: JSON.stringify(echo.input),
      danger: "safe",
      readOnly: true,
    },
  ]);
});

test("a tool without input, danger or readOnly gets the defaults", () => {
  const [spec] = single({ call: () => "x" }).tools();
  assert.equal(spec.inputSchema, '{"type":"object","properties":{}}');
  assert.equal(spec.danger, Danger.Moderate);
  assert.equal(spec.readOnly, false);
});

test("definition mistakes throw at once, naming the fix", () => {
  const ok = { name: "T", description: "d", call: () => "" };
  const cases = [
    [{ ...ok, name: "has space" }, /\[A-Za-z0-9_-\]\{1,64\}/],
    [{ ...ok, name: "x".repeat(65) }, /name/],
    [{ ...ok, description: " " }, /description/],
    [{ ...ok, input: { type: "string" } }, /must describe an object/],
    [{ ...ok, input: [] }, /JSON Schema object/],
    [{ ...ok, readOnly: "yes" }, /readOnly/],
    [{ ...ok, danger: "high" }, /safe, moderate, dangerous/],
    [{ ...ok, call: "nope" }, /call/],
  ];
  for (const [def, message] of cases) {
    assert.throws(() => defineTool(def), { name: "TypeError", message });
  }
  assert.throws(() => defineTool(), /pass an object/);
});

test("exportTools refuses duplicates, non-tools and nothing", () => {
  assert.throws(() => exportTools(echo, echo), /two tools are named `Echo`/);
  assert.throws(() => exportTools(echo, { name: "X" }), /argument 2 is not a tool/);
  assert.throws(() => exportTools(), /pass the tools/);
  assert.equal(exportTools([echo]).tools().length, 1, "arrays are flattened");
  assert.ok(isTool(echo));
  assert.ok(!isTool({ name: "Echo" }));
});

test("a text result becomes one text part; metadata becomes JSON text", async () => {
  const { ok } = await callOf(exportTools(echo), "Echo", { text: "hi", times: 2 });
  assert.deepEqual(ok, { content: [{ tag: "text", val: "hihi" }], metadata: '{"length":2}' });
});

test("defaults are filled in without changing the schema", async () => {
  const { ok } = await callOf(exportTools(echo), "Echo", { text: "hi" });
  assert.equal(ok.content[0].val, "hi");
  assert.equal(echo.input.properties.times.default, 1);
});

test("the call context reaches the tool", async () => {
  let seen;
  await callOf(single({ call: (_input, ctx) => void (seen = ctx) }), "T", {});
  assert.deepEqual(seen, CTX);
});

test("result forms: string, nothing, content parts, images", async () => {
  const image = new Uint8Array([137, 80, 78, 71]);
  const cases = [
    ["plain", { content: [{ tag: "text", val: "plain" }], metadata: undefined }],
    [undefined, { content: [], metadata: undefined }],
    [{ metadata: [1, 2] }, { content: [], metadata: "[1,2]" }],
    [
      { text: "first", content: ["second", { type: "text", text: "third" }] },
      {
        content: [
          { tag: "text", val: "first" },
          { tag: "text", val: "second" },
          { tag: "text", val: "third" },
        ],
        metadata: undefined,
      },
    ],
    [
      { content: [{ type: "image", mediaType: "image/png", data: image.buffer }] },
      { content: [{ tag: "image", val: { mediaType: "image/png", data: image } }], metadata: undefined },
    ],
  ];
  for (const [result, expected] of cases) {
    const { ok } = await callOf(single({ call: () => result }), "T", {});
    assert.deepEqual(ok, expected);
  }
});

test("a malformed result is an internal error that says what to return", async () => {
  const cycle = {};
  cycle.self = cycle;
  const cases = [
    [42, /must be a string or \{ text \| content, metadata \}, not integer/],
    [{ answer: 1 }, /without `text` or `content`/],
    [{ text: "x", metadata: cycle }, /`metadata` is not JSON-serializable/],
    [{ content: [7] }, /a content part must be/],
    [{ content: "x" }, /`content` must be an array/],
    [{ content: [{ type: "image", mediaType: "image/png", data: "AAAA" }] }, /image data must be/],
  ];
  for (const [result, message] of cases) {
    const { err } = await callOf(single({ call: () => result }), "T", {});
    assert.equal(err.kind, "failed");
    assert.match(err.message, /^internal error in tool T/);
    assert.match(err.message, message);
  }
});

test("a missing required field is named with its type and description", async () => {
  const { err } = await callOf(exportTools(echo), "Echo", {});
  assert.deepEqual(err, {
    kind: "invalid-input",
    message: "invalid input for Echo: missing required field `text` (string): The text to echo.",
  });
});

test("validation covers types, enums, nested fields, items and unknown fields", () => {
  const schema = {
    type: "object",
    properties: {
      n: { type: "number" },
      i: { type: "integer" },
      mode: { enum: ["a", "b"] },
      opt: { type: ["string", "null"] },
      nested: {
        type: "object",
        properties: { deep: { type: "boolean" } },
        required: ["deep"],
        additionalProperties: false,
      },
      list: { type: "array", items: { type: "string" } },
      fixed: { const: 3 },
    },
  };
  const bad = (input, message) =>
    assert.throws(() => validateInput("V", schema, input), (err) => {
      assert.ok(err instanceof ToolError);
      assert.equal(err.kind, "invalid-input");
      assert.match(err.message, message);
      return true;
    });
  bad({ n: "1" }, /`n` must be number, not string/);
  bad({ i: 1.5 }, /`i` must be integer, not number/);
  bad({ mode: "c" }, /`mode` must be one of "a", "b"/);
  bad({ opt: 3 }, /`opt` must be string or null/);
  bad({ nested: {} }, /missing required field `nested.deep`/);
  bad({ nested: { deep: true, other: 1 } }, /unknown field `nested.other` \(known: deep\)/);
  bad({ list: ["a", 2] }, /`list\[1\]` must be string, not integer/);
  bad({ fixed: 4 }, /`fixed` must be 3/);
  bad([], /the input must be object, not array/);
  bad({ n: "x", i: "y" }, /`n` must be.*; `i` must be/);
  const good = { n: 1, i: 2, mode: "a", opt: null, nested: { deep: false }, list: ["x"], fixed: 3 };
  assert.equal(validateInput("V", schema, good), good);
});

test("input that is not JSON is an invalid-input error", async () => {
  const { err } = await callOf(exportTools(echo), "Echo", "{not json");
  assert.equal(err.kind, "invalid-input");
  assert.match(err.message, /^invalid input for Echo: not JSON/);
});

test("an unknown tool name is not-found, listing the tools", async () => {
  const { err } = await callOf(exportTools(echo), "Nope", {});
  assert.deepEqual(err, {
    kind: "not-found",
    message: "this plugin has no tool named `Nope`; its tools are: Echo",
  });
});

test("a ToolError keeps its kind and message", async () => {
  for (const kind of Object.values(ErrorKind)) {
    const { err } = await callOf(single({ call: () => { throw new ToolError(kind, `why ${kind}`); } }), "T", {});
    assert.deepEqual(err, { kind, message: `why ${kind}` });
  }
  const { err } = await callOf(single({ call: () => { throw ToolError.permissionDenied("no"); } }), "T", {});
  assert.equal(err.kind, "permission-denied");
});

test("a ToolError of an unknown kind is reported, not trapped", async () => {
  const { err } = await callOf(single({ call: () => { throw new ToolError("oops", "x"); } }), "T", {});
  assert.equal(err.kind, "failed");
  assert.match(err.message, /unknown kind "oops"; use one of invalid-input, not-found/);
});

test("a ToolError whose kind was changed afterwards is an internal error", () => {
  const err = ToolError.conflict("x");
  err.kind = "later";
  const value = toErrorValue("T", err);
  assert.equal(value.kind, "failed");
  assert.match(value.message, /ToolError: x/);
});

test("a ToolError from another copy of the kit counts", async () => {
  const other = await import("../kaizen-sdk/index.js?another-copy");
  assert.notEqual(other.ToolError, ToolError);
  const { err } = await callOf(single({ call: () => { throw other.ToolError.conflict("changed"); } }), "T", {});
  assert.deepEqual(err, { kind: "conflict", message: "changed" });
  assert.ok(new other.ToolError("timeout", "t") instanceof ToolError);
});

test("any other exception is an internal error with its text, and its stack is logged", async () => {
  const lines = [];
  setLogSink((level, message) => lines.push([level, message]));
  try {
    const { err } = await callOf(single({ call: (input) => input.missing.field }), "T", {});
    assert.equal(err.kind, "failed");
    assert.match(err.message, /^internal error in tool T \(a bug in the plugin, not a problem with the input\): TypeError: /);
    assert.equal(lines.length, 1);
    assert.equal(lines[0][0], "error");
    assert.match(lines[0][1], /T: internal error: TypeError[^]*kit\.test\.js/);
  } finally {
    setLogSink(() => {});
  }
  const { err } = await callOf(single({ call: () => { throw "plain words"; } }), "T", {});
  assert.match(err.message, /: plain words$/);
});

test("errors with Node file codes map to kinds", () => {
  const cases = { ENOENT: "not-found", EACCES: "permission-denied", EEXIST: "conflict", ETIMEDOUT: "timeout", EISDIR: "invalid-input" };
  for (const [code, kind] of Object.entries(cases)) {
    const err = Object.assign(new Error(`${code}: /x`), { code });
    assert.deepEqual(toErrorValue("T", err), { kind, message: `${code}: /x` });
  }
  assert.equal(toErrorValue("T", Object.assign(new Error("x"), { code: "ERR_OTHER" })).kind, "failed");
});

test("an async tool resolves or rejects like a sync one", async () => {
  const tools = exportTools(
    defineTool({ name: "Ok", description: "d", call: async () => { await null; return "later"; } }),
    defineTool({ name: "No", description: "d", call: async () => { await null; throw ToolError.timeout("slow"); } }),
    defineTool({ name: "Bug", description: "d", call: async () => { await null; return 1; } }),
  );
  const pending = tools.call(CTX, "Ok", "{}");
  assert.equal(typeof pending.then, "function");
  assert.deepEqual(await pending, { content: [{ tag: "text", val: "later" }], metadata: undefined });
  assert.deepEqual((await callOf(tools, "No", {})).err, { kind: "timeout", message: "slow" });
  assert.equal((await callOf(tools, "Bug", {})).err.kind, "failed");
});

test("a sync tool's call returns synchronously", () => {
  const result = exportTools(echo).call(CTX, "Echo", '{"text":"x"}');
  assert.equal(typeof result.then, "undefined");
  assert.throws(() => exportTools(echo).call(CTX, "Echo", "{}"), (err) => {
    assert.ok(err instanceof ContractError);
    assert.equal(err.payload.kind, "invalid-input");
    return true;
  });
});

test("where promises cannot settle, an async tool fails clearly", () => {
  const key = Symbol.for("kaizen-sdk.sync-only");
  globalThis[key] = "the QuickJS backend";
  try {
    const tools = exportTools(defineTool({ name: "A", description: "d", call: async () => "x" }));
    assert.throws(() => tools.call(CTX, "A", "{}"), (err) => {
      assert.equal(err.payload.kind, "failed");
      assert.match(err.payload.message, /tool A is async, but this plugin was built for the QuickJS backend/);
      return true;
    });
  } finally {
    delete globalThis[key];
  }
});

test("log writes to the host's sink, and a failing sink fails nothing", async () => {
  const host = Symbol.for("kaizen-sdk.log-sink");
  const lines = [];
  globalThis[host] = (level, message) => lines.push(`${level}:${message}`);
  try {
    log.trace("t");
    log.debug("d");
    log.info("i");
    log.warn("w");
    log.error("e");
    assert.deepEqual(lines, ["trace:t", "debug:d", "info:i", "warn:w", "error:e"]);
    globalThis[host] = () => {
      throw new Error("host gone");
    };
    const tools = single({ call: () => { log.info("x"); return "fine"; } });
    assert.equal((await callOf(tools, "T", {})).ok.content[0].val, "fine");
  } finally {
    setLogSink(() => {});
  }
  assert.throws(() => setLogSink("stderr"), /pass a function/);
  setLogSink(null);
  assert.equal(globalThis[host], undefined, "null restores the default");
  const printed = [];
  const original = console.error;
  const level = process.env.KAIZEN_LOG;
  console.error = (line) => printed.push(line);
  delete process.env.KAIZEN_LOG;
  try {
    log.debug("hidden below info");
    log.warn("shown");
  } finally {
    console.error = original;
    if (level !== undefined) process.env.KAIZEN_LOG = level;
    setLogSink(() => {});
  }
  assert.deepEqual(printed, ["[warn] shown"]);
});

test("invoke runs a tool as the host would, for plugin tests", async () => {
  const result = await echo.invoke({ text: "ab", times: 2 });
  assert.deepEqual(result, {
    text: "abab",
    content: [{ type: "text", text: "abab" }],
    metadata: { length: 2 },
  });
  await assert.rejects(echo.invoke({}), (err) => {
    assert.ok(err instanceof ToolError);
    assert.equal(err.kind, "invalid-input");
    return true;
  });
  const where = defineTool({ name: "Where", description: "d", call: (_input, c) => `${c.sessionId} ${c.cwd}` });
  assert.equal((await where.invoke({})).text, `test-session ${process.cwd()}`);
  assert.equal((await where.invoke({}, CTX)).text, "s1 /ws/sub");
});

test("toOutput and toErrorValue are the conversions call uses", () => {
  assert.deepEqual(toOutput("T", "x"), { content: [{ tag: "text", val: "x" }], metadata: undefined });
  assert.deepEqual(toErrorValue("T", ToolError.notFound("gone")), { kind: "not-found", message: "gone" });
});
