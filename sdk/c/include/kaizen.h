/*
 * kaizen.h: write Kaizen tool plugins in C.
 *
 * A plugin is a WebAssembly component that provides one or more tools. In C,
 * a tool is a function taking a `kaizen_call *`; the plugin lists its tools
 * once with KAIZEN_TOOLS, and the kit implements the contract's `tools`
 * export (kaizen:plugin/tools@0.1.4) around them. A whole plugin:
 *
 *     #include "kaizen.h"
 *
 *     static void greet(kaizen_call *call) {
 *         const char *name;
 *         if (!kaizen_arg_string(call, "name", &name)) return;
 *         kaizen_textf(call, "Hello, %s!", name);
 *     }
 *
 *     KAIZEN_TOOLS({
 *         .name = "Greet",
 *         .description = "Greets someone by name.",
 *         .input_schema = "{\"type\":\"object\",\"properties\":"
 *                         "{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}",
 *         .read_only = true,
 *         .danger = KAIZEN_SAFE,
 *         .call = greet,
 *     });
 *
 * Build it with `kaizen plugins build` (clang for wasm32-wasi, the `tool`
 * world's bindings, the WASI reactor adapter), which writes the .wasm that
 * its plugin.toml names; `kaizen plugins new NAME --lang c` writes a
 * project to start from.
 *
 * Ownership, in one place:
 * - Everything the kit hands a tool (the context's strings, the input's
 *   values, strings read from it) belongs to the kit and stays valid until
 *   the tool function returns. Copy what must outlive the call.
 * - Everything a tool hands the kit (text, images, error messages, JSON
 *   text) is copied; the tool keeps ownership of its own buffers.
 * - A parsed document (kaizen_json_parse) owns all its values; free it with
 *   kaizen_json_free. A kaizen_buf or kaizen_jw owns its text; free it with
 *   kaizen_buf_free / kaizen_jw_free.
 * - Across the component boundary the kit follows the canonical ABI: it
 *   frees the arguments the host passed to an export, hands back results in
 *   malloc'ed memory that the generated post-return code frees, and passes
 *   borrowed strings to imports.
 *
 * Text crossing the boundary must be UTF-8. The kit replaces invalid bytes
 * in text, error messages and JSON strings with U+FFFD instead of letting
 * the host reject the whole result.
 *
 * The JSON reader and writer, kaizen_buf and the call functions are plain
 * C99 with no wasm dependency, so a plugin's tests compile and run natively
 * (gcc or clang) with src/kaizen_json.c, src/kaizen_tool.c and
 * src/kaizen_native.c.
 */
#ifndef KAIZEN_H
#define KAIZEN_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define KAIZEN_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define KAIZEN_PRINTF(fmt, args)
#endif

/* ------------------------------------------------------------------------ */
/* Growable text buffer                                                      */
/* ------------------------------------------------------------------------ */

/* A growable byte buffer, always NUL-terminated once anything was appended.
 * Start it as `kaizen_buf b = KAIZEN_BUF_INIT;`. When an allocation fails
 * the buffer keeps what it had, sets `oom` and ignores later appends, so a
 * caller may check once at the end. */
typedef struct kaizen_buf {
    char *data;
    size_t len;
    size_t cap;
    bool oom;
} kaizen_buf;

#define KAIZEN_BUF_INIT {NULL, 0, 0, false}

bool kaizen_buf_append(kaizen_buf *buf, const void *data, size_t len);
bool kaizen_buf_puts(kaizen_buf *buf, const char *text);
bool kaizen_buf_printf(kaizen_buf *buf, const char *fmt, ...) KAIZEN_PRINTF(2, 3);
bool kaizen_buf_vprintf(kaizen_buf *buf, const char *fmt, va_list args);
/* Frees the buffer's memory and resets it to empty. */
void kaizen_buf_free(kaizen_buf *buf);

/* ------------------------------------------------------------------------ */
/* JSON reader                                                               */
/* ------------------------------------------------------------------------ */

