/* kaizen_json.c: the kit's growable buffer, JSON reader and JSON writer.
 * Plain C99 with no wasm dependency, so it is unit-tested natively. */
#include "kaizen.h"
#include "kaizen_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* kaizen_buf                                                                */
/* ------------------------------------------------------------------------ */

static bool buf_reserve(kaizen_buf *buf, size_t extra) {
    if (buf->oom) return false;
    /* One more byte keeps the text NUL-terminated. */
    if (extra > SIZE_MAX - buf->len - 1) {
        buf->oom = true;
        return false;
    }
    size_t need = buf->len + extra + 1;
    if (need <= buf->cap) return true;
    size_t cap = buf->cap ? buf->cap : 64;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *data = realloc(buf->data, cap);
    if (!data) {
        buf->oom = true;
        return false;
    }
    buf->data = data;
    buf->cap = cap;
    return true;
}

bool kaizen_buf_append(kaizen_buf *buf, const void *data, size_t len) {
    if (!buf_reserve(buf, len)) return false;
    if (len) memcpy(buf->data + buf->len, data, len);
    buf->len += len;
    buf->data[buf->len] = '\0';
    return true;
}

bool kaizen_buf_puts(kaizen_buf *buf, const char *text) {
    return kaizen_buf_append(buf, text, strlen(text));
}

bool kaizen_buf_vprintf(kaizen_buf *buf, const char *fmt, va_list args) {
    va_list again;
    va_copy(again, args);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, args);
    if (n < 0) {
        va_end(again);
        buf->oom = true; /* an encoding error; treat like a failed append */
        return false;
    }
    bool ok;
    if ((size_t)n < sizeof small) {
        ok = kaizen_buf_append(buf, small, (size_t)n);
    } else if ((ok = buf_reserve(buf, (size_t)n))) {
        vsnprintf(buf->data + buf->len, (size_t)n + 1, fmt, again);
        buf->len += (size_t)n;
    }
    va_end(again);
    return ok;
}

bool kaizen_buf_printf(kaizen_buf *buf, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    bool ok = kaizen_buf_vprintf(buf, fmt, args);
    va_end(args);
    return ok;
}

void kaizen_buf_free(kaizen_buf *buf) {
    free(buf->data);
    buf->data = NULL;
    buf->len = buf->cap = 0;
    buf->oom = false;
}

/* ------------------------------------------------------------------------ */
/* UTF-8                                                                     */
/* ------------------------------------------------------------------------ */

size_t kaizen__utf8_seq(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    size_t len;
    unsigned min;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2, cp = c & 0x1F, min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3, cp = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    /* Overlong forms, UTF-16 surrogates and values past U+10FFFF are not
     * UTF-8, and the host refuses strings holding them. */
    if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return 0;
    return len;
}

bool kaizen__utf8_lossy(kaizen_buf *buf, const char *text, size_t len) {
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        size_t start = i;
        while (i < len) {
            size_t n = kaizen__utf8_seq(s + i, len - i);
            if (!n) break;
            i += n;
        }
        if (!kaizen_buf_append(buf, s + start, i - start)) return false;
        if (i < len) {
            if (!kaizen_buf_append(buf, "\xEF\xBF\xBD", 3)) return false;
            i++;
        }
    }
    return !buf->oom;
}

/* ------------------------------------------------------------------------ */
/* Reader                                                                    */
/* ------------------------------------------------------------------------ */

/* Containers hold their children contiguously so that kaizen_json_at is
 * O(1); object members carry their key. While parsing, `first` is an index
 * into the node array; when the array stops moving it becomes a pointer. */
struct kaizen_json {
    unsigned char type;
    bool boolean;
    uint32_t len;     /* string bytes, or children */
    uint32_t key_len; /* object members only */
    const char *key;
    union {
        const char *text; /* string: decoded; number: its lexeme */
        size_t first;
        const kaizen_json *children;
    } u;
};

struct kaizen_json_doc {
    char *source;  /* a NUL-terminated copy: strtod reads numbers from it */
    char *strings; /* decoded strings and keys, each NUL-terminated */
    kaizen_json *nodes;
    size_t node_count;
    const kaizen_json *root;
};

