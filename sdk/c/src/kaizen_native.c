/* kaizen_native.c: the log sink for native builds (tests): stderr instead
 * of the host's `log` import. Link it instead of kaizen_wasm.c. */
#include "kaizen.h"

#include <stdio.h>

void kaizen_log_write(kaizen_log_level level, const char *message, size_t len) {
    static const char *const names[] = {"TRACE", "DEBUG", "INFO", "WARN", "ERROR"};
    const char *name = (unsigned)level < sizeof names / sizeof names[0] ? names[level] : "LOG";
    fprintf(stderr, "[%s] %.*s\n", name, (int)(len > 0x7fffffff ? 0x7fffffff : len), message);
}
