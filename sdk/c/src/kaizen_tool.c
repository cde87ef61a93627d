/* kaizen_tool.c: serving one call (input fields, results, errors), routing
 * by tool name and checking the tool list. Plain C99 with no wasm
 * dependency: the wasm glue (kaizen_wasm.c) and native tests share it. */
#include "kaizen.h"
#include "kaizen_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kaizen_call {
    const kaizen_context *ctx;
    const kaizen_tool *tool;
    const kaizen_json *input;
    kaizen_result *result;
    kaizen_jw metadata;
    bool metadata_used; /* the writer was handed out */
};

/* Returned when even the error message cannot be allocated. */
static const char OOM_MESSAGE[] = "the plugin ran out of memory";

/* ------------------------------------------------------------------------ */
/* Results                                                                   */
/* ------------------------------------------------------------------------ */

static void result_init(kaizen_result *r) { memset(r, 0, sizeof *r); }

static void parts_free(kaizen_result *r) {
    for (size_t i = 0; i < r->part_count; i++) {
        free(r->parts[i].data);
        free(r->parts[i].media_type);
    }
    free(r->parts);
    r->parts = NULL;
    r->part_count = r->part_cap = 0;
}

void kaizen_result_free(kaizen_result *r) {
    if (!r) return;
    parts_free(r);
    if (r->error_message != OOM_MESSAGE) free(r->error_message);
    free(r->metadata);
    result_init(r);
}

/* Fails the result with a message that is already UTF-8 text in `msg`
 * (taken over). The first failure wins. */
static void result_fail(kaizen_result *r, kaizen_error_kind kind, char *msg) {
    if (r->failed) {
        if (msg != OOM_MESSAGE) free(msg);
        return;
    }
    parts_free(r);
    free(r->metadata);
    r->metadata = NULL;
    r->failed = true;
    r->error_kind = kind;
    r->error_message = msg ? msg : (char *)OOM_MESSAGE;
}

static void result_oom(kaizen_result *r) { result_fail(r, KAIZEN_FAILED, (char *)OOM_MESSAGE); }

/* A UTF-8-clean, NUL-terminated malloc'ed copy, or NULL. */
static char *clean_copy(const char *text, size_t len, size_t *out_len) {
    kaizen_buf buf = KAIZEN_BUF_INIT;
    if (!kaizen_buf_append(&buf, "", 0) || !kaizen__utf8_lossy(&buf, text, len)) {
        kaizen_buf_free(&buf);
        return NULL;
    }
    if (out_len) *out_len = buf.len;
    return buf.data;
}

static kaizen_part *add_part(kaizen_result *r) {
    if (r->part_count == r->part_cap) {
        size_t cap = r->part_cap ? r->part_cap * 2 : 4;
        kaizen_part *parts = cap > SIZE_MAX / sizeof *parts ? NULL : realloc(r->parts, cap * sizeof *parts);
        if (!parts) return NULL;
        r->parts = parts;
        r->part_cap = cap;
    }
    kaizen_part *p = &r->parts[r->part_count];
    memset(p, 0, sizeof *p);
    return p;
}

bool kaizen_text_n(kaizen_call *call, const char *text, size_t len) {
    kaizen_result *r = call->result;
    if (r->failed) return true; /* dropped: the error is what the model sees */
    if (!text) len = 0;
    kaizen_part *p = add_part(r);
    char *copy = p ? clean_copy(text ? text : "", len, &len) : NULL;
    if (!copy) {
        result_oom(r);
        return false;
    }
    p->kind = KAIZEN_PART_TEXT;
    p->data = copy;
    p->len = len;
    r->part_count++;
    return true;
}

bool kaizen_text(kaizen_call *call, const char *text) {
    return kaizen_text_n(call, text, text ? strlen(text) : 0);
}

bool kaizen_textf(kaizen_call *call, const char *fmt, ...) {
    if (call->result->failed) return true;
    kaizen_buf buf = KAIZEN_BUF_INIT;
    va_list args;
    va_start(args, fmt);
    bool ok = kaizen_buf_vprintf(&buf, fmt, args);
    va_end(args);
    if (ok) ok = kaizen_text_n(call, buf.data ? buf.data : "", buf.len);
    else result_oom(call->result);
    kaizen_buf_free(&buf);
    return ok;
}