typedef struct parser {
    const char *start;
    const char *p;
    const char *end;
    char *strings;
    size_t strings_len;
    /* Values whose container is still open, and values already placed. */
    kaizen_json *stack;
    size_t stack_len, stack_cap;
    kaizen_json *nodes;
    size_t nodes_len, nodes_cap;
    unsigned depth;
    char *err;
    size_t err_size;
    bool failed;
} parser;

static void fail_at(parser *ps, const char *at, const char *what) {
    if (ps->failed) return;
    ps->failed = true;
    if (!ps->err || !ps->err_size) return;
    size_t line = 1, column = 1;
    for (const char *q = ps->start; q < at && q < ps->end; q++) {
        if (*q == '\n') {
            line++;
            column = 1;
        } else if (((unsigned char)*q & 0xC0) != 0x80) {
            column++; /* count characters, not UTF-8 continuation bytes */
        }
    }
    snprintf(ps->err, ps->err_size, "%s at line %zu, column %zu", what, line, column);
}

static void fail_oom(parser *ps) {
    if (ps->failed) return;
    ps->failed = true;
    if (ps->err && ps->err_size) snprintf(ps->err, ps->err_size, "out of memory while parsing JSON");
}

static bool grow(parser *ps, kaizen_json **array, size_t *cap, size_t need) {
    if (need <= *cap) return true;
    size_t next = *cap ? *cap * 2 : 16;
    if (next < need) next = need;
    if (next > SIZE_MAX / sizeof(kaizen_json)) {
        fail_oom(ps);
        return false;
    }
    kaizen_json *grown = realloc(*array, next * sizeof(kaizen_json));
    if (!grown) {
        fail_oom(ps);
        return false;
    }
    *array = grown;
    *cap = next;
    return true;
}

static kaizen_json *push(parser *ps) {
    if (!grow(ps, &ps->stack, &ps->stack_cap, ps->stack_len + 1)) return NULL;
    kaizen_json *node = &ps->stack[ps->stack_len++];
    memset(node, 0, sizeof *node);
    return node;
}

static void skip_ws(parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')) ps->p++;
}

static int hex4(const char *s) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= c - '0';
        else if (c >= 'a' && c <= 'f') v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') v |= c - 'A' + 10;
        else return -1;
    }
    return v;
}

static size_t put_utf8(char *out, unsigned cp) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decodes the string at ps->p (its opening quote) into ps->strings. The
 * buffer is as long as the source: a decoded string plus its NUL never
 * outgrows its quoted form. */
