/* test_tool.c: native unit tests of the kit's call machinery: routing,
 * input fields, results, errors and the tool-list check. */
#include "check.h"
#include "kaizen.h"

#include <errno.h>
#include <stdlib.h>

static void echo(kaizen_call *call) {
    const char *text;
    int64_t times = 1;
    bool upper = false;
    if (!kaizen_arg_string(call, "text", &text)) return;
    if (!kaizen_arg_opt_int(call, "times", &times)) return;
    if (!kaizen_arg_opt_bool(call, "upper", &upper)) return;
    if (times < 0 || times > 3) {
        kaizen_fail(call, KAIZEN_INVALID_INPUT, "times must be 0 to 3, got %lld", (long long)times);
        return;
    }
    for (int64_t i = 0; i < times; i++) kaizen_text(call, text);
    kaizen_jw *m = kaizen_metadata(call);
    kaizen_jw_object_begin(m);
    kaizen_jw_key_int(m, "times", times);
    kaizen_jw_key_bool(m, "upper", upper);
    kaizen_jw_key(m, "ctx");
    kaizen_jw_string(m, kaizen_ctx(call)->cwd);
    kaizen_jw_object_end(m);
}

/* Reads every field type, for the error messages. */
static void types(kaizen_call *call) {
    const char *s = "default";
    double n = -1;
    const kaizen_json *a = NULL, *o = NULL;
    size_t len = 0;
    const char *raw;
    if (!kaizen_arg_opt_string(call, "s", &s)) return;
    if (!kaizen_arg_opt_number(call, "n", &n)) return;
    if (!kaizen_arg_opt_array(call, "a", &a)) return;
    if (!kaizen_arg_opt_object(call, "o", &o)) return;
    if (kaizen_json_get(kaizen_input(call), "raw") && !kaizen_arg_string_n(call, "raw", &raw, &len)) return;
    kaizen_textf(call, "s=%s n=%g a=%zu o=%zu raw=%zu tool=%s", s, n, kaizen_json_count(a), kaizen_json_count(o), len,
                 kaizen_current_tool(call)->name);
}

static void fails(kaizen_call *call) {
    kaizen_text(call, "dropped");
    kaizen_fail_errno(call, ENOENT, "/no/such");
    kaizen_fail(call, KAIZEN_CONFLICT, "second error is ignored");
    kaizen_text(call, "dropped too");
}

static void bad_metadata(kaizen_call *call) {
    kaizen_text(call, "x");
    kaizen_jw_object_begin(kaizen_metadata(call));
}

static void raw_metadata(kaizen_call *call) {
    const char *json;
    if (!kaizen_arg_string(call, "json", &json)) return;
    kaizen_metadata_raw(call, json, strlen(json));
}

static void parts(kaizen_call *call) {
    static const unsigned char png[] = {0x89, 'P', 'N', 'G'};
    kaizen_text(call, "bad \xff utf8");
    kaizen_image(call, "image/png", png, sizeof png);
    kaizen_text_n(call, "n\0l", 3);
}

static void hidden(kaizen_call *call) { kaizen_text(call, "internal"); }

static void errno_tool(kaizen_call *call) {
    int64_t err;
    if (!kaizen_arg_int(call, "err", &err)) return;
    kaizen_fail_errno(call, (int)err, "ctx");
}

#define OBJECT "{\"type\":\"object\"}"

KAIZEN_TOOLS(
    {.name = "Echo", .description = "Echoes.", .input_schema = OBJECT, .read_only = true, .danger = KAIZEN_SAFE,
     .call = echo},
    {.name = "Types", .description = "Reads fields.", .input_schema = OBJECT, .call = types},
    {.name = "Fails", .description = "Fails.", .input_schema = OBJECT, .call = fails},
    {.name = "BadMeta", .description = "Bad metadata.", .input_schema = OBJECT, .call = bad_metadata},
    {.name = "RawMeta", .description = "Raw metadata.", .input_schema = OBJECT, .call = raw_metadata},
    {.name = "Parts", .description = "Several parts.", .input_schema = OBJECT, .call = parts},
    {.name = "Errno", .description = "Fails with an errno.", .input_schema = OBJECT, .call = errno_tool},
    {.name = "Hidden", .description = "Internal.", .input_schema = OBJECT, .internal = true, .call = hidden}, );

/* Runs a call and checks it failed with `kind` and a message holding `want`. */
static void expect_fail(const char *tool, const char *input, kaizen_error_kind kind, const char *want) {
    kaizen_result r = kaizen_test_call(tool, input);
    CHECK(r.failed);
    CHECK(r.error_kind == kind);
    if (!r.failed || !r.error_message || !strstr(r.error_message, want) || r.error_kind != kind) {
        fprintf(stderr, "  %s %s: %s \"%s\", want %s \"%s\"\n", tool, input,
                r.failed ? kaizen_error_kind_name(r.error_kind) : "ok", r.failed ? r.error_message : "",
                kaizen_error_kind_name(kind), want);
        CHECK(!"error");
    }
    CHECK(r.part_count == 0 && r.metadata == NULL);
    kaizen_result_free(&r);
}

