/* Plain ASCII for a terminal that cannot show UTF-8: the one place that
 * decides when (the locale's character set) and how (the few symbols
 * gpuqual prints, each mapped to ASCII that reads the same).
 *
 * Under LC_ALL=C, LANG=C or any locale whose codeset is not UTF-8, the text
 * gpuqual writes for a person on stdout and stderr (tables, summaries, help,
 * progress, warnings, errors) is 7-bit: "→" becomes "->", "°C" "degC", "µs"
 * "us", "×" "x", "–" and "—" "-", "…" "..."; any other non-ASCII character
 * "?". Files (card.md, card.html, JSON, CSV) stay UTF-8 whatever the locale:
 * the CLI applies this only to its human-readable streams (cli/outwrap.h). */
#ifndef GQ_CORE_ASCII_H
#define GQ_CORE_ASCII_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the environment's locale (LC_ALL, LC_CTYPE, LANG, as setlocale
 * would read them) has a character set other than UTF-8. Read once, without
 * changing the program's own locale. */
bool gq_ascii_locale(void);

/* For tests: force the answer (1 ASCII, 0 UTF-8), or -1 to read the
 * environment again on the next call. */
void gq_ascii_force(int on);

/* The ASCII for the UTF-8 sequence at s (n bytes available, s[0] >= 0x80):
 * returns the replacement and sets *used to the bytes it stands for (1..4);
 * *used = 0 when s holds only the start of a sequence (more bytes needed). */
const char *gq_ascii_of(const char *s, size_t n, size_t *used);

/* s (n bytes) in ASCII into out (cap bytes, NUL-terminated); returns the
 * length the whole text needs (as snprintf). A sequence cut at the end of s
 * is written as "?". */
size_t gq_ascii_text(const char *s, size_t n, char *out, size_t cap);

#endif