static bool parse_string(parser *ps, const char **out, uint32_t *out_len) {
    const char *open = ps->p++;
    char *dst = ps->strings + ps->strings_len;
    char *w = dst;
    for (;;) {
        if (ps->p >= ps->end) {
            fail_at(ps, open, "unterminated string");
            return false;
        }
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c < 0x20) {
            fail_at(ps, ps->p, "control character in string (escape it)");
            return false;
        }
        if (c == '\\') {
            if (ps->end - ps->p < 2) {
                fail_at(ps, ps->p, "unterminated escape in string");
                return false;
            }
            char e = ps->p[1];
            const char *esc = ps->p;
            ps->p += 2;
            switch (e) {
            case '"': *w++ = '"'; break;
            case '\\': *w++ = '\\'; break;
            case '/': *w++ = '/'; break;
            case 'b': *w++ = '\b'; break;
            case 'f': *w++ = '\f'; break;
            case 'n': *w++ = '\n'; break;
            case 'r': *w++ = '\r'; break;
            case 't': *w++ = '\t'; break;
            case 'u': {
                int hi = ps->end - ps->p >= 4 ? hex4(ps->p) : -1;
                if (hi < 0) {
                    fail_at(ps, esc, "invalid \\u escape (want four hex digits)");
                    return false;
                }
                ps->p += 4;
                unsigned cp = (unsigned)hi;
                if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    fail_at(ps, esc, "lone low surrogate in \\u escape");
                    return false;
                }
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    int lo = (ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u') ? hex4(ps->p + 2) : -1;
                    if (lo < 0xDC00 || lo > 0xDFFF) {
                        fail_at(ps, esc, "lone high surrogate in \\u escape (a low one must follow)");
                        return false;
                    }
                    ps->p += 6;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + ((unsigned)lo - 0xDC00);
                }
                w += put_utf8(w, cp);
                break;
            }
            default:
                fail_at(ps, esc, "invalid escape in string");
                return false;
            }
            continue;
        }
        size_t n = kaizen__utf8_seq((const unsigned char *)ps->p, (size_t)(ps->end - ps->p));
        if (!n) {
            fail_at(ps, ps->p, "invalid UTF-8 in string");
            return false;
        }
        memcpy(w, ps->p, n);
        w += n;
        ps->p += n;
    }
    *w++ = '\0';
    *out = dst;
    *out_len = (uint32_t)(w - dst - 1);
    ps->strings_len += (size_t)(w - dst);
    return true;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static bool parse_number(parser *ps, kaizen_json *node) {
    const char *s = ps->p;
    if (ps->p < ps->end && *ps->p == '-') ps->p++;
    if (ps->p >= ps->end || !is_digit(*ps->p)) {
        fail_at(ps, s, "invalid number");
        return false;
    }
    if (*ps->p == '0') {
        ps->p++;
        if (ps->p < ps->end && is_digit(*ps->p)) {
            fail_at(ps, s, "invalid number (leading zero)");
            return false;
        }
    } else {
        while (ps->p < ps->end && is_digit(*ps->p)) ps->p++;
    }
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (ps->p >= ps->end || !is_digit(*ps->p)) {
            fail_at(ps, s, "invalid number (digits must follow '.')");
            return false;
        }
        while (ps->p < ps->end && is_digit(*ps->p)) ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-')) ps->p++;
        if (ps->p >= ps->end || !is_digit(*ps->p)) {
            fail_at(ps, s, "invalid number (digits must follow the exponent)");
            return false;
        }
        while (ps->p < ps->end && is_digit(*ps->p)) ps->p++;
    }
    /* The source copy is NUL-terminated and the grammar was checked, so
     * strtod reads exactly this lexeme. */
    if (isinf(strtod(s, NULL))) {
        fail_at(ps, s, "number out of range");
        return false;
    }
    node->type = KAIZEN_JSON_NUMBER;
    node->u.text = s;
    node->len = (uint32_t)(ps->p - s);
    return true;
}

static bool literal(parser *ps, const char *word, size_t n) {
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0) {
        fail_at(ps, ps->p, "expected a JSON value");
        return false;
    }
    ps->p += n;
    return true;
}

static bool parse_value(parser *ps);

/* Moves the open container's children (the stack above index `at`) to the
 * node array and records where they went. */
static bool close_container(parser *ps, size_t at) {
    size_t count = ps->stack_len - at - 1;
    if (!grow(ps, &ps->nodes, &ps->nodes_cap, ps->nodes_len + count)) return false;
    if (count) memcpy(ps->nodes + ps->nodes_len, ps->stack + at + 1, count * sizeof(kaizen_json));
    ps->stack[at].u.first = ps->nodes_len;
    ps->stack[at].len = (uint32_t)count;
    ps->nodes_len += count;
    ps->stack_len = at + 1;
    return true;
}

