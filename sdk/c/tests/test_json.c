/* test_json.c: native unit tests of the kit's JSON reader, writer and
 * buffer, hostile inputs included. */
#include "check.h"
#include "kaizen.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static kaizen_json_doc *parse(const char *text) { return kaizen_json_parse(text, strlen(text), NULL, 0); }

/* Parses `text`, expecting failure with a message containing `want`. */
static void expect_error(const char *text, size_t len, const char *want) {
    char err[200];
    kaizen_json_doc *doc = kaizen_json_parse(text, len, err, sizeof err);
    CHECK(doc == NULL);
    if (doc) {
        fprintf(stderr, "  parsed although it should not: %.60s\n", text);
        kaizen_json_free(doc);
    } else if (!strstr(err, want)) {
        fprintf(stderr, "  error \"%s\" lacks \"%s\"\n", err, want);
        CHECK(!"error message");
    }
}

static void test_values(void) {
    kaizen_json_doc *doc = parse(" {\"s\": \"hi\", \"n\": -12.5e1, \"i\": 42, \"t\": true, \"f\": false,"
                                 " \"z\": null, \"a\": [1, [2], {}], \"o\": {\"k\": \"v\"}} ");
    CHECK(doc != NULL);
    const kaizen_json *root = kaizen_json_root(doc);
    CHECK(kaizen_json_type_of(root) == KAIZEN_JSON_OBJECT);
    CHECK(kaizen_json_count(root) == 8);
    size_t len = 0;
    CHECK_STR(kaizen_json_string(kaizen_json_get(root, "s"), &len), "hi");
    CHECK(len == 2);
    CHECK(kaizen_json_number(kaizen_json_get(root, "n")) == -125.0);
    int64_t i = 0;
    CHECK(kaizen_json_int(kaizen_json_get(root, "i"), &i) && i == 42);
    CHECK(!kaizen_json_int(kaizen_json_get(root, "s"), &i));
    CHECK(kaizen_json_bool(kaizen_json_get(root, "t")));
    CHECK(!kaizen_json_bool(kaizen_json_get(root, "f")));
    CHECK(kaizen_json_type_of(kaizen_json_get(root, "f")) == KAIZEN_JSON_BOOL);
    CHECK(kaizen_json_type_of(kaizen_json_get(root, "z")) == KAIZEN_JSON_NULL);
    CHECK(kaizen_json_get(root, "missing") == NULL);
    const kaizen_json *a = kaizen_json_get(root, "a");
    CHECK(kaizen_json_count(a) == 3);
    CHECK(kaizen_json_number(kaizen_json_at(a, 0)) == 1);
    CHECK(kaizen_json_number(kaizen_json_at(kaizen_json_at(a, 1), 0)) == 2);
    CHECK(kaizen_json_type_of(kaizen_json_at(a, 2)) == KAIZEN_JSON_OBJECT);
    CHECK(kaizen_json_count(kaizen_json_at(a, 2)) == 0);
    CHECK(kaizen_json_at(a, 3) == NULL);
    CHECK_STR(kaizen_json_string(kaizen_json_get(kaizen_json_get(root, "o"), "k"), NULL), "v");
    CHECK_STR(kaizen_json_key_at(root, 7, &len), "o");
    CHECK(kaizen_json_key_at(root, 8, NULL) == NULL);
    CHECK(kaizen_json_key_at(a, 0, NULL) == NULL); /* arrays have no keys */
    /* Accessors take NULL and wrong types quietly. */
    CHECK(kaizen_json_get(NULL, "x") == NULL);
    CHECK(kaizen_json_get(a, "x") == NULL);
    CHECK(kaizen_json_string(NULL, NULL) == NULL);
    CHECK(kaizen_json_number(kaizen_json_get(root, "s")) == 0);
    kaizen_json_free(doc);
    kaizen_json_free(NULL);

    /* Scalars at the top. */
    doc = parse("\"top\"");
    CHECK_STR(kaizen_json_string(kaizen_json_root(doc), NULL), "top");
    kaizen_json_free(doc);
    doc = parse("0");
    CHECK(doc && kaizen_json_type_of(kaizen_json_root(doc)) == KAIZEN_JSON_NUMBER);
    kaizen_json_free(doc);
    doc = parse("[]");
    CHECK(doc && kaizen_json_count(kaizen_json_root(doc)) == 0);
    kaizen_json_free(doc);
}

