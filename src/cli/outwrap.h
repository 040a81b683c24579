/* Standard output wrapped to a width for the human-readable formats: each
 * line wider than the width is broken at spaces (render/wrap.h), keeping
 * its hanging indent; narrower lines pass unchanged, so scripts reading
 * table output see the same text except for the wrapping. The frame turns
 * it on for `--format table`, report's summary and commands without
 * --format; never for JSON, CSV, Markdown, HTML, Prometheus or nvbandwidth's
 * formats, nor when an argument "-" (--json -, -o -, --csv -) puts a
 * file's bytes on stdout. */
#ifndef GQ_CLI_OUTWRAP_H
#define GQ_CLI_OUTWRAP_H

#include <stdbool.h>

/* Whether a command's output in this format is wrapped. */
bool gq_outwrap_format(const char *format);
/* Replace stdout by the wrapping stream (glibc lets a program assign
 * stdout). Returns false, leaving stdout as it is, when it cannot. */
bool gq_outwrap_begin(int width);
/* Write what is pending and restore stdout. Does nothing when off. */
void gq_outwrap_end(void);

/* Under a locale without UTF-8 (core/ascii.h), the wrapping stream also
 * writes each line in ASCII, and gq_outwrap_plain_stderr() replaces stderr
 * by a stream that does the same (errors, warnings, progress); main() calls
 * it once. Returns whether it did. Machine formats (JSON, CSV, Prometheus,
 * nvbandwidth's), Markdown and the files keep their UTF-8. */
bool gq_outwrap_plain_stderr(void);

/* The errno of the first failed write to the real stdout under the wrapping
 * stream (0 when none), so that the error line can say why. */
int gq_outwrap_errno(void);

#endif