static bool parse_container(parser *ps, bool object) {
    const char *open = ps->p++;
    if (++ps->depth > KAIZEN_JSON_MAX_DEPTH) {
        fail_at(ps, open, "JSON nested too deeply");
        return false;
    }
    size_t at = ps->stack_len - 1;
    ps->stack[at].type = object ? KAIZEN_JSON_OBJECT : KAIZEN_JSON_ARRAY;
    char close = object ? '}' : ']';
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
    } else {
        for (;;) {
            const char *key = NULL;
            uint32_t key_len = 0;
            if (object) {
                skip_ws(ps);
                if (ps->p >= ps->end || *ps->p != '"') {
                    fail_at(ps, ps->p, ps->p >= ps->end ? "unexpected end of input, expected an object key"
                                                        : "expected a string key");
                    return false;
                }
                if (!parse_string(ps, &key, &key_len)) return false;
                skip_ws(ps);
                if (ps->p >= ps->end || *ps->p != ':') {
                    fail_at(ps, ps->p, "expected ':' after an object key");
                    return false;
                }
                ps->p++;
            }
            size_t child = ps->stack_len;
            if (!parse_value(ps)) return false;
            ps->stack[child].key = key;
            ps->stack[child].key_len = key_len;
            skip_ws(ps);
            if (ps->p >= ps->end) {
                fail_at(ps, ps->p, object ? "unexpected end of input, expected ',' or '}'"
                                          : "unexpected end of input, expected ',' or ']'");
                return false;
            }
            if (*ps->p == ',') {
                ps->p++;
                continue;
            }
            if (*ps->p == close) {
                ps->p++;
                break;
            }
            fail_at(ps, ps->p, object ? "expected ',' or '}' after an object member"
                                      : "expected ',' or ']' after an array element");
            return false;
        }
    }
    ps->depth--;
    if (ps->stack_len - at - 1 > UINT32_MAX) {
        fail_at(ps, open, "too many elements");
        return false;
    }
    return close_container(ps, at);
}

static bool parse_value(parser *ps) {
    skip_ws(ps);
    kaizen_json *node = push(ps);
    if (!node) return false;
    if (ps->p >= ps->end) {
        fail_at(ps, ps->p, "unexpected end of input, expected a JSON value");
        return false;
    }
    switch (*ps->p) {
    case '{': return parse_container(ps, true);
    case '[': return parse_container(ps, false);
    case '"': {
        const char *text;
        uint32_t len;
        if (!parse_string(ps, &text, &len)) return false;
        /* `node` may have moved while the stack grew; strings do not grow it. */
        node->type = KAIZEN_JSON_STRING;
        node->u.text = text;
        node->len = len;
        return true;
    }
    case 't':
        node->type = KAIZEN_JSON_BOOL;
        node->boolean = true;
        return literal(ps, "true", 4);
    case 'f':
        node->type = KAIZEN_JSON_BOOL;
        return literal(ps, "false", 5);
    case 'n':
        node->type = KAIZEN_JSON_NULL;
        return literal(ps, "null", 4);
    default:
        if (*ps->p == '-' || is_digit(*ps->p)) return parse_number(ps, node);
        fail_at(ps, ps->p, "expected a JSON value");
        return false;
    }
}

kaizen_json_doc *kaizen_json_parse(const char *text, size_t len, char *err, size_t err_size) {
    if (err && err_size) err[0] = '\0';
    parser ps;
    memset(&ps, 0, sizeof ps);
    ps.err = err;
    ps.err_size = err_size;
    /* Lengths and counts are kept in 32 bits. */
    if (len >= UINT32_MAX / 2) {
        if (err && err_size) snprintf(err, err_size, "JSON text too large (%zu bytes)", len);
        return NULL;
    }
    kaizen_json_doc *doc = calloc(1, sizeof *doc);
    if (doc) doc->source = malloc(len + 1);
    if (doc && doc->source) doc->strings = malloc(len + 1);
    if (!doc || !doc->source || !doc->strings) {
        fail_oom(&ps);
        goto fail;
    }
    if (len) memcpy(doc->source, text, len);
    doc->source[len] = '\0';
    ps.start = ps.p = doc->source;
    ps.end = doc->source + len;
    ps.strings = doc->strings;

    if (!parse_value(&ps)) goto fail;
    skip_ws(&ps);
    if (ps.p != ps.end) {
        fail_at(&ps, ps.p, "trailing characters after the JSON value");
        goto fail;
    }
    /* The root goes last; then indices become pointers. */
    if (!grow(&ps, &ps.nodes, &ps.nodes_cap, ps.nodes_len + 1)) goto fail;
    ps.nodes[ps.nodes_len++] = ps.stack[0];
    for (size_t i = 0; i < ps.nodes_len; i++) {
        kaizen_json *node = &ps.nodes[i];
        if (node->type == KAIZEN_JSON_ARRAY || node->type == KAIZEN_JSON_OBJECT) {
            node->u.children = ps.nodes + node->u.first;
        }
    }
    free(ps.stack);
    doc->nodes = ps.nodes;
    doc->node_count = ps.nodes_len;
    doc->root = &ps.nodes[ps.nodes_len - 1];
    return doc;

fail:
    free(ps.stack);
    free(ps.nodes);
    if (doc) {
        free(doc->source);
        free(doc->strings);
        free(doc);
    }
    return NULL;
}