static void test_success(void) {
    kaizen_result r = kaizen_test_call("Echo", "{\"text\": \"hi\", \"times\": 2, \"upper\": true}");
    CHECK(!r.failed);
    CHECK(r.part_count == 2);
    char *text = kaizen_result_text(&r);
    CHECK_STR(text, "hihi");
    free(text);
    CHECK_STR(r.metadata, "{\"times\":2,\"upper\":true,\"ctx\":\".\"}");
    kaizen_result_free(&r);

    /* Optional fields keep their defaults when absent or null. */
    r = kaizen_test_call("Types", "{\"s\": null}");
    text = kaizen_result_text(&r);
    CHECK_STR(text, "s=default n=-1 a=0 o=0 raw=0 tool=Types");
    free(text);
    kaizen_result_free(&r);
    r = kaizen_test_call("Types", "{\"s\": \"x\", \"n\": 2.5, \"a\": [1,2], \"o\": {\"k\": 1}, \"raw\": \"a\\u0000b\"}");
    text = kaizen_result_text(&r);
    CHECK_STR(text, "s=x n=2.5 a=2 o=1 raw=3 tool=Types");
    free(text);
    kaizen_result_free(&r);

    /* Internal tools run but are not listed in errors. */
    r = kaizen_test_call("Hidden", "{}");
    CHECK(!r.failed && r.part_count == 1);
    kaizen_result_free(&r);
}

static void test_input_errors(void) {
    expect_fail("Echo", "{}", KAIZEN_INVALID_INPUT, "invalid input for Echo: field `text` is missing");
    expect_fail("Echo", "{\"text\": 5}", KAIZEN_INVALID_INPUT,
                "invalid input for Echo: field `text` must be a string, got number");
    expect_fail("Echo", "{\"text\": null}", KAIZEN_INVALID_INPUT, "field `text` must be a string, got null");
    expect_fail("Echo", "{\"text\": \"a\\u0000b\"}", KAIZEN_INVALID_INPUT, "field `text` must not contain a NUL");
    expect_fail("Echo", "{\"text\": \"x\", \"times\": 1.5}", KAIZEN_INVALID_INPUT,
                "field `times` must be an integer within 64 bits");
    expect_fail("Echo", "{\"text\": \"x\", \"times\": 1e30}", KAIZEN_INVALID_INPUT, "field `times` must be an integer");
    expect_fail("Echo", "{\"text\": \"x\", \"times\": \"2\"}", KAIZEN_INVALID_INPUT,
                "field `times` must be a number, got string");
    expect_fail("Echo", "{\"text\": \"x\", \"upper\": 1}", KAIZEN_INVALID_INPUT,
                "field `upper` must be a boolean, got number");
    expect_fail("Types", "{\"a\": {}}", KAIZEN_INVALID_INPUT, "field `a` must be an array, got object");
    expect_fail("Types", "{\"o\": []}", KAIZEN_INVALID_INPUT, "field `o` must be an object, got array");
    expect_fail("Echo", "{\"text\": \"x\", \"times\": 9}", KAIZEN_INVALID_INPUT, "times must be 0 to 3, got 9");
    /* Input that is no JSON object. */
    expect_fail("Echo", "[1]", KAIZEN_INVALID_INPUT, "invalid input for Echo: expected a JSON object, got array");
    expect_fail("Echo", "{\"text\": ", KAIZEN_INVALID_INPUT, "invalid input for Echo: unexpected end of input");
    expect_fail("Echo", "", KAIZEN_INVALID_INPUT, "invalid input for Echo: unexpected end of input");
}

static void test_errors(void) {
    expect_fail("Nope", "{}", KAIZEN_NOT_FOUND,
                "this plugin has no tool named `Nope`; its tools are: Echo, Types, Fails, BadMeta, RawMeta, Parts, Errno");
    expect_fail("Fails", "{}", KAIZEN_NOT_FOUND, "/no/such: ");
    expect_fail("BadMeta", "{}", KAIZEN_FAILED, "BadMeta built invalid metadata: an array or object was left open");
    expect_fail("RawMeta", "{\"json\": \"{bad\"}", KAIZEN_FAILED, "metadata is not one JSON value");

    kaizen_result r = kaizen_test_call("RawMeta", "{\"json\": \"[1, {\\\"a\\\": null}]\"}");
    CHECK(!r.failed);
    CHECK_STR(r.metadata, "[1, {\"a\": null}]");
    kaizen_result_free(&r);

    /* A name with invalid UTF-8 still yields a clean message. */
    kaizen_result bad;
    static const kaizen_context ctx = {"s", "c", "/w", "/w"};
    kaizen_run(&ctx, "X\xff", 2, "{}", 2, &bad);
    CHECK(bad.failed && strstr(bad.error_message, "`X\xef\xbf\xbd`"));
    kaizen_result_free(&bad);
}

