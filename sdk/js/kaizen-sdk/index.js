// Write Kaizen tool plugins in JavaScript.
//
// A plugin module defines its tools with `defineTool` and exports them as
// the contract's `tools` interface with `exportTools`:
//
//   import { defineTool, exportTools, ToolError } from "./kaizen-sdk/index.js";
//
//   export const greet = defineTool({
//     name: "Greet",
//     description: "Greets someone by name.",
//     input: {
//       type: "object",
//       properties: { name: { type: "string", description: "Who to greet." } },
//       required: ["name"],
//     },
//     readOnly: true,
//     danger: "safe",
//     call: ({ name }) => `Hello, ${name}!`,
//   });
//
//   export const tools = exportTools(greet);
//
// This file is plain JavaScript without imports, so it runs under Node (for
// the plugin's unit tests) as well as inside the component. The one piece
// that needs the host, the `log` import of `kaizen:plugin/log`, is wired in
// by the entry module the build generates (see `component.js`), through a
// well-known global, so that any copy of this file finds it.

/** The contract version these shapes follow (`kaizen:plugin@0.1.4`). */
export const CONTRACT = "0.1.4";

/** Why a call failed, as the contract's `error-kind` spells it. */
export const ErrorKind = Object.freeze({
  /** The input was wrong (bad value, missing file named in it, ...). */
  InvalidInput: "invalid-input",
  /** Something the input named does not exist. */
  NotFound: "not-found",
  /** The plugin was not allowed to do what the input asked. */
  PermissionDenied: "permission-denied",
  /** The state changed under the tool (e.g. a file edited since read). */
  Conflict: "conflict",
  /** The work took too long. */
  Timeout: "timeout",
  /** Anything else. */
  Failed: "failed",
});

const ERROR_KINDS = Object.values(ErrorKind);

/** How much harm a tool can do, as the contract's `danger-level` spells it. */
export const Danger = Object.freeze({
  /** Reads only; can never change anything. */
  Safe: "safe",
  /** Changes files inside the granted directories. */
  Moderate: "moderate",
  /** Runs programs, reaches the network, or deletes data. */
  Dangerous: "dangerous",
});

const DANGERS = Object.values(Danger);

// A brand instead of `instanceof`: a plugin may bundle two copies of this
// file (its own and a dependency's), and an error from either must count.
const TOOL_ERROR = Symbol.for("kaizen-sdk.tool-error");
const TOOL = Symbol.for("kaizen-sdk.tool");
// Where the generated entry module puts the host's `log` function.
const LOG_SINK = Symbol.for("kaizen-sdk.log-sink");
// Set by the entry module when the engine cannot wait for a promise (the
// QuickJS backend without component-model async); names the engine.
const SYNC_ONLY = Symbol.for("kaizen-sdk.sync-only");

/**
 * A failed call whose message the model sees: say what went wrong and what
 * to do next. `kind` is one of `ErrorKind`'s values.
 */
export class ToolError extends Error {
  constructor(kind, message) {
    if (!ERROR_KINDS.includes(kind)) {
      throw new TypeError(
        `ToolError: unknown kind ${JSON.stringify(kind)}; use one of ${ERROR_KINDS.join(", ")} (or ErrorKind.*)`,
      );
    }
    super(String(message));
    this.name = "ToolError";
    this.kind = kind;
  }

  /** True for a ToolError from any copy of this kit. */
  static [Symbol.hasInstance](value) {
    return value != null && value[TOOL_ERROR] === true;
  }

  /** The input was wrong. */
  static invalidInput(message) {
    return new ToolError(ErrorKind.InvalidInput, message);
  }

  /** Something the input named does not exist. */
  static notFound(message) {
    return new ToolError(ErrorKind.NotFound, message);
  }

  /** The plugin was not allowed to do what the input asked. */
  static permissionDenied(message) {
    return new ToolError(ErrorKind.PermissionDenied, message);
  }

  /** The state changed under the tool. */
  static conflict(message) {
    return new ToolError(ErrorKind.Conflict, message);
  }

  /** The work took too long. */
  static timeout(message) {
    return new ToolError(ErrorKind.Timeout, message);
  }

  /** Any other failure. */
  static failed(message) {
    return new ToolError(ErrorKind.Failed, message);
  }
}
Object.defineProperty(ToolError.prototype, TOOL_ERROR, { value: true });