static void test_strings(void) {
    kaizen_json_doc *doc = parse("[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\", \"\\u00e9\\u4e2d\\ud83d\\ude00\", "
                                 "\"caf\xc3\xa9 \xf0\x9f\x98\x80\", \"nul\\u0000in\"]");
    CHECK(doc != NULL);
    const kaizen_json *root = kaizen_json_root(doc);
    CHECK_STR(kaizen_json_string(kaizen_json_at(root, 0), NULL), "a\"b\\c/d\b\f\n\r\t");
    CHECK_STR(kaizen_json_string(kaizen_json_at(root, 1), NULL), "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80");
    CHECK_STR(kaizen_json_string(kaizen_json_at(root, 2), NULL), "caf\xc3\xa9 \xf0\x9f\x98\x80");
    size_t len = 0;
    const char *s = kaizen_json_string(kaizen_json_at(root, 3), &len);
    CHECK(len == 6 && memcmp(s, "nul\0in", 6) == 0);
    kaizen_json_free(doc);

    /* Input need not be NUL-terminated: only `len` bytes are read. */
    const char sliced[] = "\"abc\"garbage";
    doc = kaizen_json_parse(sliced, 5, NULL, 0);
    CHECK_STR(kaizen_json_string(kaizen_json_root(doc), NULL), "abc");
    kaizen_json_free(doc);

    /* Duplicate keys: the last one wins, as in the host's validator. */
    doc = parse("{\"k\": 1, \"k\": 2}");
    CHECK(kaizen_json_number(kaizen_json_get(kaizen_json_root(doc), "k")) == 2);
    kaizen_json_free(doc);
    /* A key with an embedded NUL does not match its prefix. */
    doc = parse("{\"a\\u0000b\": 1}");
    CHECK(kaizen_json_get(kaizen_json_root(doc), "a") == NULL);
    kaizen_json_free(doc);
}

static void test_numbers(void) {
    kaizen_json_doc *doc = parse("[9223372036854775807, -9223372036854775808, 9223372036854775808, 5.0, 1e3, "
                                 "1.5, 1e300, 123456789012345678901234567890, -0, 2e-400, 9007199254740993.0]");
    CHECK(doc != NULL);
    const kaizen_json *r = kaizen_json_root(doc);
    int64_t i = 0;
    CHECK(kaizen_json_int(kaizen_json_at(r, 0), &i) && i == INT64_MAX);
    CHECK(kaizen_json_int(kaizen_json_at(r, 1), &i) && i == INT64_MIN);
    CHECK(!kaizen_json_int(kaizen_json_at(r, 2), &i)); /* one past INT64_MAX */
    CHECK(kaizen_json_int(kaizen_json_at(r, 3), &i) && i == 5);
    CHECK(kaizen_json_int(kaizen_json_at(r, 4), &i) && i == 1000);
    CHECK(!kaizen_json_int(kaizen_json_at(r, 5), &i));
    CHECK(!kaizen_json_int(kaizen_json_at(r, 6), &i));
    CHECK(kaizen_json_number(kaizen_json_at(r, 6)) == 1e300);
    CHECK(!kaizen_json_int(kaizen_json_at(r, 7), &i)); /* huge integer: no int ... */
    CHECK(kaizen_json_number(kaizen_json_at(r, 7)) > 1.2e29); /* ... but a double */
    CHECK(kaizen_json_int(kaizen_json_at(r, 8), &i) && i == 0);
    CHECK(kaizen_json_number(kaizen_json_at(r, 9)) == 0); /* underflow reads as 0 */
    CHECK(!kaizen_json_int(kaizen_json_at(r, 10), &i));    /* past 2^53 in double form */
    kaizen_json_free(doc);
}