static void test_parts(void) {
    kaizen_result r = kaizen_test_call("Parts", "{}");
    CHECK(!r.failed && r.part_count == 3);
    if (r.part_count == 3) {
        CHECK(r.parts[0].kind == KAIZEN_PART_TEXT);
        CHECK_STR(r.parts[0].data, "bad \xef\xbf\xbd utf8");
        CHECK(r.parts[1].kind == KAIZEN_PART_IMAGE && r.parts[1].len == 4);
        CHECK_STR(r.parts[1].media_type, "image/png");
        CHECK(memcmp(r.parts[1].data, "\x89PNG", 4) == 0);
        CHECK(r.parts[2].len == 3 && memcmp(r.parts[2].data, "n\0l", 3) == 0);
    }
    kaizen_result_free(&r);
}

static void test_errno_kinds(void) {
    struct {
        int err;
        kaizen_error_kind kind;
    } cases[] = {{ENOENT, KAIZEN_NOT_FOUND}, {EACCES, KAIZEN_PERMISSION_DENIED}, {EROFS, KAIZEN_PERMISSION_DENIED},
                 {EEXIST, KAIZEN_CONFLICT},  {ETIMEDOUT, KAIZEN_TIMEOUT},         {EISDIR, KAIZEN_INVALID_INPUT},
                 {EIO, KAIZEN_FAILED}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char input[64];
        snprintf(input, sizeof input, "{\"err\": %d}", cases[i].err);
        kaizen_result r = kaizen_test_call("Errno", input);
        CHECK(r.failed && r.error_kind == cases[i].kind);
        char want[128];
        snprintf(want, sizeof want, "ctx: %s", strerror(cases[i].err));
        CHECK_STR(r.error_message, want);
        kaizen_result_free(&r);
    }
}

static void expect_bad_list(const kaizen_tool *tools, size_t count, const char *want) {
    char err[256] = "";
    CHECK(!kaizen_check_tool_list(tools, count, err, sizeof err));
    if (!strstr(err, want)) {
        fprintf(stderr, "  check said \"%s\", want \"%s\"\n", err, want);
        CHECK(!"check message");
    }
}

static void test_check_tools(void) {
    char err[256];
    CHECK(kaizen_check_tools(err, sizeof err));
    kaizen_tool good = {.name = "Ok_-9", .description = "d", .input_schema = OBJECT, .call = hidden};
    CHECK(kaizen_check_tool_list(&good, 1, err, sizeof err));

    expect_bad_list(&good, 0, "lists no tool");
    kaizen_tool t = good;
    t.name = NULL;
    expect_bad_list(&t, 1, "tool #1 in KAIZEN_TOOLS has no .name");
    t.name = "has space";
    expect_bad_list(&t, 1, "tool name `has space` is invalid");
    t.name = "";
    expect_bad_list(&t, 1, "tool name `` is invalid");
    t.name = "A123456789012345678901234567890123456789012345678901234567890123"; /* 64 chars */
    CHECK(kaizen_check_tool_list(&t, 1, err, sizeof err));
    t.name = "A1234567890123456789012345678901234567890123456789012345678901234"; /* 65 */
    expect_bad_list(&t, 1, "is invalid");
    kaizen_tool two[2] = {good, good};
    expect_bad_list(two, 2, "two tools are named `Ok_-9`");
    t = good;
    t.description = "";
    expect_bad_list(&t, 1, "tool `Ok_-9` has no .description");
    t = good;
    t.call = NULL;
    expect_bad_list(&t, 1, "has no .call function");
    t = good;
    t.input_schema = NULL;
    expect_bad_list(&t, 1, "has no .input_schema");
    t.input_schema = "{\"type\": \"object\",}";
    expect_bad_list(&t, 1, "the input schema of `Ok_-9` is not JSON: expected a string key at line 1, column 19");
    t.input_schema = "{\"type\": \"string\"}";
    expect_bad_list(&t, 1, "must be a JSON object with \"type\": \"object\"");
    t.input_schema = "[]";
    expect_bad_list(&t, 1, "must be a JSON object");
    t = good;
    t.danger = (kaizen_danger)7;
    expect_bad_list(&t, 1, "unknown .danger value 7");
}

int main(void) {
    test_success();
    test_input_errors();
    test_errors();
    test_parts();
    test_errno_kinds();
    test_check_tools();
    return check_summary("tool");
}