// Node-style error codes (`err.code`) mapped to the closest kind, as the
// Rust kit maps `std::io::ErrorKind`: file code bundled with Node shims
// throws these.
const CODE_KINDS = {
  ENOENT: ErrorKind.NotFound,
  EACCES: ErrorKind.PermissionDenied,
  EPERM: ErrorKind.PermissionDenied,
  EROFS: ErrorKind.PermissionDenied,
  EEXIST: ErrorKind.Conflict,
  ENOTEMPTY: ErrorKind.Conflict,
  EBUSY: ErrorKind.Conflict,
  ETIMEDOUT: ErrorKind.Timeout,
  EINVAL: ErrorKind.InvalidInput,
  EISDIR: ErrorKind.InvalidInput,
  ENOTDIR: ErrorKind.InvalidInput,
  ENAMETOOLONG: ErrorKind.InvalidInput,
};

/**
 * The contract-level error (`{ kind, message }`) for anything `call` threw.
 * A ToolError keeps its kind and message; an error with a Node-style file
 * code gets the matching kind; anything else is a bug in the tool, reported
 * as `failed` with the exception's text (and its stack in the host's log),
 * never as a trap.
 */
export function toErrorValue(toolName, err) {
  // The kind is checked again: one changed after construction would make
  // the bindings throw, which traps.
  if (err instanceof ToolError && ERROR_KINDS.includes(err.kind)) {
    return { kind: err.kind, message: String(err.message) };
  }
  const code = err != null && typeof err === "object" ? err.code : undefined;
  if (typeof code === "string" && Object.hasOwn(CODE_KINDS, code)) {
    return { kind: CODE_KINDS[code], message: String(err.message ?? code) };
  }
  const text = describe(err);
  if (err instanceof Error && err.stack) {
    log.error(`${toolName}: internal error: ${text}\n${err.stack}`);
  }
  return {
    kind: ErrorKind.Failed,
    message: `internal error in tool ${toolName} (a bug in the plugin, not a problem with the input): ${text}`,
  };
}