static void test_errors(void) {
    expect_error("", 0, "unexpected end of input");
    expect_error("   ", 3, "unexpected end of input");
    expect_error("{", 1, "unexpected end of input");
    expect_error("{\"a\"", 4, "expected ':'");
    expect_error("{\"a\":", 5, "unexpected end of input");
    expect_error("{\"a\":1", 6, "expected ',' or '}'");
    expect_error("[1,", 3, "unexpected end of input");
    expect_error("[1 2]", 5, "expected ',' or ']'");
    expect_error("[1,]", 4, "expected a JSON value");
    expect_error("{\"a\":1,}", 8, "expected a string key");
    expect_error("{a:1}", 5, "expected a string key");
    expect_error("\"abc", 4, "unterminated string");
    expect_error("\"ab\\", 4, "unterminated escape");
    expect_error("\"\\x\"", 4, "invalid escape");
    expect_error("\"\\u12\"", 6, "invalid \\u escape");
    expect_error("\"\\u12g4\"", 8, "invalid \\u escape");
    expect_error("\"\\ud800\"", 8, "lone high surrogate");
    expect_error("\"\\ud800\\u0041\"", 14, "lone high surrogate");
    expect_error("\"\\udc00\"", 8, "lone low surrogate");
    expect_error("\"tab\there\"", 10, "control character");
    expect_error("\"\xff\"", 3, "invalid UTF-8");
    expect_error("\"\xc0\xaf\"", 4, "invalid UTF-8");         /* overlong '/' */
    expect_error("\"\xed\xa0\x80\"", 5, "invalid UTF-8");     /* encoded surrogate */
    expect_error("\"\xf4\x90\x80\x80\"", 6, "invalid UTF-8"); /* past U+10FFFF */
    expect_error("\"\xe2\x82\"", 4, "invalid UTF-8");         /* truncated sequence */
    expect_error("01", 2, "leading zero");
    expect_error("-", 1, "invalid number");
    expect_error("1.", 2, "digits must follow '.'");
    expect_error("1e", 2, "exponent");
    expect_error("+1", 2, "expected a JSON value");
    expect_error(".5", 2, "expected a JSON value");
    expect_error("1e400", 5, "number out of range");
    expect_error("-1e400", 6, "number out of range");
    expect_error("NaN", 3, "expected a JSON value");
    expect_error("Infinity", 8, "expected a JSON value");
    expect_error("tru", 3, "expected a JSON value");
    expect_error("nul", 3, "expected a JSON value");
    expect_error("{} {}", 5, "trailing characters");
    expect_error("[1]x", 4, "trailing characters");
    expect_error("/* c */ 1", 9, "expected a JSON value");
    expect_error("\xef\xbb\xbf{}", 5, "expected a JSON value"); /* a BOM is no JSON */
    char nul_inside[] = {'[', '1', '\0', ']'};
    expect_error(nul_inside, sizeof nul_inside, "expected ',' or ']'");
    /* Positions name line and column. */
    expect_error("{\n  \"a\": 1,\n  \"b\" 2\n}", 21, "line 3, column 7");
}

static void test_depth(void) {
    char deep[4096];
    /* KAIZEN_JSON_MAX_DEPTH levels parse ... */
    size_t n = 0;
    for (int i = 0; i < KAIZEN_JSON_MAX_DEPTH; i++) deep[n++] = '[';
    for (int i = 0; i < KAIZEN_JSON_MAX_DEPTH; i++) deep[n++] = ']';
    kaizen_json_doc *doc = kaizen_json_parse(deep, n, NULL, 0);
    CHECK(doc != NULL);
    kaizen_json_free(doc);
    /* ... one more does not, for arrays and objects alike. */
    n = 0;
    for (int i = 0; i <= KAIZEN_JSON_MAX_DEPTH; i++) deep[n++] = '[';
    for (int i = 0; i <= KAIZEN_JSON_MAX_DEPTH; i++) deep[n++] = ']';
    expect_error(deep, n, "nested too deeply");
    n = 0;
    for (int i = 0; i <= KAIZEN_JSON_MAX_DEPTH; i++) n += (size_t)sprintf(deep + n, "{\"a\":");
    expect_error(deep, n, "nested too deeply");
    /* A hostile megabyte of '[' fails fast on depth, not on the stack. */
    size_t big = 1 << 20;
    char *open = malloc(big);
    memset(open, '[', big);
    expect_error(open, big, "nested too deeply");
    free(open);
}

static void test_large(void) {
    /* Wide documents: 200000 elements, with O(1) indexing. */
    kaizen_buf b = KAIZEN_BUF_INIT;
    kaizen_buf_puts(&b, "[");
    for (int i = 0; i < 200000; i++) kaizen_buf_printf(&b, "%s{\"i\":%d}", i ? "," : "", i);
    kaizen_buf_puts(&b, "]");
    CHECK(!b.oom);
    kaizen_json_doc *doc = kaizen_json_parse(b.data, b.len, NULL, 0);
    CHECK(doc != NULL);
    const kaizen_json *r = kaizen_json_root(doc);
    CHECK(kaizen_json_count(r) == 200000);
    int64_t v = 0;
    CHECK(kaizen_json_int(kaizen_json_get(kaizen_json_at(r, 123456), "i"), &v) && v == 123456);
    kaizen_json_free(doc);
    kaizen_buf_free(&b);

    /* A 10000-digit number is a (huge) valid double only while it fits. */
    char *digits = malloc(10002);
    memset(digits, '9', 10001);
    digits[10001] = '\0';
    expect_error(digits, 10001, "number out of range");
    digits[0] = '0';
    digits[1] = '.';
    doc = kaizen_json_parse(digits, 10001, NULL, 0);
    CHECK(doc && kaizen_json_number(kaizen_json_root(doc)) == 1.0); /* rounds up */
    kaizen_json_free(doc);
    free(digits);
}

