/* test_abi.c: the kit's export glue (src/kaizen_wasm.c) and the generated
 * bindings, compiled natively, with this file playing the host: it
 * allocates the arguments as the canonical ABI does, reads the results from
 * the return area and calls the post-return functions. Under
 * AddressSanitizer this checks the ownership rules: every argument freed
 * once, every result freed by the post-return, nothing leaked. */
#include "check.h"
#include "kaizen.h"
#include "kaizen_world.h"

#include <stdint.h>
#include <stdlib.h>

/* The generated entry points the host calls (not in the header). */
uint8_t *__wasm_export_exports_kaizen_plugin_tools_tools(void);
void __wasm_export_exports_kaizen_plugin_tools_tools_post_return(uint8_t *ret);
uint8_t *__wasm_export_exports_kaizen_plugin_tools_call(uint8_t *, size_t, uint8_t *, size_t, uint8_t *, size_t,
                                                        uint8_t *, size_t, uint8_t *, size_t, uint8_t *, size_t);
void __wasm_export_exports_kaizen_plugin_tools_call_post_return(uint8_t *ret);

/* Natively the component-type object (a wasm object) is not linked. */
void __component_type_object_force_link_kaizen_world(void) {}

/* The `log` import. */
static char last_log[256];
static int last_level = -1;
void __wasm_import_kaizen_plugin_log_log(int32_t level, uint8_t *ptr, size_t len) {
    last_level = level;
    snprintf(last_log, sizeof last_log, "%.*s", (int)len, (const char *)ptr);
}

static void echo(kaizen_call *call) {
    const char *text;
    if (!kaizen_arg_string(call, "text", &text)) return;
    kaizen_info("echo %s from %s", text, kaizen_ctx(call)->session_id);
    kaizen_text(call, text);
    kaizen_text(call, "");
    kaizen_image(call, "image/png", "\x89PNG", 4);
    kaizen_image(call, "image/empty", "", 0);
    kaizen_jw *m = kaizen_metadata(call);
    kaizen_jw_object_begin(m);
    kaizen_jw_key_string(m, "cwd", kaizen_ctx(call)->cwd);
    kaizen_jw_object_end(m);
}

static void plain(kaizen_call *call) { kaizen_text(call, "no metadata"); }
static void nothing(kaizen_call *call) { (void)call; }
static void fails(kaizen_call *call) { kaizen_fail(call, KAIZEN_TIMEOUT, "too slow"); }

KAIZEN_TOOLS({.name = "Echo", .description = "Echoes.", .input_schema = "{\"type\":\"object\"}", .read_only = true,
              .danger = KAIZEN_SAFE, .call = echo},
             {.name = "Plain", .description = "Text only.", .input_schema = "{\"type\":\"object\"}", .call = plain},
             {.name = "Nothing", .description = "No content.", .input_schema = "{\"type\":\"object\"}",
              .danger = KAIZEN_DANGEROUS, .call = nothing},
             {.name = "Fails", .description = "Fails.", .input_schema = "{\"type\":\"object\"}", .call = fails},
             {.name = "Internal", .description = "Hidden.", .input_schema = "{\"type\":\"object\"}", .internal = true,
              .call = plain});

#define P sizeof(void *)
#define AT(base, off, type) (*(type *)((uint8_t *)(base) + (off)))

/* A host string in guest memory, as cabi_realloc would give it: empty ones
 * point at the alignment (1) and are never freed. */
static uint8_t *host_string(const char *s, size_t *len) {
    *len = strlen(s);
    if (!*len) return (uint8_t *)1;
    uint8_t *p = malloc(*len);
    memcpy(p, s, *len);
    return p;
}

static uint8_t *call(const char *session, const char *name, const char *input) {
    size_t l0, l1, l2, l3, l4, l5;
    uint8_t *a0 = host_string(session, &l0), *a1 = host_string("call-1", &l1), *a2 = host_string("/ws", &l2),
            *a3 = host_string("/ws/sub", &l3), *a4 = host_string(name, &l4), *a5 = host_string(input, &l5);
    return __wasm_export_exports_kaizen_plugin_tools_call(a0, l0, a1, l1, a2, l2, a3, l3, a4, l4, a5, l5);
}

static char *str_at(uint8_t *base, size_t ptr_off) {
    static char buf[512];
    size_t len = AT(base, ptr_off + P, size_t);
    snprintf(buf, sizeof buf, "%.*s", (int)len, AT(base, ptr_off, char *));
    return buf;
}