bool kaizen_image(kaizen_call *call, const char *media_type, const void *data, size_t len) {
    kaizen_result *r = call->result;
    if (r->failed) return true;
    if (!data && len) return kaizen_fail(call, KAIZEN_FAILED, "kaizen_image was given NULL data of %zu bytes", len);
    kaizen_part *p = add_part(r);
    char *type = p ? clean_copy(media_type ? media_type : "", media_type ? strlen(media_type) : 0, NULL) : NULL;
    char *bytes = type ? malloc(len ? len : 1) : NULL;
    if (!bytes) {
        free(type);
        result_oom(r);
        return false;
    }
    if (len) memcpy(bytes, data, len);
    p->kind = KAIZEN_PART_IMAGE;
    p->data = bytes;
    p->len = len;
    p->media_type = type;
    r->part_count++;
    return true;
}

kaizen_jw *kaizen_metadata(kaizen_call *call) {
    call->metadata_used = true;
    return &call->metadata;
}

bool kaizen_metadata_raw(kaizen_call *call, const char *json, size_t len) {
    kaizen_jw_free(&call->metadata);
    call->metadata_used = true;
    kaizen_jw_raw(&call->metadata, json, len);
    if (call->metadata.error) {
        kaizen_fail(call, KAIZEN_FAILED, "the tool's metadata is not one JSON value");
        return false;
    }
    return true;
}

bool kaizen_vfail(kaizen_call *call, kaizen_error_kind kind, const char *fmt, va_list args) {
    kaizen_result *r = call->result;
    if (r->failed) return false;
    kaizen_buf buf = KAIZEN_BUF_INIT;
    kaizen_buf_vprintf(&buf, fmt, args);
    char *msg = buf.oom ? NULL : clean_copy(buf.data ? buf.data : "", buf.len, NULL);
    kaizen_buf_free(&buf);
    result_fail(r, kind, msg);
    return false;
}

bool kaizen_fail(kaizen_call *call, kaizen_error_kind kind, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    kaizen_vfail(call, kind, fmt, args);
    va_end(args);
    return false;
}

bool kaizen_fail_errno(kaizen_call *call, int err, const char *context) {
    kaizen_error_kind kind;
    /* The same mapping as the Rust kit's From<io::Error>. */
    switch (err) {
    case ENOENT: kind = KAIZEN_NOT_FOUND; break;
    case EACCES:
    case EPERM:
    case EROFS: kind = KAIZEN_PERMISSION_DENIED; break;
    case EEXIST:
    case ENOTEMPTY:
    case EBUSY:
    case ETXTBSY:
    case ESTALE: kind = KAIZEN_CONFLICT; break;
    case ETIMEDOUT: kind = KAIZEN_TIMEOUT; break;
    case EINVAL:
    case EISDIR:
    case ENOTDIR:
    case ENAMETOOLONG:
    case ESPIPE:
    case E2BIG:
    case EILSEQ: kind = KAIZEN_INVALID_INPUT; break;
    default: kind = KAIZEN_FAILED; break;
    }
    if (context) return kaizen_fail(call, kind, "%s: %s", context, strerror(err));
    return kaizen_fail(call, kind, "%s", strerror(err));
}

bool kaizen_failed(const kaizen_call *call) { return call->result->failed; }

const kaizen_context *kaizen_ctx(const kaizen_call *call) { return call->ctx; }
const kaizen_tool *kaizen_current_tool(const kaizen_call *call) { return call->tool; }
const kaizen_json *kaizen_input(const kaizen_call *call) { return call->input; }

const char *kaizen_error_kind_name(kaizen_error_kind kind) {
    switch (kind) {
    case KAIZEN_INVALID_INPUT: return "invalid-input";
    case KAIZEN_NOT_FOUND: return "not-found";
    case KAIZEN_PERMISSION_DENIED: return "permission-denied";
    case KAIZEN_CONFLICT: return "conflict";
    case KAIZEN_TIMEOUT: return "timeout";
    case KAIZEN_FAILED: return "failed";
    }
    return "failed";
}

/* ------------------------------------------------------------------------ */
/* Input fields                                                              */
/* ------------------------------------------------------------------------ */

static bool bad_input(kaizen_call *call, const char *field, const char *fmt, const char *detail) {
    char what[160];
    snprintf(what, sizeof what, fmt, detail);
    return kaizen_fail(call, KAIZEN_INVALID_INPUT, "invalid input for %s: field `%s` %s", call->tool->name, field, what);
}