/* A strict RFC 8259 parser: no comments, no trailing commas, UTF-8 checked,
 * lone surrogates refused, numbers that overflow a double refused, at most
 * KAIZEN_JSON_MAX_DEPTH nested arrays/objects. Duplicate object keys are
 * kept; kaizen_json_get finds the last one, as the host's validator does. */
#define KAIZEN_JSON_MAX_DEPTH 128

typedef enum kaizen_json_type {
    KAIZEN_JSON_NULL,
    KAIZEN_JSON_BOOL,
    KAIZEN_JSON_NUMBER,
    KAIZEN_JSON_STRING,
    KAIZEN_JSON_ARRAY,
    KAIZEN_JSON_OBJECT,
} kaizen_json_type;

typedef struct kaizen_json_doc kaizen_json_doc;
/* One value inside a document; valid while the document lives. */
typedef struct kaizen_json kaizen_json;

/* Parses `len` bytes of `text` (which need not be NUL-terminated; the
 * document keeps its own copy). Returns NULL on failure with a message
 * ("expected ':' after an object key at line 1, column 9") in `err` when
 * `err_size` > 0; out of memory is reported the same way. */
kaizen_json_doc *kaizen_json_parse(const char *text, size_t len, char *err, size_t err_size);
void kaizen_json_free(kaizen_json_doc *doc);
const kaizen_json *kaizen_json_root(const kaizen_json_doc *doc);

/* Every accessor accepts NULL and answers as for a missing value. */
kaizen_json_type kaizen_json_type_of(const kaizen_json *value);
/* "null", "boolean", "number", "string", "array", "object". */
const char *kaizen_json_type_name(kaizen_json_type type);
/* The member `key` of an object (the last one if repeated), or NULL when the
 * value is no object or has no such member. */
const kaizen_json *kaizen_json_get(const kaizen_json *object, const char *key);
/* The number of elements of an array or members of an object; 0 otherwise. */
size_t kaizen_json_count(const kaizen_json *value);
/* Element `index` of an array, or the value of member `index` of an object;
 * NULL when out of range. */
const kaizen_json *kaizen_json_at(const kaizen_json *value, size_t index);
/* The key of member `index` of an object (NUL-terminated; `len`, if not
 * NULL, receives its length in bytes); NULL when out of range. */
const char *kaizen_json_key_at(const kaizen_json *object, size_t index, size_t *len);
/* The decoded string (NUL-terminated, valid UTF-8; it may hold "\u0000",
 * hence `len`), or NULL when the value is no string. */
const char *kaizen_json_string(const kaizen_json *value, size_t *len);
/* The value as a double; 0 when it is no number. */
double kaizen_json_number(const kaizen_json *value);
/* True when the value is an integer (no fraction; 5.0 and 1e3 count, as in
 * JSON Schema) within int64_t, stored in `out`. */
bool kaizen_json_int(const kaizen_json *value, int64_t *out);
/* True for `true`; false for anything else. */
bool kaizen_json_bool(const kaizen_json *value);

/* ------------------------------------------------------------------------ */
/* JSON writer                                                               */
/* ------------------------------------------------------------------------ */

#define KAIZEN_JW_MAX_DEPTH 64

/* Writes one JSON value, putting commas and colons itself. Misuse (a value
 * where a key is due, an unbalanced end, a NaN) stops the writer: later
 * calls do nothing and kaizen_jw_finish returns NULL with `error` set. Start
 * it as `kaizen_jw w = KAIZEN_JW_INIT;`. Strings are escaped and invalid
 * UTF-8 becomes U+FFFD. */
typedef struct kaizen_jw {
    kaizen_buf buf;
    const char *error;
    unsigned depth;
    unsigned char state[KAIZEN_JW_MAX_DEPTH + 1];
} kaizen_jw;

#define KAIZEN_JW_INIT {KAIZEN_BUF_INIT, NULL, 0, {0}}