/* Every prefix of a valid document is either an error or (for a few
 * prefixes of numbers) valid, never a crash; sanitizers watch memory. */
static void test_truncations(void) {
    const char *text = "{\"a\": [1, -2.5e+3, \"x\\u00e9\\ud83d\\ude00\", true, null], \"b\": {\"c\": false}}";
    size_t n = strlen(text);
    size_t errors = 0;
    for (size_t i = 0; i < n; i++) {
        char *copy = malloc(i ? i : 1); /* exact size: ASan sees any over-read */
        memcpy(copy, text, i);
        kaizen_json_doc *doc = kaizen_json_parse(copy, i, NULL, 0);
        errors += doc == NULL;
        kaizen_json_free(doc);
        free(copy);
    }
    CHECK(errors == n);
}

/* Random bytes and random mutations of valid JSON must never crash. */
static void test_fuzz(void) {
    const char *seed = "{\"k\": [1, 2.5, \"s\\n\", {\"x\": null}], \"t\": true}";
    size_t n = strlen(seed);
    unsigned state = 12345;
    size_t parsed = 0;
    for (int round = 0; round < 20000; round++) {
        char buf[64];
        memcpy(buf, seed, n);
        for (int m = 0; m < 3; m++) {
            state = state * 1103515245u + 12345u;
            size_t at = (state >> 8) % n;
            state = state * 1103515245u + 12345u;
            buf[at] = (char)(state >> 16);
        }
        char *copy = malloc(n);
        memcpy(copy, buf, n);
        kaizen_json_doc *doc = kaizen_json_parse(copy, n, NULL, 0);
        if (doc) {
            parsed++;
            /* Walk it all. */
            const kaizen_json *r = kaizen_json_root(doc);
            for (size_t i = 0; i < kaizen_json_count(r); i++) {
                kaizen_json_string(kaizen_json_at(r, i), NULL);
                kaizen_json_key_at(r, i, NULL);
            }
        }
        kaizen_json_free(doc);
        free(copy);
    }
    CHECK(parsed > 0 && parsed < 20000);
}

static void test_writer(void) {
    kaizen_jw w = KAIZEN_JW_INIT;
    kaizen_jw_object_begin(&w);
    kaizen_jw_key_string(&w, "s", "q\"b\\s\n\t\x01 \xc3\xa9");
    kaizen_jw_key_int(&w, "i", -42);
    kaizen_jw_key_number(&w, "n", 0.1);
    kaizen_jw_key_number(&w, "e", 1e300);
    kaizen_jw_key_bool(&w, "b", true);
    kaizen_jw_key(&w, "z");
    kaizen_jw_null(&w);
    kaizen_jw_key(&w, "a");
    kaizen_jw_array_begin(&w);
    kaizen_jw_int(&w, 1);
    kaizen_jw_array_begin(&w);
    kaizen_jw_array_end(&w);
    kaizen_jw_object_begin(&w);
    kaizen_jw_object_end(&w);
    kaizen_jw_raw(&w, "{\"r\": [1]}", 10);
    kaizen_jw_array_end(&w);
    kaizen_jw_object_end(&w);
    size_t len = 0;
    const char *text = kaizen_jw_finish(&w, &len);
    CHECK_STR(text, "{\"s\":\"q\\\"b\\\\s\\n\\t\\u0001 \xc3\xa9\",\"i\":-42,\"n\":0.1,\"e\":1e+300,\"b\":true,"
                    "\"z\":null,\"a\":[1,[],{},{\"r\": [1]}]}");
    CHECK(text && len == strlen(text));
    /* What it writes reads back. */
    kaizen_json_doc *doc = text ? kaizen_json_parse(text, len, NULL, 0) : NULL;
    CHECK(doc != NULL);
    CHECK_STR(kaizen_json_string(kaizen_json_get(kaizen_json_root(doc), "s"), NULL), "q\"b\\s\n\t\x01 \xc3\xa9");
    kaizen_json_free(doc);
    kaizen_jw_free(&w);

    /* Invalid UTF-8 becomes U+FFFD; the output stays valid. */
    kaizen_jw_string(&w, "a\xff" "b\xe2\x82");
    CHECK_STR(kaizen_jw_finish(&w, NULL), "\"a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd\"");
    kaizen_jw_free(&w);
    kaizen_jw_string_n(&w, "n\0l", 3);
    CHECK_STR(kaizen_jw_finish(&w, NULL), "\"n\\u0000l\"");
    kaizen_jw_free(&w);

    /* Numbers: shortest round trip, integers exact. */
    kaizen_jw_array_begin(&w);
    kaizen_jw_number(&w, 3);
    kaizen_jw_number(&w, -0.5);
    kaizen_jw_number(&w, 1.0 / 3);
    kaizen_jw_int(&w, INT64_MIN);
    kaizen_jw_array_end(&w);
    CHECK_STR(kaizen_jw_finish(&w, NULL), "[3,-0.5,0.3333333333333333,-9223372036854775808]");
    kaizen_jw_free(&w);
}