static const char *with_article(kaizen_json_type type) {
    switch (type) {
    case KAIZEN_JSON_ARRAY: return "an array";
    case KAIZEN_JSON_OBJECT: return "an object";
    case KAIZEN_JSON_BOOL: return "a boolean";
    case KAIZEN_JSON_NUMBER: return "a number";
    case KAIZEN_JSON_STRING: return "a string";
    case KAIZEN_JSON_NULL: return "null";
    }
    return "a value";
}

/* The field's value when present with type `want` (or any type when `want`
 * is negative): 1 found, 0 absent or null (optional only), -1 error. */
static int field(kaizen_call *call, const char *name, int want, bool optional, const kaizen_json **out) {
    const kaizen_json *v = kaizen_json_get(call->input, name);
    if (!v || (optional && kaizen_json_type_of(v) == KAIZEN_JSON_NULL)) {
        if (optional) return 0;
        bad_input(call, name, "is missing%s", "");
        return -1;
    }
    if (want >= 0 && kaizen_json_type_of(v) != (kaizen_json_type)want) {
        kaizen_json_type got = kaizen_json_type_of(v);
        char what[64];
        snprintf(what, sizeof what, "%s, got %s", with_article((kaizen_json_type)want), kaizen_json_type_name(got));
        bad_input(call, name, "must be %s", what);
        return -1;
    }
    *out = v;
    return 1;
}

static bool get_string(kaizen_call *call, const char *name, bool optional, bool allow_nul, const char **out,
                       size_t *len) {
    const kaizen_json *v;
    int found = field(call, name, KAIZEN_JSON_STRING, optional, &v);
    if (found <= 0) return found == 0;
    size_t n;
    const char *s = kaizen_json_string(v, &n);
    if (!allow_nul && strlen(s) != n) return bad_input(call, name, "must not contain a NUL character%s", "");
    *out = s;
    if (len) *len = n;
    return true;
}

bool kaizen_arg_string(kaizen_call *call, const char *name, const char **out) {
    return get_string(call, name, false, false, out, NULL);
}

bool kaizen_arg_opt_string(kaizen_call *call, const char *name, const char **out) {
    return get_string(call, name, true, false, out, NULL);
}

bool kaizen_arg_string_n(kaizen_call *call, const char *name, const char **out, size_t *len) {
    return get_string(call, name, false, true, out, len);
}

static bool get_number(kaizen_call *call, const char *name, bool optional, double *out) {
    const kaizen_json *v;
    int found = field(call, name, KAIZEN_JSON_NUMBER, optional, &v);
    if (found <= 0) return found == 0;
    *out = kaizen_json_number(v);
    return true;
}

bool kaizen_arg_number(kaizen_call *call, const char *name, double *out) { return get_number(call, name, false, out); }
bool kaizen_arg_opt_number(kaizen_call *call, const char *name, double *out) { return get_number(call, name, true, out); }

static bool get_int(kaizen_call *call, const char *name, bool optional, int64_t *out) {
    const kaizen_json *v;
    int found = field(call, name, KAIZEN_JSON_NUMBER, optional, &v);
    if (found <= 0) return found == 0;
    if (!kaizen_json_int(v, out)) return bad_input(call, name, "must be an integer within 64 bits%s", "");
    return true;
}

bool kaizen_arg_int(kaizen_call *call, const char *name, int64_t *out) { return get_int(call, name, false, out); }
bool kaizen_arg_opt_int(kaizen_call *call, const char *name, int64_t *out) { return get_int(call, name, true, out); }

static bool get_bool(kaizen_call *call, const char *name, bool optional, bool *out) {
    const kaizen_json *v;
    int found = field(call, name, KAIZEN_JSON_BOOL, optional, &v);
    if (found <= 0) return found == 0;
    *out = kaizen_json_bool(v);
    return true;
}

bool kaizen_arg_bool(kaizen_call *call, const char *name, bool *out) { return get_bool(call, name, false, out); }
bool kaizen_arg_opt_bool(kaizen_call *call, const char *name, bool *out) { return get_bool(call, name, true, out); }

static bool get_value(kaizen_call *call, const char *name, kaizen_json_type type, bool optional,
                      const kaizen_json **out) {
    const kaizen_json *v;
    int found = field(call, name, (int)type, optional, &v);
    if (found <= 0) return found == 0;
    *out = v;
    return true;
}