void kaizen_jw_object_begin(kaizen_jw *w);
void kaizen_jw_object_end(kaizen_jw *w);
void kaizen_jw_array_begin(kaizen_jw *w);
void kaizen_jw_array_end(kaizen_jw *w);
/* The key of the next member; only inside an object. */
void kaizen_jw_key(kaizen_jw *w, const char *key);
void kaizen_jw_string(kaizen_jw *w, const char *value);
void kaizen_jw_string_n(kaizen_jw *w, const char *value, size_t len);
/* The shortest text that reads back as the same double; NaN and infinities
 * have no JSON form and stop the writer. */
void kaizen_jw_number(kaizen_jw *w, double value);
void kaizen_jw_int(kaizen_jw *w, int64_t value);
void kaizen_jw_bool(kaizen_jw *w, bool value);
void kaizen_jw_null(kaizen_jw *w);
/* Inserts ready-made JSON text, checked with the reader first. */
void kaizen_jw_raw(kaizen_jw *w, const char *json, size_t len);
/* A key and its value in one call. */
void kaizen_jw_key_string(kaizen_jw *w, const char *key, const char *value);
void kaizen_jw_key_number(kaizen_jw *w, const char *key, double value);
void kaizen_jw_key_int(kaizen_jw *w, const char *key, int64_t value);
void kaizen_jw_key_bool(kaizen_jw *w, const char *key, bool value);
/* The finished text (owned by the writer), or NULL when the value is
 * incomplete or the writer stopped; `kaizen_jw_error` then says why. */
const char *kaizen_jw_finish(kaizen_jw *w, size_t *len);
const char *kaizen_jw_error(const kaizen_jw *w);
void kaizen_jw_free(kaizen_jw *w);

/* ------------------------------------------------------------------------ */
/* Tools                                                                     */
/* ------------------------------------------------------------------------ */

/* How much harm a tool can do; the host's permission rules use it.
 * MODERATE is 0 so that a tool that names none gets the Rust kit's default. */
typedef enum kaizen_danger {
    KAIZEN_MODERATE = 0, /* changes files inside the granted directories */
    KAIZEN_SAFE,         /* reads only; can never change anything */
    KAIZEN_DANGEROUS,    /* runs programs, reaches the network, deletes data */
} kaizen_danger;

/* Why a call failed, in a form the model can act on. */
typedef enum kaizen_error_kind {
    KAIZEN_INVALID_INPUT,     /* the input was wrong */
    KAIZEN_NOT_FOUND,         /* something the input named does not exist */
    KAIZEN_PERMISSION_DENIED, /* the plugin may not do what was asked */
    KAIZEN_CONFLICT,          /* the state changed under the tool */
    KAIZEN_TIMEOUT,           /* the work took too long */
    KAIZEN_FAILED,            /* anything else */
} kaizen_error_kind;

/* What the host tells a tool about the call it serves (NUL-terminated). */
typedef struct kaizen_context {
    const char *session_id;
    const char *call_id;
    /* Absolute path of the workspace, preopened at the same path. */
    const char *workspace;
    /* Absolute directory relative paths resolve against. */
    const char *cwd;
} kaizen_context;

/* One call being served: its context, input and result. */
typedef struct kaizen_call kaizen_call;

typedef void (*kaizen_tool_fn)(kaizen_call *call);

/* One tool. List every tool of the plugin in one KAIZEN_TOOLS. */
typedef struct kaizen_tool {
    /* The name the model calls it by: [A-Za-z0-9_-]{1,64}, unique across
     * every loaded plugin. */
    const char *name;
    /* What it does and when to use it, written for the model. */
    const char *description;
    /* JSON Schema (draft 2020-12) of the input; must be an object schema
     * ("type": "object"). The host validates every call against it. */
    const char *input_schema;
    /* How much harm it can do; defaults to KAIZEN_MODERATE. */
    kaizen_danger danger;
    /* True when it never changes anything, so calls may run concurrently. */
    bool read_only;
    /* True for a tool only the plugin calls (through the host's `parallel`
     * interface): left out of the tool list. */
    bool internal;
    kaizen_tool_fn call;
} kaizen_tool;

