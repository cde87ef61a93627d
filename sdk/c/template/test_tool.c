/* Native tests of {{name}}'s tool: `kaizen plugins test` compiles this file
 * with tool.c and the kit's pure parts (no wasm needed) and runs it. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kaizen.h"

static int passed, failed;
#define CHECK(cond) ((cond) ? passed++ : (failed++, fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond)))

int main(void) {
    char err[256];
    CHECK(kaizen_check_tools(err, sizeof err)); /* names, schemas, callbacks */

    char path[] = "/tmp/{{snake_name}}_test_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, "one two\nthree\n", 14) == 14);
    close(fd);
    char input[128];
    snprintf(input, sizeof input, "{\"path\": \"%s\"}", path);
    kaizen_result r = kaizen_test_call("{{camel_name}}", input);
    char *text = kaizen_result_text(&r);
    CHECK(!r.failed && strstr(text, ": 2 lines, 3 words, 14 bytes"));
    CHECK(r.metadata && strcmp(r.metadata, "{\"lines\":2,\"words\":3,\"bytes\":14}") == 0);
    free(text);
    kaizen_result_free(&r);
    unlink(path);

    /* A missing file is a not-found error naming the path. */
    r = kaizen_test_call("{{camel_name}}", input);
    CHECK(r.failed && r.error_kind == KAIZEN_NOT_FOUND && strstr(r.error_message, path));
    kaizen_result_free(&r);

    /* Input the schema would refuse still gets a clear error here. */
    r = kaizen_test_call("{{camel_name}}", "{\"path\": 7}");
    CHECK(r.failed && r.error_kind == KAIZEN_INVALID_INPUT);
    CHECK(r.failed && strstr(r.error_message, "field `path` must be a string, got number"));
    kaizen_result_free(&r);

    printf("{{snake_name}}: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