bool kaizen_arg_array(kaizen_call *call, const char *name, const kaizen_json **out) {
    return get_value(call, name, KAIZEN_JSON_ARRAY, false, out);
}
bool kaizen_arg_opt_array(kaizen_call *call, const char *name, const kaizen_json **out) {
    return get_value(call, name, KAIZEN_JSON_ARRAY, true, out);
}
bool kaizen_arg_object(kaizen_call *call, const char *name, const kaizen_json **out) {
    return get_value(call, name, KAIZEN_JSON_OBJECT, false, out);
}
bool kaizen_arg_opt_object(kaizen_call *call, const char *name, const kaizen_json **out) {
    return get_value(call, name, KAIZEN_JSON_OBJECT, true, out);
}

/* ------------------------------------------------------------------------ */
/* Logging                                                                   */
/* ------------------------------------------------------------------------ */

void kaizen_log(kaizen_log_level level, const char *fmt, ...) {
    kaizen_buf buf = KAIZEN_BUF_INIT;
    va_list args;
    va_start(args, fmt);
    kaizen_buf_vprintf(&buf, fmt, args);
    va_end(args);
    if (!buf.oom) {
        kaizen_buf clean = KAIZEN_BUF_INIT;
        /* The host refuses strings that are not UTF-8. */
        if (kaizen__utf8_lossy(&clean, buf.data ? buf.data : "", buf.len)) {
            kaizen_log_write(level, clean.data ? clean.data : "", clean.len);
        }
        kaizen_buf_free(&clean);
    }
    kaizen_buf_free(&buf);
}

/* ------------------------------------------------------------------------ */
/* Routing                                                                   */
/* ------------------------------------------------------------------------ */

static void fail_result(kaizen_result *r, kaizen_error_kind kind, const char *fmt, ...) KAIZEN_PRINTF(3, 4);

static void fail_result(kaizen_result *r, kaizen_error_kind kind, const char *fmt, ...) {
    /* kaizen_vfail wants a call; a bare one is enough to carry the result. */
    kaizen_call call;
    memset(&call, 0, sizeof call);
    call.result = r;
    va_list args;
    va_start(args, fmt);
    kaizen_vfail(&call, kind, fmt, args);
    va_end(args);
}

static void unknown_tool(kaizen_result *r, const char *name, size_t name_len) {
    kaizen_buf msg = KAIZEN_BUF_INIT;
    kaizen_buf_puts(&msg, "this plugin has no tool named `");
    kaizen__utf8_lossy(&msg, name, name_len);
    kaizen_buf_puts(&msg, "`; its tools are: ");
    bool first = true;
    for (size_t i = 0; i < kaizen_tool_count; i++) {
        if (kaizen_tools[i].internal) continue;
        if (!first) kaizen_buf_puts(&msg, ", ");
        kaizen_buf_puts(&msg, kaizen_tools[i].name ? kaizen_tools[i].name : "?");
        first = false;
    }
    if (msg.oom) {
        kaizen_buf_free(&msg);
        result_oom(r);
        return;
    }
    result_fail(r, KAIZEN_NOT_FOUND, clean_copy(msg.data, msg.len, NULL));
    kaizen_buf_free(&msg);
}

void kaizen_run(const kaizen_context *ctx, const char *name, size_t name_len, const char *input, size_t input_len,
                kaizen_result *out) {
    result_init(out);
    const kaizen_tool *tool = NULL;
    for (size_t i = 0; i < kaizen_tool_count; i++) {
        const char *n = kaizen_tools[i].name;
        if (n && strlen(n) == name_len && memcmp(n, name, name_len) == 0) {
            tool = &kaizen_tools[i];
            break;
        }
    }
    if (!tool || !tool->call) {
        unknown_tool(out, name, name_len);
        return;
    }
    char err[192];
    kaizen_json_doc *doc = kaizen_json_parse(input, input_len, err, sizeof err);
    if (!doc) {
        fail_result(out, KAIZEN_INVALID_INPUT, "invalid input for %s: %s", tool->name, err);
        return;
    }
    const kaizen_json *root = kaizen_json_root(doc);
    if (kaizen_json_type_of(root) != KAIZEN_JSON_OBJECT) {
        fail_result(out, KAIZEN_INVALID_INPUT, "invalid input for %s: expected a JSON object, got %s", tool->name,
                    kaizen_json_type_name(kaizen_json_type_of(root)));
        kaizen_json_free(doc);
        return;
    }

    kaizen_call call;
    memset(&call, 0, sizeof call);
    call.ctx = ctx;
    call.tool = tool;
    call.input = root;
    call.result = out;
    tool->call(&call);

    if (!out->failed && call.metadata_used) {
        size_t len;
        const char *json = kaizen_jw_finish(&call.metadata, &len);
        if (!json) {
            fail_result(out, KAIZEN_FAILED, "%s built invalid metadata: %s", tool->name, kaizen_jw_error(&call.metadata));
        } else if (!(out->metadata = malloc(len + 1))) {
            result_oom(out);
        } else {
            memcpy(out->metadata, json, len + 1);
        }
    }
    kaizen_jw_free(&call.metadata);
    kaizen_json_free(doc);
}