/* Defines the plugin's tools: KAIZEN_TOOLS({...}, {...});. Use it once, in
 * one source file. */
#define KAIZEN_TOOLS(...)                                              \
    const kaizen_tool kaizen_tools[] = {__VA_ARGS__};                  \
    const size_t kaizen_tool_count = sizeof kaizen_tools / sizeof kaizen_tools[0]

extern const kaizen_tool kaizen_tools[];
extern const size_t kaizen_tool_count;

/* The call's context, the tool being run and its input (a JSON object). */
const kaizen_context *kaizen_ctx(const kaizen_call *call);
const kaizen_tool *kaizen_current_tool(const kaizen_call *call);
const kaizen_json *kaizen_input(const kaizen_call *call);

/* Input fields. Each returns true on success. On failure it records an
 * invalid-input error naming the tool and the field ("invalid input for
 * Greet: field `name` must be a string, got number") and returns false; the
 * tool should then return. The `opt` forms return true and leave `*out`
 * alone when the field is absent or null, so set the default first. Strings
 * are NUL-terminated and owned by the call; kaizen_arg_string refuses a
 * string holding "\u0000" (use kaizen_arg_string_n for those). */
bool kaizen_arg_string(kaizen_call *call, const char *field, const char **out);
bool kaizen_arg_opt_string(kaizen_call *call, const char *field, const char **out);
bool kaizen_arg_string_n(kaizen_call *call, const char *field, const char **out, size_t *len);
bool kaizen_arg_number(kaizen_call *call, const char *field, double *out);
bool kaizen_arg_opt_number(kaizen_call *call, const char *field, double *out);
bool kaizen_arg_int(kaizen_call *call, const char *field, int64_t *out);
bool kaizen_arg_opt_int(kaizen_call *call, const char *field, int64_t *out);
bool kaizen_arg_bool(kaizen_call *call, const char *field, bool *out);
bool kaizen_arg_opt_bool(kaizen_call *call, const char *field, bool *out);
/* An array or object field, to walk with the reader's accessors. */
bool kaizen_arg_array(kaizen_call *call, const char *field, const kaizen_json **out);
bool kaizen_arg_opt_array(kaizen_call *call, const char *field, const kaizen_json **out);
bool kaizen_arg_object(kaizen_call *call, const char *field, const kaizen_json **out);
bool kaizen_arg_opt_object(kaizen_call *call, const char *field, const kaizen_json **out);

/* Results. Each text or image call appends one content part (the model sees
 * them in order); the data is copied. They return false when memory ran out
 * (or kaizen_image got NULL data), which fails the call by itself; after a
 * failure they drop what they are given and return true. */
bool kaizen_text(kaizen_call *call, const char *text);
bool kaizen_text_n(kaizen_call *call, const char *text, size_t len);
bool kaizen_textf(kaizen_call *call, const char *fmt, ...) KAIZEN_PRINTF(2, 3);
bool kaizen_image(kaizen_call *call, const char *media_type, const void *data, size_t len);
/* The call's metadata writer: write one JSON value into it (programs see
 * it, the model does not). An unfinished value fails the call, naming the
 * writer's error. */
kaizen_jw *kaizen_metadata(kaizen_call *call);
/* Sets the metadata from JSON text, checked with the reader. */
bool kaizen_metadata_raw(kaizen_call *call, const char *json, size_t len);

/* Fails the call with `kind` and a message for the model: what went wrong
 * and what to do next. The first error of a call wins; content added
 * before or after is dropped. Returns false, for `return kaizen_fail(..)`
 * in helpers that return bool. */