void kaizen_json_free(kaizen_json_doc *doc) {
    if (!doc) return;
    free(doc->source);
    free(doc->strings);
    free(doc->nodes);
    free(doc);
}

const kaizen_json *kaizen_json_root(const kaizen_json_doc *doc) { return doc ? doc->root : NULL; }

kaizen_json_type kaizen_json_type_of(const kaizen_json *value) {
    return value ? (kaizen_json_type)value->type : KAIZEN_JSON_NULL;
}

const char *kaizen_json_type_name(kaizen_json_type type) {
    switch (type) {
    case KAIZEN_JSON_NULL: return "null";
    case KAIZEN_JSON_BOOL: return "boolean";
    case KAIZEN_JSON_NUMBER: return "number";
    case KAIZEN_JSON_STRING: return "string";
    case KAIZEN_JSON_ARRAY: return "array";
    case KAIZEN_JSON_OBJECT: return "object";
    }
    return "unknown";
}

const kaizen_json *kaizen_json_get(const kaizen_json *object, const char *key) {
    if (!object || object->type != KAIZEN_JSON_OBJECT || !key) return NULL;
    size_t key_len = strlen(key);
    for (size_t i = object->len; i-- > 0;) {
        const kaizen_json *member = &object->u.children[i];
        if (member->key_len == key_len && memcmp(member->key, key, key_len) == 0) return member;
    }
    return NULL;
}

size_t kaizen_json_count(const kaizen_json *value) {
    if (!value || (value->type != KAIZEN_JSON_ARRAY && value->type != KAIZEN_JSON_OBJECT)) return 0;
    return value->len;
}

const kaizen_json *kaizen_json_at(const kaizen_json *value, size_t index) {
    if (index >= kaizen_json_count(value)) return NULL;
    return &value->u.children[index];
}

const char *kaizen_json_key_at(const kaizen_json *object, size_t index, size_t *len) {
    if (!object || object->type != KAIZEN_JSON_OBJECT || index >= object->len) return NULL;
    const kaizen_json *member = &object->u.children[index];
    if (len) *len = member->key_len;
    return member->key;
}

const char *kaizen_json_string(const kaizen_json *value, size_t *len) {
    if (!value || value->type != KAIZEN_JSON_STRING) return NULL;
    if (len) *len = value->len;
    return value->u.text;
}

double kaizen_json_number(const kaizen_json *value) {
    if (!value || value->type != KAIZEN_JSON_NUMBER) return 0;
    return strtod(value->u.text, NULL);
}

bool kaizen_json_int(const kaizen_json *value, int64_t *out) {
    if (!value || value->type != KAIZEN_JSON_NUMBER) return false;
    const char *s = value->u.text;
    size_t n = value->len;
    bool plain = true;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '.' || s[i] == 'e' || s[i] == 'E') plain = false;
    }
    if (plain) {
        /* Exact: a double would lose digits past 2^53. */
        bool negative = s[0] == '-';
        uint64_t limit = negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        uint64_t v = 0;
        for (size_t i = negative; i < n; i++) {
            unsigned d = (unsigned)(s[i] - '0');
            if (v > (limit - d) / 10) return false;
            v = v * 10 + d;
        }
        *out = negative ? (int64_t)(0 - v) : (int64_t)v;
        return true;
    }
    double d = strtod(s, NULL);
    /* From 2^53 on, a double no longer tells neighbouring integers apart. */
    if (d != floor(d) || fabs(d) >= 9007199254740992.0) return false;
    *out = (int64_t)d;
    return true;
}

