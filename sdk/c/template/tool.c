/* {{name}}: a Kaizen tool plugin in C (see README.md to build and test). */
#include <errno.h>
#include <stdio.h>
#include "kaizen.h"

static void {{snake_name}}(kaizen_call *call) {
    const char *path;
    if (!kaizen_arg_string(call, "path", &path)) return; /* the error is set */
    kaizen_buf full = KAIZEN_BUF_INIT; /* relative paths start at the session's cwd */
    if (path[0] != '/') kaizen_buf_printf(&full, "%s/", kaizen_ctx(call)->cwd);
    kaizen_buf_puts(&full, path);
    FILE *f = full.oom ? NULL : fopen(full.data, "rb");
    if (!f) kaizen_fail_errno(call, full.oom ? ENOMEM : errno, path); /* ENOENT: not-found */
    kaizen_buf_free(&full);
    if (!f) return;
    long long lines = 0, words = 0, bytes = 0;
    for (int c, in_word = 0; (c = getc(f)) != EOF; bytes++) {
        int space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
        lines += c == '\n';
        words += !space && !in_word;
        in_word = !space;
    }
    if (ferror(f)) kaizen_fail_errno(call, errno, path); /* e.g. a directory */
    fclose(f);
    kaizen_textf(call, "%s: %lld lines, %lld words, %lld bytes", path, lines, words, bytes);
    kaizen_jw *meta = kaizen_metadata(call); /* for programs; the model sees the text */
    kaizen_jw_object_begin(meta);
    kaizen_jw_key_int(meta, "lines", lines);
    kaizen_jw_key_int(meta, "words", words);
    kaizen_jw_key_int(meta, "bytes", bytes);
    kaizen_jw_object_end(meta);
}

KAIZEN_TOOLS({
    .name = "{{camel_name}}",
    .description = "Counts the lines, words and bytes of a text file, like `wc`.",
    .input_schema = "{\"type\":\"object\",\"required\":[\"path\"],\"properties\":{\"path\":"
                    "{\"type\":\"string\",\"description\":\"The file, absolute or relative to the cwd.\"}}}",
    .read_only = true, .danger = KAIZEN_SAFE, .call = {{snake_name}},
});