bool kaizen_fail(kaizen_call *call, kaizen_error_kind kind, const char *fmt, ...) KAIZEN_PRINTF(3, 4);
bool kaizen_vfail(kaizen_call *call, kaizen_error_kind kind, const char *fmt, va_list args);
/* Fails with the kind closest to errno value `err` (ENOENT: not-found,
 * EACCES: permission-denied, EEXIST: conflict, ...) and the message
 * "<context>: <strerror(err)>", e.g. kaizen_fail_errno(call, errno, path). */
bool kaizen_fail_errno(kaizen_call *call, int err, const char *context);
bool kaizen_failed(const kaizen_call *call);

/* Logging to the host's log, attributed to the plugin (natively: stderr). */
typedef enum kaizen_log_level {
    KAIZEN_LOG_TRACE,
    KAIZEN_LOG_DEBUG,
    KAIZEN_LOG_INFO,
    KAIZEN_LOG_WARN,
    KAIZEN_LOG_ERROR,
} kaizen_log_level;

void kaizen_log(kaizen_log_level level, const char *fmt, ...) KAIZEN_PRINTF(2, 3);
/* Writes one line of `len` bytes; provided by src/kaizen_wasm.c (the host's
 * `log` import) or src/kaizen_native.c (stderr). */
void kaizen_log_write(kaizen_log_level level, const char *message, size_t len);
#define kaizen_trace(...) kaizen_log(KAIZEN_LOG_TRACE, __VA_ARGS__)
#define kaizen_debug(...) kaizen_log(KAIZEN_LOG_DEBUG, __VA_ARGS__)
#define kaizen_info(...) kaizen_log(KAIZEN_LOG_INFO, __VA_ARGS__)
#define kaizen_warn(...) kaizen_log(KAIZEN_LOG_WARN, __VA_ARGS__)
#define kaizen_error(...) kaizen_log(KAIZEN_LOG_ERROR, __VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* Running tools (the export's core; also for native tests)                 */
/* ------------------------------------------------------------------------ */

typedef enum kaizen_part_kind { KAIZEN_PART_TEXT, KAIZEN_PART_IMAGE } kaizen_part_kind;

typedef struct kaizen_part {
    kaizen_part_kind kind;
    char *data; /* text (NUL-terminated UTF-8) or image bytes */
    size_t len;
    char *media_type; /* images only */
} kaizen_part;

/* The outcome of one call, owned by whoever passed it to kaizen_run. */
typedef struct kaizen_result {
    bool failed;
    kaizen_error_kind error_kind;
    char *error_message; /* when failed */
    kaizen_part *parts;  /* when not failed */
    size_t part_count;
    size_t part_cap;
    char *metadata; /* NULL or one JSON value */
} kaizen_result;

/* Runs tool `name` (`name_len` bytes) with the JSON text `input`, filling
 * `out` (which it initialises). Unknown names, unparsable input and input
 * other than an object become errors, as in the Rust kit. */
void kaizen_run(const kaizen_context *ctx, const char *name, size_t name_len,
                const char *input, size_t input_len, kaizen_result *out);
void kaizen_result_free(kaizen_result *result);
/* For tests: runs `name` on `input_json` with a context whose workspace and
 * cwd are "." and ids are "test". */
kaizen_result kaizen_test_call(const char *name, const char *input_json);
/* For tests: the text parts joined (owned by the result's caller: free()),
 * or the error message when the call failed. */
char *kaizen_result_text(const kaizen_result *result);
const char *kaizen_error_kind_name(kaizen_error_kind kind);

/* Checks the tool list: names ([A-Za-z0-9_-]{1,64}, unique), descriptions
 * present, schemas parse and describe objects, every tool has a function.
 * Returns true, or false with the first problem in `err`. The export runs
 * it before answering the host, and fails the load with the message. */
bool kaizen_check_tools(char *err, size_t err_size);
/* The same check for any list. */
bool kaizen_check_tool_list(const kaizen_tool *tools, size_t count, char *err, size_t err_size);

#ifdef __cplusplus
}
#endif

#endif /* KAIZEN_H */