static void expect_misuse(kaizen_jw *w, const char *want) {
    CHECK(kaizen_jw_finish(w, NULL) == NULL);
    const char *err = kaizen_jw_error(w);
    CHECK(err && strstr(err, want));
    if (err && !strstr(err, want)) fprintf(stderr, "  writer error \"%s\" lacks \"%s\"\n", err, want);
    kaizen_jw_free(w);
}

static void test_writer_misuse(void) {
    kaizen_jw w = KAIZEN_JW_INIT;
    expect_misuse(&w, "no value");
    kaizen_jw_object_begin(&w);
    expect_misuse(&w, "left open");
    kaizen_jw_object_begin(&w);
    kaizen_jw_int(&w, 1);
    expect_misuse(&w, "without a key");
    kaizen_jw_object_begin(&w);
    kaizen_jw_key(&w, "a");
    kaizen_jw_key(&w, "b");
    expect_misuse(&w, "value is due");
    kaizen_jw_object_begin(&w);
    kaizen_jw_key(&w, "a");
    kaizen_jw_object_end(&w);
    expect_misuse(&w, "without its value");
    kaizen_jw_array_begin(&w);
    kaizen_jw_key(&w, "a");
    expect_misuse(&w, "inside an array");
    kaizen_jw_array_begin(&w);
    kaizen_jw_object_end(&w);
    expect_misuse(&w, "without its begin");
    kaizen_jw_array_end(&w);
    expect_misuse(&w, "without its begin");
    kaizen_jw_int(&w, 1);
    kaizen_jw_int(&w, 2);
    expect_misuse(&w, "second value");
    kaizen_jw_number(&w, NAN);
    expect_misuse(&w, "NaN");
    kaizen_jw_number(&w, INFINITY);
    expect_misuse(&w, "infinite");
    kaizen_jw_raw(&w, "{1}", 3);
    expect_misuse(&w, "not one JSON value");
    kaizen_jw_string(&w, NULL);
    expect_misuse(&w, "NULL string");
    for (int i = 0; i <= KAIZEN_JW_MAX_DEPTH; i++) kaizen_jw_array_begin(&w);
    expect_misuse(&w, "nested too deeply");
    /* After a stop, nothing more is written. */
    kaizen_jw_array_begin(&w);
    kaizen_jw_object_end(&w);
    kaizen_jw_int(&w, 5);
    CHECK(kaizen_jw_finish(&w, NULL) == NULL);
    CHECK(w.buf.len == 1);
    kaizen_jw_free(&w);
}

static void test_buf(void) {
    kaizen_buf b = KAIZEN_BUF_INIT;
    CHECK(kaizen_buf_puts(&b, "ab"));
    CHECK(kaizen_buf_printf(&b, "%d-%s", 12, "x"));
    CHECK_STR(b.data, "ab12-x");
    CHECK(b.len == 6);
    /* Long formatted text takes the second path. */
    char big[1000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    CHECK(kaizen_buf_printf(&b, "[%s]", big));
    CHECK(b.len == 6 + 1001 && b.data[b.len] == '\0' && b.data[b.len - 1] == ']');
    kaizen_buf_free(&b);
    CHECK(b.data == NULL && b.len == 0);
    CHECK(kaizen_buf_append(&b, "", 0));
    CHECK_STR(b.data, "");
    kaizen_buf_free(&b);
}

int main(void) {
    test_values();
    test_strings();
    test_numbers();
    test_errors();
    test_depth();
    test_large();
    test_truncations();
    test_fuzz();
    test_writer();
    test_writer_misuse();
    test_buf();
    return check_summary("json");
}
