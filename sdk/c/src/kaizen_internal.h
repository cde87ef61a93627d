/* kaizen_internal.h: helpers shared by the kit's sources; not for plugins. */
#ifndef KAIZEN_INTERNAL_H
#define KAIZEN_INTERNAL_H

#include "kaizen.h"

/* The length of the valid UTF-8 sequence at `s` (at most `n` bytes), or 0
 * when it is not one. */
size_t kaizen__utf8_seq(const unsigned char *s, size_t n);
/* Appends `text`, replacing each invalid UTF-8 byte with U+FFFD. */
bool kaizen__utf8_lossy(kaizen_buf *buf, const char *text, size_t len);
/* Appends `text` as a quoted, escaped JSON string (invalid UTF-8 becomes
 * U+FFFD). */
bool kaizen__json_escape(kaizen_buf *buf, const char *text, size_t len);
/* The shortest text that reads back as `value` (finite). */
void kaizen__format_double(char out[32], double value);

#endif