bool kaizen_json_bool(const kaizen_json *value) {
    return value && value->type == KAIZEN_JSON_BOOL && value->boolean;
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                    */
/* ------------------------------------------------------------------------ */

/* Per-level state bits. */
enum {
    JW_OBJECT = 1,   /* the level is an object (else an array, or the top) */
    JW_HAS_ITEM = 2, /* a comma goes before the next item */
    JW_HAS_KEY = 4,  /* a key was written; its value is due */
};

static void jw_stop(kaizen_jw *w, const char *why) {
    if (!w->error) w->error = why;
}

bool kaizen__json_escape(kaizen_buf *buf, const char *text, size_t len) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)text;
    kaizen_buf_append(buf, "\"", 1);
    size_t i = 0, run = 0;
    while (i < len) {
        unsigned char c = s[i];
        const char *esc = NULL;
        char u[6];
        size_t n = 1;
        if (c == '"') esc = "\\\"";
        else if (c == '\\') esc = "\\\\";
        else if (c == '\n') esc = "\\n";
        else if (c == '\r') esc = "\\r";
        else if (c == '\t') esc = "\\t";
        else if (c == '\b') esc = "\\b";
        else if (c == '\f') esc = "\\f";
        else if (c < 0x20) {
            u[0] = '\\', u[1] = 'u', u[2] = '0', u[3] = '0', u[4] = hex[c >> 4], u[5] = hex[c & 15];
        } else if (c >= 0x80) {
            n = kaizen__utf8_seq(s + i, len - i);
        }
        if (!esc && (c >= 0x20 || c == 0x7F) && n) {
            /* Plain bytes are copied in runs. */
            i += n;
            run += n;
            continue;
        }
        kaizen_buf_append(buf, s + i - run, run);
        run = 0;
        if (esc) kaizen_buf_append(buf, esc, 2);
        else if (n == 0) kaizen_buf_append(buf, "\xEF\xBF\xBD", 3); /* invalid UTF-8 */
        else kaizen_buf_append(buf, u, 6);
        i++;
    }
    kaizen_buf_append(buf, s + i - run, run);
    return kaizen_buf_append(buf, "\"", 1);
}

/* Writes what goes before a value (or a key) and checks it is allowed. */
static bool jw_before(kaizen_jw *w, bool is_key) {
    if (w->error) return false;
    unsigned char *st = &w->state[w->depth];
    if (w->depth == 0) {
        if (is_key) {
            jw_stop(w, "a key outside an object");
            return false;
        }
        if (*st & JW_HAS_ITEM) {
            jw_stop(w, "a second value after the top-level value");
            return false;
        }
        *st |= JW_HAS_ITEM;
        return true;
    }
    if (*st & JW_OBJECT) {
        if (is_key) {
            if (*st & JW_HAS_KEY) {
                jw_stop(w, "a key where the previous key's value is due");
                return false;
            }
            if (*st & JW_HAS_ITEM) kaizen_buf_append(&w->buf, ",", 1);
            *st |= JW_HAS_KEY | JW_HAS_ITEM;
            return true;
        }
        if (!(*st & JW_HAS_KEY)) {
            jw_stop(w, "a value in an object without a key");
            return false;
        }
        *st &= (unsigned char)~JW_HAS_KEY;
        return true;
    }
    if (is_key) {
        jw_stop(w, "a key inside an array");
        return false;
    }
    if (*st & JW_HAS_ITEM) kaizen_buf_append(&w->buf, ",", 1);
    *st |= JW_HAS_ITEM;
    return true;
}

static void jw_open(kaizen_jw *w, bool object) {
    if (!jw_before(w, false)) return;
    if (w->depth >= KAIZEN_JW_MAX_DEPTH) {
        jw_stop(w, "nested too deeply");
        return;
    }
    w->state[++w->depth] = object ? JW_OBJECT : 0;
    kaizen_buf_append(&w->buf, object ? "{" : "[", 1);
}

static void jw_close(kaizen_jw *w, bool object) {
    if (w->error) return;
    if (w->depth == 0 || !!(w->state[w->depth] & JW_OBJECT) != object) {
        jw_stop(w, object ? "an object end without its begin" : "an array end without its begin");
        return;
    }
    if (w->state[w->depth] & JW_HAS_KEY) {
        jw_stop(w, "an object ends after a key without its value");
        return;
    }
    w->depth--;
    kaizen_buf_append(&w->buf, object ? "}" : "]", 1);
}