static void test_tools_list(void) {
    uint8_t *ret = __wasm_export_exports_kaizen_plugin_tools_tools();
    size_t len = AT(ret, P, size_t);
    uint8_t *specs = AT(ret, 0, uint8_t *);
    CHECK(len == 4); /* the internal tool is left out */
    if (len == 4) {
        CHECK_STR(str_at(specs, 0), "Echo");
        CHECK_STR(str_at(specs, 2 * P), "Echoes.");
        CHECK_STR(str_at(specs, 4 * P), "{\"type\":\"object\"}");
        CHECK(AT(specs, 6 * P, uint8_t) == KAIZEN_PLUGIN_TYPES_DANGER_LEVEL_SAFE);
        CHECK(AT(specs, 6 * P + 1, uint8_t) == 1);
        uint8_t *plain_spec = specs + 7 * P;
        CHECK(AT(plain_spec, 6 * P, uint8_t) == KAIZEN_PLUGIN_TYPES_DANGER_LEVEL_MODERATE);
        CHECK(AT(plain_spec, 6 * P + 1, uint8_t) == 0);
        CHECK(AT(specs + 14 * P, 6 * P, uint8_t) == KAIZEN_PLUGIN_TYPES_DANGER_LEVEL_DANGEROUS);
    }
    __wasm_export_exports_kaizen_plugin_tools_tools_post_return(ret);
}

static void test_ok(void) {
    uint8_t *ret = call("sess", "Echo", "{\"text\": \"hi\"}");
    CHECK(AT(ret, 0, uint8_t) == 0);
    size_t n = AT(ret, 2 * P, size_t);
    uint8_t *parts = AT(ret, P, uint8_t *);
    CHECK(n == 4);
    if (n == 4) {
        CHECK(AT(parts, 0, uint8_t) == KAIZEN_PLUGIN_TYPES_CONTENT_PART_TEXT);
        CHECK_STR(str_at(parts, P), "hi");
        CHECK(AT(parts + 5 * P, 2 * P, size_t) == 0); /* the empty text */
        uint8_t *img = parts + 10 * P;
        CHECK(AT(img, 0, uint8_t) == KAIZEN_PLUGIN_TYPES_CONTENT_PART_IMAGE);
        CHECK_STR(str_at(img, P), "image/png");
        CHECK(AT(img, 4 * P, size_t) == 4 && memcmp(AT(img, 3 * P, uint8_t *), "\x89PNG", 4) == 0);
        CHECK(AT(parts + 15 * P, 4 * P, size_t) == 0); /* the empty image */
    }
    CHECK(AT(ret, 3 * P, uint8_t) == 1);
    CHECK_STR(str_at(ret, 4 * P), "{\"cwd\":\"/ws/sub\"}");
    CHECK(last_level == KAIZEN_PLUGIN_TYPES_LOG_LEVEL_INFO);
    CHECK_STR(last_log, "echo hi from sess");
    __wasm_export_exports_kaizen_plugin_tools_call_post_return(ret);

    /* No metadata; an empty session id (never freed by the host's rules). */
    ret = call("", "Plain", "{}");
    CHECK(AT(ret, 0, uint8_t) == 0 && AT(ret, 2 * P, size_t) == 1 && AT(ret, 3 * P, uint8_t) == 0);
    __wasm_export_exports_kaizen_plugin_tools_call_post_return(ret);

    /* No content at all: an empty list. */
    ret = call("s", "Nothing", "{}");
    CHECK(AT(ret, 0, uint8_t) == 0 && AT(ret, 2 * P, size_t) == 0);
    __wasm_export_exports_kaizen_plugin_tools_call_post_return(ret);
}

static void test_errors(void) {
    uint8_t *ret = call("s", "Fails", "{}");
    CHECK(AT(ret, 0, uint8_t) == 1);
    CHECK(AT(ret, P, uint8_t) == EXPORTS_KAIZEN_PLUGIN_TOOLS_ERROR_KIND_TIMEOUT);
    CHECK_STR(str_at(ret, 2 * P), "too slow");
    __wasm_export_exports_kaizen_plugin_tools_call_post_return(ret);

    ret = call("s", "Echo", "{}");
    CHECK(AT(ret, 0, uint8_t) == 1);
    CHECK(AT(ret, P, uint8_t) == EXPORTS_KAIZEN_PLUGIN_TOOLS_ERROR_KIND_INVALID_INPUT);
    CHECK_STR(str_at(ret, 2 * P), "invalid input for Echo: field `text` is missing");
    __wasm_export_exports_kaizen_plugin_tools_call_post_return(ret);

    ret = call("s", "Nope", "");
    CHECK(AT(ret, 0, uint8_t) == 1);
    CHECK(AT(ret, P, uint8_t) == EXPORTS_KAIZEN_PLUGIN_TOOLS_ERROR_KIND_NOT_FOUND);
    CHECK_STR(str_at(ret, 2 * P), "this plugin has no tool named `Nope`; its tools are: Echo, Plain, Nothing, Fails");
    __wasm_export_exports_kaizen_plugin_tools_call_post_return(ret);

    ret = call("s", "Echo", "{\"text\": ");
    CHECK(AT(ret, 0, uint8_t) == 1);
    CHECK_STR(str_at(ret, 2 * P), "invalid input for Echo: unexpected end of input, expected a JSON value at line 1, column 10");
    __wasm_export_exports_kaizen_plugin_tools_call_post_return(ret);
}

int main(void) {
    test_tools_list();
    test_ok();
    test_errors();
    return check_summary("abi");
}
