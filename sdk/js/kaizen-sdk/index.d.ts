// Types of the Kaizen JavaScript kit (kaizen:plugin@0.1.4).
//
// `defineTool` infers the type of `call`'s input from the JSON Schema
// written inline (or from a TypeBox schema's static type), so TypeScript
// authors, and JavaScript authors with `// @ts-check`, get a typed input
// without a schema library.

/** The contract version these shapes follow. */
export declare const CONTRACT: "0.1.4";

/** Why a call failed, as the contract's `error-kind` spells it. */
export type ErrorKindName =
  | "invalid-input"
  | "not-found"
  | "permission-denied"
  | "conflict"
  | "timeout"
  | "failed";

export declare const ErrorKind: {
  /** The input was wrong (bad value, missing file named in it, ...). */
  readonly InvalidInput: "invalid-input";
  /** Something the input named does not exist. */
  readonly NotFound: "not-found";
  /** The plugin was not allowed to do what the input asked. */
  readonly PermissionDenied: "permission-denied";
  /** The state changed under the tool (e.g. a file edited since read). */
  readonly Conflict: "conflict";
  /** The work took too long. */
  readonly Timeout: "timeout";
  /** Anything else. */
  readonly Failed: "failed";
};

/** How much harm a tool can do; the host's permission rules use it. */
export type DangerLevel = "safe" | "moderate" | "dangerous";

export declare const Danger: {
  /** Reads only; can never change anything. */
  readonly Safe: "safe";
  /** Changes files inside the granted directories. */
  readonly Moderate: "moderate";
  /** Runs programs, reaches the network, or deletes data. */
  readonly Dangerous: "dangerous";
};

/**
 * A failed call whose message the model sees: say what went wrong and what
 * to do next.
 */
export declare class ToolError extends Error {
  constructor(kind: ErrorKindName, message: string);
  readonly kind: ErrorKindName;
  /** The input was wrong. */
  static invalidInput(message: string): ToolError;
  /** Something the input named does not exist. */
  static notFound(message: string): ToolError;
  /** The plugin was not allowed to do what the input asked. */
  static permissionDenied(message: string): ToolError;
  /** The state changed under the tool. */
  static conflict(message: string): ToolError;
  /** The work took too long. */
  static timeout(message: string): ToolError;
  /** Any other failure. */
  static failed(message: string): ToolError;
}

/** What `exportTools(...).call` throws for a failed call (`payload` is the contract's error). */
export declare class ContractError extends Error {
  constructor(payload: WitToolError);
  readonly payload: WitToolError;
}

/** What the host tells a tool about the call it is serving. */
export interface CallContext {
  /** The session this call belongs to. */
  sessionId: string;
  /** The id the model gave this tool call. */
  callId: string;
  /** Absolute path of the workspace. */
  workspace: string;
  /** Absolute path relative paths should resolve against. */
  cwd: string;
}

/** Bytes of an image. */
export type ImageData = Uint8Array | ArrayBuffer | ArrayBufferView | readonly number[];

/** One piece of a result as the model sees it. */
export type ContentPart =
  | string
  | { type: "text"; text: string }
  | { type: "image"; mediaType: string; data: ImageData };

/**
 * What `call` returns: text, nothing, or text/content parts with metadata
 * (one JSON value for programs; the model does not see it).
 */
export type ToolResult =
  | string
  | void
  | null
  | { text: string; content?: readonly ContentPart[]; metadata?: unknown }
  | { text?: string; content: readonly ContentPart[]; metadata?: unknown }
  | { text?: string; content?: readonly ContentPart[]; metadata: unknown };

/** A JSON Schema (draft 2020-12); the kit reads the keywords listed. */
export interface JsonSchema {
  type?: JsonTypeName | readonly JsonTypeName[];
  description?: string;
  properties?: { readonly [name: string]: JsonSchema | boolean };
  required?: readonly string[];
  items?: JsonSchema | boolean;
  enum?: readonly unknown[];
  const?: unknown;
  default?: unknown;
  additionalProperties?: JsonSchema | boolean;
  [keyword: string]: unknown;
}

export type JsonTypeName = "string" | "number" | "integer" | "boolean" | "null" | "array" | "object";

/** The schema of a tool's input: always an object. */
export interface ObjectSchema extends JsonSchema {
  type: "object";
}

/**
 * What `defineTool` accepts as `input`: any value whose `type` is
 * "object". Looser than ObjectSchema so that schema builders' types
 * (TypeBox's `TObject`, which has no index signature) fit too.
 */
export interface ObjectSchemaLike {
  readonly type: "object";
}

/**
 * The TypeScript type of values matching schema `S`, read from `type`,
 * `properties`, `required`, `items`, `enum` and `const` (TypeBox 1.x
 * schemas are read the same way; TypeBox 0.34's carry their `static`
 * type). Properties that are required or have a `default` (the kit fills
 * it in) are not optional.
 */
export type FromSchema<S> = S extends { static: infer T }
  ? T
  : S extends { const: infer C }
    ? C
    : S extends { enum: readonly (infer E)[] }
      ? E
      : S extends { type: readonly (infer T)[] }
        ? FromType<S, T>
        : S extends { type: infer T }
          ? FromType<S, T>
          : unknown;

type FromType<S, T> = T extends "string"
  ? string
  : T extends "number" | "integer"
    ? number
    : T extends "boolean"
      ? boolean
      : T extends "null"
        ? null
        : T extends "array"
          ? S extends { items: infer I }
            ? FromSchema<I>[]
            : unknown[]
          : T extends "object"
            ? FromObject<S>
            : unknown;