kaizen_result kaizen_test_call(const char *name, const char *input_json) {
    static const kaizen_context ctx = {"test", "test", ".", "."};
    kaizen_result r;
    kaizen_run(&ctx, name, strlen(name), input_json, strlen(input_json), &r);
    return r;
}

char *kaizen_result_text(const kaizen_result *r) {
    kaizen_buf buf = KAIZEN_BUF_INIT;
    kaizen_buf_append(&buf, "", 0);
    if (r->failed) {
        kaizen_buf_puts(&buf, r->error_message ? r->error_message : "");
    } else {
        for (size_t i = 0; i < r->part_count; i++) {
            if (r->parts[i].kind == KAIZEN_PART_TEXT) kaizen_buf_append(&buf, r->parts[i].data, r->parts[i].len);
        }
    }
    if (buf.oom) {
        kaizen_buf_free(&buf);
        return NULL;
    }
    return buf.data;
}

/* ------------------------------------------------------------------------ */
/* Checking the tool list                                                    */
/* ------------------------------------------------------------------------ */

static bool valid_name(const char *name) {
    size_t n = strlen(name);
    if (n == 0 || n > 64) return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

bool kaizen_check_tools(char *err, size_t err_size) {
    return kaizen_check_tool_list(kaizen_tools, kaizen_tool_count, err, err_size);
}

bool kaizen_check_tool_list(const kaizen_tool *tools, size_t count, char *err, size_t err_size) {
#define CHECK_FAIL(...)                                      \
    do {                                                     \
        if (err && err_size) snprintf(err, err_size, __VA_ARGS__); \
        return false;                                        \
    } while (0)
    if (count == 0) CHECK_FAIL("KAIZEN_TOOLS lists no tool");
    for (size_t i = 0; i < count; i++) {
        const kaizen_tool *t = &tools[i];
        if (!t->name) CHECK_FAIL("tool #%zu in KAIZEN_TOOLS has no .name", i + 1);
        if (!valid_name(t->name))
            CHECK_FAIL("tool name `%.80s` is invalid: use 1 to 64 of A-Z, a-z, 0-9, '_' and '-'", t->name);
        for (size_t j = 0; j < i; j++) {
            if (strcmp(tools[j].name, t->name) == 0)
                CHECK_FAIL("two tools are named `%s`; tool names must be unique", t->name);
        }
        if (!t->description || !t->description[0]) CHECK_FAIL("tool `%s` has no .description", t->name);
        if (!t->call) CHECK_FAIL("tool `%s` has no .call function", t->name);
        if (t->danger != KAIZEN_SAFE && t->danger != KAIZEN_MODERATE && t->danger != KAIZEN_DANGEROUS)
            CHECK_FAIL("tool `%s` has an unknown .danger value %d", t->name, (int)t->danger);
        if (!t->input_schema) CHECK_FAIL("tool `%s` has no .input_schema", t->name);
        char why[160];
        kaizen_json_doc *doc = kaizen_json_parse(t->input_schema, strlen(t->input_schema), why, sizeof why);
        if (!doc) CHECK_FAIL("the input schema of `%s` is not JSON: %s", t->name, why);
        const kaizen_json *root = kaizen_json_root(doc);
        size_t type_len = 0;
        const char *type = kaizen_json_string(kaizen_json_get(root, "type"), &type_len);
        bool object = type && type_len == 6 && memcmp(type, "object", 6) == 0;
        kaizen_json_free(doc);
        if (!object)
            CHECK_FAIL("the input schema of `%s` must be a JSON object with \"type\": \"object\" "
                       "(the model always sends an object)",
                       t->name);
    }
    return true;
#undef CHECK_FAIL
}