function describe(value) {
  if (value instanceof Error) {
    return `${value.name || "Error"}: ${value.message}`;
  }
  try {
    return typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

// ---------------------------------------------------------------------------
// Logging

const LEVELS = ["trace", "debug", "info", "warn", "error"];

/**
 * The fallback outside a component, where the plugin's tests run: stderr,
 * from `info` up (from `debug` or `trace` when KAIZEN_LOG says so, as the
 * host does).
 */
function consoleSink(level, message) {
  const wanted = globalThis.process?.env?.KAIZEN_LOG;
  const floor = LEVELS.includes(wanted) ? wanted : "info";
  if (LEVELS.indexOf(level) >= LEVELS.indexOf(floor)) {
    console.error(`[${level}] ${message}`);
  }
}

function emit(level, message) {
  const sink = globalThis[LOG_SINK] ?? consoleSink;
  try {
    sink(level, String(message));
  } catch {
    // Logging must never turn a good call into a failed one.
  }
}

/**
 * Writes to the host's log, attributed to the plugin (`KAIZEN_LOG=debug`
 * shows it). Under plain Node the lines go to stderr instead.
 */
export const log = Object.freeze({
  trace: (message) => emit("trace", message),
  debug: (message) => emit("debug", message),
  info: (message) => emit("info", message),
  warn: (message) => emit("warn", message),
  error: (message) => emit("error", message),
});

/**
 * Replaces where `log` writes: `fn(level, message)`, or `null` for the
 * default (the host inside a component, stderr under Node). For tests that
 * check what a tool logs.
 */
export function setLogSink(fn) {
  if (fn !== null && typeof fn !== "function") {
    throw new TypeError("setLogSink: pass a function (level, message) => void, or null");
  }
  if (fn === null) {
    delete globalThis[LOG_SINK];
  } else {
    globalThis[LOG_SINK] = fn;
  }
}

// ---------------------------------------------------------------------------
// Input validation
//
// The host validates every call against the full schema before the plugin
// runs; this covers the common keywords again so that a tool called from a
// Node test, or by a host that skipped the check, fails with the same clear
// message instead of a TypeError deep in `call`.

function typeOf(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (Number.isInteger(value)) return "integer";
  return typeof value;
}

function matchesType(value, type) {
  const actual = typeOf(value);
  if (type === "number") return actual === "number" || actual === "integer";
  return actual === type;
}

function at(path) {
  return path === "" ? "the input" : `\`${path}\``;
}

/** The problems of `value` against `schema`, each a sentence. */
function problems(schema, value, path, out) {
  if (schema === true || schema == null || typeof schema !== "object") {
    if (schema === false) out.push(`${at(path)} is not allowed`);
    return out;
  }
  const types = schema.type === undefined ? [] : [].concat(schema.type);
  if (types.length > 0 && !types.some((t) => matchesType(value, t))) {
    out.push(`${at(path)} must be ${types.join(" or ")}, not ${typeOf(value)}`);
    return out;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => sameJson(e, value))) {
    out.push(`${at(path)} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}`);
  }
  if ("const" in schema && !sameJson(schema.const, value)) {
    out.push(`${at(path)} must be ${JSON.stringify(schema.const)}`);
  }
  if (typeOf(value) === "object") {
    const properties = schema.properties ?? {};
    for (const key of Array.isArray(schema.required) ? schema.required : []) {
      if (!Object.hasOwn(value, key)) {
        const description = properties[key]?.description;
        const type = properties[key]?.type;
        out.push(
          `missing required field \`${join(path, key)}\`${type ? ` (${[].concat(type).join(" or ")})` : ""}${description ? `: ${description}` : ""}`,
        );
      }
    }
    for (const [key, sub] of Object.entries(properties)) {
      if (Object.hasOwn(value, key)) problems(sub, value[key], join(path, key), out);
    }
    if (schema.additionalProperties === false) {
      const extra = Object.keys(value).filter((key) => !Object.hasOwn(properties, key));
      if (extra.length > 0) {
        const known = Object.keys(properties);
        out.push(
          `unknown field${extra.length > 1 ? "s" : ""} ${extra.map((k) => `\`${join(path, k)}\``).join(", ")}${known.length ? ` (known: ${known.join(", ")})` : ""}`,
        );
      }
    }
  }
  if (Array.isArray(value) && schema.items && typeof schema.items === "object") {
    value.forEach((item, i) => problems(schema.items, item, `${path}[${i}]`, out));
  }
  return out;
}

function join(path, key) {
  return path === "" ? key : `${path}.${key}`;
}

function sameJson(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Checks `input` against `schema` (type, required, properties, items,
 * enum, const, additionalProperties: false) and fills top-level `default`s
 * of absent fields. Throws an `invalid-input` ToolError naming every
 * problem; returns the input (a copy when defaults were added).
 */
export function validateInput(toolName, schema, input) {
  const found = problems(schema, input, "", []);
  if (found.length > 0) {
    throw new ToolError(
      ErrorKind.InvalidInput,
      `invalid input for ${toolName}: ${found.join("; ")}`,
    );
  }
  const properties = schema?.properties;
  if (typeOf(input) !== "object" || properties == null) return input;
  let filled = input;
  for (const [key, sub] of Object.entries(properties)) {
    if (!Object.hasOwn(input, key) && sub != null && Object.hasOwn(sub, "default")) {
      if (filled === input) filled = { ...input };
      // A copy, so that a call cannot change the schema's default.
      filled[key] = JSON.parse(JSON.stringify(sub.default));
    }
  }
  return filled;
}

// ---------------------------------------------------------------------------
// Results

function toBytes(data, where) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (Array.isArray(data)) return Uint8Array.from(data);
  throw new TypeError(`${where}: image data must be a Uint8Array, ArrayBuffer or array of bytes`);
}

function toPart(part, where) {
  if (typeof part === "string") return { tag: "text", val: part };
  if (part != null && typeof part === "object") {
    if (part.type === "text" && typeof part.text === "string") {
      return { tag: "text", val: part.text };
    }
    if (part.type === "image" && typeof part.mediaType === "string") {
      return {
        tag: "image",
        val: { mediaType: part.mediaType, data: toBytes(part.data, where) },
      };
    }
  }
  throw new TypeError(
    `${where}: a content part must be a string, { type: "text", text } or { type: "image", mediaType, data }, not ${describe(part)}`,
  );
}

/**
 * The contract's `tool-output` for what `call` returned: a string (one text
 * part), `undefined` (no content), or `{ text, metadata }` /
 * `{ content: [parts], metadata }` where a part is a string,
 * `{ type: "text", text }` or `{ type: "image", mediaType, data }` and
 * `metadata` is any JSON value for programs (the model does not see it).
 */
export function toOutput(toolName, result) {
  const where = `the result of ${toolName}`;
  if (result === undefined || result === null) return { content: [], metadata: undefined };
  if (typeof result === "string") return { content: [{ tag: "text", val: result }], metadata: undefined };
  if (typeof result !== "object" || Array.isArray(result)) {
    throw new TypeError(
      `${where} must be a string or { text | content, metadata }, not ${typeOf(result)} (convert it with String(...) or JSON.stringify(...))`,
    );
  }
  let content;
  if (result.content !== undefined) {
    if (!Array.isArray(result.content)) {
      throw new TypeError(`${where}: \`content\` must be an array of parts`);
    }
    content = result.content.map((part) => toPart(part, where));
    if (typeof result.text === "string") content.unshift({ tag: "text", val: result.text });
  } else if (typeof result.text === "string") {
    content = [{ tag: "text", val: result.text }];
  } else if (result.metadata === undefined) {
    throw new TypeError(
      `${where} is an object without \`text\` or \`content\`; return { text: "...", metadata: {...} }, or JSON.stringify(...) it to show the model the whole object`,
    );
  } else {
    content = [];
  }
  let metadata;
  if (result.metadata !== undefined) {
    try {
      metadata = JSON.stringify(result.metadata);
    } catch (err) {
      throw new TypeError(`${where}: \`metadata\` is not JSON-serializable: ${describe(err)}`);
    }
  }
  return { content, metadata };
}