type RequiredOf<S> = S extends { required: readonly (infer R)[] } ? R : never;

type Present<S, P, K extends keyof P> = K extends RequiredOf<S>
  ? true
  : P[K] extends { default: unknown }
    ? true
    : false;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

type FromObject<S> = S extends { properties: infer P }
  ? Simplify<
      { -readonly [K in keyof P as Present<S, P, K> extends true ? K : never]: FromSchema<P[K]> } & {
        -readonly [K in keyof P as Present<S, P, K> extends true ? never : K]?: FromSchema<P[K]>;
      }
    >
  : Record<string, unknown>;

/** What `defineTool` takes. */
export interface ToolDefinition<S extends ObjectSchemaLike> {
  /** The name the model calls the tool by: `[A-Za-z0-9_-]{1,64}`, unique across loaded plugins. */
  name: string;
  /** What the tool does and when to use it, written for the model. */
  description: string;
  /** The JSON Schema of the input object; default: no arguments. */
  input?: S;
  /** True when the tool never changes anything (calls may then run concurrently). Default false. */
  readOnly?: boolean;
  /** How much harm the tool can do. Default "moderate". */
  danger?: DangerLevel;
  /** Does the work; throw a ToolError to fail. */
  call(input: FromSchema<S>, ctx: CallContext): ToolResult | Promise<ToolResult>;
}

/** The contract's `tool-spec`. */
export interface ToolSpec {
  name: string;
  description: string;
  /** The input's JSON Schema as JSON text. */
  inputSchema: string;
  danger: DangerLevel;
  readOnly: boolean;
}

/** The contract's `content-part`, as the bindings take it. */
export type WitContentPart =
  | { tag: "text"; val: string }
  | { tag: "image"; val: { mediaType: string; data: Uint8Array } };

/** The contract's `tool-output`, as the bindings take it. */
export interface WitToolOutput {
  content: WitContentPart[];
  /** JSON text, or undefined for none. */
  metadata: string | undefined;
}

/** The contract's `tool-error`. */
export interface WitToolError {
  kind: ErrorKindName;
  message: string;
}

export type TaggedResult = { tag: "ok"; val: WitToolOutput } | { tag: "err"; val: WitToolError };

/** What `invoke` resolves to. */
export interface Invoked {
  /** The text parts, joined by newlines. */
  text: string;
  content: ({ type: "text"; text: string } | { type: "image"; mediaType: string; data: Uint8Array })[];
  /** The metadata, parsed back from JSON. */
  metadata: unknown;
}

/** A tool made by `defineTool`. */
export interface Tool<I = unknown> {
  readonly name: string;
  readonly description: string;
  readonly input: ObjectSchema;
  readonly readOnly: boolean;
  readonly danger: DangerLevel;
  readonly call: (input: I, ctx: CallContext) => ToolResult | Promise<ToolResult>;
  /** The contract's `tool-spec`. */
  spec(): ToolSpec;
  /**
   * Runs the tool as the host would, on an input object: validation,
   * `call`, result conversion. Rejects with a ToolError (internal errors
   * included). For the plugin's tests.
   */
  invoke(input: I | Record<string, unknown>, ctx?: CallContext): Promise<Invoked>;
  /** The contract-level call on a parsed input. */
  callRaw(ctx: CallContext, input: unknown): TaggedResult | Promise<TaggedResult>;
}

/** The contract's `tools` interface, as the component exports it. */
export interface ToolsExport {
  tools(): ToolSpec[];
  /** Returns the output, or throws a ContractError (for an async tool: a promise of either). */
  call(ctx: CallContext, name: string, input: string): WitToolOutput | Promise<WitToolOutput>;
}

/**
 * Defines one tool. The input type of `call` is inferred from `input`
 * (write the schema inline, or pass a TypeBox schema).
 */
export declare function defineTool<const S extends ObjectSchemaLike = { type: "object"; properties: {} }>(
  def: ToolDefinition<S>,
): Tool<FromSchema<S>>;

/** The `tools` export for the given tools: `export const tools = exportTools(a, b)`. */
export declare function exportTools(...tools: (Tool<any> | readonly Tool<any>[])[]): ToolsExport;

/** True for what `defineTool` returned. */
export declare function isTool(value: unknown): value is Tool;

/**
 * Checks `input` against `schema` and fills top-level defaults; throws an
 * `invalid-input` ToolError naming every problem.
 */
export declare function validateInput<S extends JsonSchema>(toolName: string, schema: S, input: unknown): FromSchema<S>;

/** The contract's `tool-output` for what a `call` returned; throws a TypeError for a malformed result. */
export declare function toOutput(toolName: string, result: ToolResult): WitToolOutput;

/** The contract's `tool-error` for anything a `call` threw. */
export declare function toErrorValue(toolName: string, error: unknown): WitToolError;

/** Log levels of the host's log. */
export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";

/** Writes to the host's log (stderr under plain Node). */
export declare const log: {
  readonly trace: (message: string) => void;
  readonly debug: (message: string) => void;
  readonly info: (message: string) => void;
  readonly warn: (message: string) => void;
  readonly error: (message: string) => void;
};

/** Replaces where `log` writes (for tests); `null` restores the default. */
export declare function setLogSink(sink: ((level: LogLevel, message: string) => void) | null): void;