void kaizen_jw_object_begin(kaizen_jw *w) { jw_open(w, true); }
void kaizen_jw_object_end(kaizen_jw *w) { jw_close(w, true); }
void kaizen_jw_array_begin(kaizen_jw *w) { jw_open(w, false); }
void kaizen_jw_array_end(kaizen_jw *w) { jw_close(w, false); }

void kaizen_jw_key(kaizen_jw *w, const char *key) {
    if (!key) {
        jw_stop(w, "a NULL key");
        return;
    }
    if (!jw_before(w, true)) return;
    kaizen__json_escape(&w->buf, key, strlen(key));
    kaizen_buf_append(&w->buf, ":", 1);
}

void kaizen_jw_string_n(kaizen_jw *w, const char *value, size_t len) {
    if (!value && len) {
        jw_stop(w, "a NULL string");
        return;
    }
    if (!jw_before(w, false)) return;
    kaizen__json_escape(&w->buf, value ? value : "", len);
}

void kaizen_jw_string(kaizen_jw *w, const char *value) {
    if (!value) {
        jw_stop(w, "a NULL string");
        return;
    }
    kaizen_jw_string_n(w, value, strlen(value));
}

void kaizen__format_double(char out[32], double value) {
    /* The fewest digits that read back as the same double. */
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(out, 32, "%.*g", precision, value);
        if (strtod(out, NULL) == value) return;
    }
}

void kaizen_jw_number(kaizen_jw *w, double value) {
    if (isnan(value) || isinf(value)) {
        jw_stop(w, "a NaN or infinite number (JSON has none)");
        return;
    }
    if (!jw_before(w, false)) return;
    char text[32];
    kaizen__format_double(text, value);
    kaizen_buf_puts(&w->buf, text);
}

void kaizen_jw_int(kaizen_jw *w, int64_t value) {
    if (!jw_before(w, false)) return;
    kaizen_buf_printf(&w->buf, "%lld", (long long)value);
}

void kaizen_jw_bool(kaizen_jw *w, bool value) {
    if (!jw_before(w, false)) return;
    kaizen_buf_puts(&w->buf, value ? "true" : "false");
}

void kaizen_jw_null(kaizen_jw *w) {
    if (!jw_before(w, false)) return;
    kaizen_buf_puts(&w->buf, "null");
}

void kaizen_jw_raw(kaizen_jw *w, const char *json, size_t len) {
    if (w->error) return;
    kaizen_json_doc *doc = json ? kaizen_json_parse(json, len, NULL, 0) : NULL;
    if (!doc) {
        jw_stop(w, "raw text that is not one JSON value");
        return;
    }
    kaizen_json_free(doc);
    if (!jw_before(w, false)) return;
    kaizen_buf_append(&w->buf, json, len);
}

void kaizen_jw_key_string(kaizen_jw *w, const char *key, const char *value) {
    kaizen_jw_key(w, key);
    kaizen_jw_string(w, value);
}

void kaizen_jw_key_number(kaizen_jw *w, const char *key, double value) {
    kaizen_jw_key(w, key);
    kaizen_jw_number(w, value);
}

void kaizen_jw_key_int(kaizen_jw *w, const char *key, int64_t value) {
    kaizen_jw_key(w, key);
    kaizen_jw_int(w, value);
}

void kaizen_jw_key_bool(kaizen_jw *w, const char *key, bool value) {
    kaizen_jw_key(w, key);
    kaizen_jw_bool(w, value);
}

const char *kaizen_jw_error(const kaizen_jw *w) {
    if (w->error) return w->error;
    if (w->buf.oom) return "out of memory";
    if (w->depth > 0) return "an array or object was left open";
    if (!(w->state[0] & JW_HAS_ITEM)) return "no value was written";
    return NULL;
}

const char *kaizen_jw_finish(kaizen_jw *w, size_t *len) {
    if (kaizen_jw_error(w)) return NULL;
    if (len) *len = w->buf.len;
    return w->buf.data;
}

void kaizen_jw_free(kaizen_jw *w) {
    kaizen_buf_free(&w->buf);
    w->error = NULL;
    w->depth = 0;
    memset(w->state, 0, sizeof w->state);
}