/** The text parts of a contract-level output, joined by newlines. */
function textOf(output) {
  return output.content
    .filter((part) => part.tag === "text")
    .map((part) => part.val)
    .join("\n");
}

// ---------------------------------------------------------------------------
// Tools

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const EMPTY_INPUT = Object.freeze({ type: "object", properties: {} });

// Runs `fn` and passes its result (awaited when it is a promise) to
// `onOk`, or what it threw (or rejected with) to `onErr`. Synchronous tools
// stay synchronous, which engines without an event loop need.
function settle(fn, onOk, onErr) {
  let result;
  try {
    result = fn();
  } catch (err) {
    return onErr(err);
  }
  if (result != null && typeof result.then === "function") {
    return result.then(
      (value) => {
        try {
          return onOk(value);
        } catch (err) {
          return onErr(err);
        }
      },
      onErr,
    );
  }
  try {
    return onOk(result);
  } catch (err) {
    return onErr(err);
  }
}

function testContext() {
  const cwd = globalThis.process?.cwd?.() ?? "/";
  return { sessionId: "test-session", callId: "test-call", workspace: cwd, cwd };
}

/**
 * Defines one tool. `name` is what the model calls it by
 * (`[A-Za-z0-9_-]{1,64}`, unique across loaded plugins), `description`
 * tells the model what it does and when to use it, `input` is the JSON
 * Schema (draft 2020-12) of its input object (default: no arguments),
 * `readOnly` (default false) lets calls run concurrently, `danger`
 * (default "moderate") feeds the permission rules, and
 * `call(input, ctx)` does the work: it returns a result (see `toOutput`),
 * maybe through a promise, and throws a ToolError to fail.
 *
 * Mistakes in the definition throw at once, so they fail the build (the
 * module's top level runs then) rather than a call.
 */
export function defineTool(def) {
  if (def == null || typeof def !== "object") {
    throw new TypeError("defineTool: pass an object { name, description, input, call }");
  }
  const { name, description, input = EMPTY_INPUT, readOnly = false, danger = Danger.Moderate, call } = def;
  const label = typeof name === "string" ? `defineTool(${JSON.stringify(name)})` : "defineTool";
  if (typeof name !== "string" || !NAME.test(name)) {
    throw new TypeError(`${label}: \`name\` must match [A-Za-z0-9_-]{1,64}, e.g. "WordCount"`);
  }
  if (typeof description !== "string" || description.trim() === "") {
    throw new TypeError(`${label}: \`description\` must say what the tool does and when to use it`);
  }
  if (input == null || typeof input !== "object" || Array.isArray(input)) {
    throw new TypeError(`${label}: \`input\` must be a JSON Schema object such as { type: "object", properties: {...} }`);
  }
  if (input.type !== "object") {
    throw new TypeError(`${label}: \`input\` must describe an object (\`type: "object"\`): the model always sends one`);
  }
  let inputSchema;
  try {
    inputSchema = JSON.stringify(input);
  } catch (err) {
    throw new TypeError(`${label}: \`input\` is not JSON-serializable: ${describe(err)}`);
  }
  if (typeof readOnly !== "boolean") {
    throw new TypeError(`${label}: \`readOnly\` must be true or false`);
  }
  if (!DANGERS.includes(danger)) {
    throw new TypeError(`${label}: \`danger\` must be one of ${DANGERS.join(", ")} (or Danger.*)`);
  }
  if (typeof call !== "function") {
    throw new TypeError(`${label}: \`call\` must be a function (input, ctx) => result`);
  }
  const spec = Object.freeze({ name, description, inputSchema, danger, readOnly });

  /** Validates `value` (already parsed), runs `call`, converts its result. */
  function run(value, ctx, onOk, onErr) {
    return settle(
      () => call(validateInput(name, input, value), ctx),
      (result) => onOk(toOutput(name, result)),
      (err) => onErr(toErrorValue(name, err)),
    );
  }

  return Object.freeze({
    [TOOL]: true,
    name,
    description,
    input,
    readOnly,
    danger,
    call,
    /** The contract's `tool-spec`. */
    spec: () => spec,
    /**
     * Runs the tool as the host would, on an input object (not JSON text):
     * validation, `call`, result conversion. Resolves to
     * `{ text, content, metadata }` (metadata parsed back); rejects with a
     * ToolError, internal errors included. For the plugin's tests.
     */
    invoke(value, ctx = testContext()) {
      return new Promise((resolve, reject) => {
        run(
          value,
          ctx,
          (output) =>
            resolve({
              text: textOf(output),
              content: output.content.map((part) =>
                part.tag === "text"
                  ? { type: "text", text: part.val }
                  : { type: "image", mediaType: part.val.mediaType, data: part.val.data },
              ),
              metadata: output.metadata === undefined ? undefined : JSON.parse(output.metadata),
            }),
          (error) => reject(new ToolError(error.kind, error.message)),
        );
      });
    },
    /** The contract-level call: `{ tag: "ok" | "err", val }`, maybe as a promise. */
    callRaw(ctx, value) {
      return run(
        value,
        ctx,
        (output) => ({ tag: "ok", val: output }),
        (error) => ({ tag: "err", val: error }),
      );
    },
  });
}

