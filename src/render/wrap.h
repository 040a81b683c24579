/* Text wrapped to a width in columns, at spaces only: a number or a word is
 * never cut. Columns are UTF-8 code points (what a terminal shows for the
 * text gpuqual prints). */
#ifndef GQ_RENDER_WRAP_H
#define GQ_RENDER_WRAP_H

#include <stddef.h>
#include <stdio.h>

/* The columns of s[0..len): its UTF-8 code points. */
int gq_text_cols(const char *s, size_t len);

/* Writes s[0..len) (one line, without its newline) and a newline to f,
 * broken at spaces so that no line is wider than width columns;
 * continuation lines start with hang spaces. A word wider than the room
 * stays whole on a line of its own (the only way a line can overflow). */
void gq_wrap_line(FILE *f, const char *s, size_t len, int width, int hang);

/* The hanging indent that keeps a line's layout when it wraps: the column
 * where its second field starts (after two or more spaces), as in
 * "NAME    DESCRIPTION" lists, when that is left of the middle; else the
 * line's own indent plus 2 (a list item "- " or "  * " hangs under its text). */
int gq_wrap_hang(const char *s, size_t len, int width);

#endif