/** True for what `defineTool` returned (from any copy of this kit). */
export function isTool(value) {
  return value != null && value[TOOL] === true;
}

/**
 * The `tools` interface of the contract for the given tools: export it
 * from the plugin's module as `export const tools = exportTools(a, b)`.
 *
 * Its `call` follows the bindings' convention for a `result`: it returns
 * the `tool-output` (or a promise of it, for an async tool) and throws (or
 * rejects with) `{ payload: tool-error }` for a failure, which every
 * componentize-js version and jco turn into the `err` case. Bad JSON,
 * unknown tools, ToolErrors and bugs all end there; nothing reaches the
 * bindings as an exception of their own, which would trap the instance.
 */
export function exportTools(...list) {
  const flat = list.flat();
  if (flat.length === 0) {
    throw new TypeError("exportTools: pass the tools the plugin provides, e.g. exportTools(greet)");
  }
  const byName = new Map();
  flat.forEach((tool, i) => {
    if (!isTool(tool)) {
      throw new TypeError(`exportTools: argument ${i + 1} is not a tool; make it with defineTool({...})`);
    }
    if (byName.has(tool.name)) {
      throw new TypeError(`exportTools: two tools are named \`${tool.name}\`; tool names must be unique`);
    }
    byName.set(tool.name, tool);
  });
  const specs = flat.map((tool) => tool.spec());
  return Object.freeze({
    /** The tools this component provides. */
    tools: () => specs.map((spec) => ({ ...spec })),
    /** Runs tool `name` with `input` (JSON text). */
    call(ctx, name, input) {
      const result = callTagged(byName, ctx, name, input);
      if (typeof result.then !== "function") return unwrap(result);
      const engine = globalThis[SYNC_ONLY];
      if (engine) {
        // The promise can never settle there: fail clearly instead of
        // handing the bindings a promise, which traps.
        return unwrap({
          tag: "err",
          val: {
            kind: ErrorKind.Failed,
            message: `tool ${name} is async, but this plugin was built for ${engine}, which runs calls synchronously; make \`call\` synchronous or build with the default backend`,
          },
        });
      }
      return result.then(unwrap);
    },
  });
}

/** The bindings' form of a result: the ok value, or a thrown payload. */
function unwrap(result) {
  if (result.tag === "ok") return result.val;
  throw new ContractError(result.val);
}

/**
 * What `exportTools(...).call` throws for the `err` case: the bindings read
 * the contract's `tool-error` from its own `payload` property.
 */
export class ContractError extends Error {
  constructor(payload) {
    super(payload.message);
    this.name = "ContractError";
    this.payload = payload;
  }
}

function callTagged(byName, ctx, name, input) {
  const tool = byName.get(name);
  if (tool === undefined) {
    return {
      tag: "err",
      val: {
        kind: ErrorKind.NotFound,
        message: `this plugin has no tool named \`${name}\`; its tools are: ${[...byName.keys()].join(", ")}`,
      },
    };
  }
  let value;
  try {
    value = JSON.parse(input);
  } catch (err) {
    return {
      tag: "err",
      val: { kind: ErrorKind.InvalidInput, message: `invalid input for ${name}: not JSON (${describe(err)})` },
    };
  }
  return tool.callRaw(ctx, value);
}
