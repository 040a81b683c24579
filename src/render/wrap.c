#include "render/wrap.h"

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

static int is_cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

int gq_text_cols(const char *s, size_t len)
{
    int n = 0;
    for (size_t i = 0; i < len; i++)
        n += !is_cont((unsigned char)s[i]);
    return n;
}

/* A comma inside a number: a digit before it and exactly three after
 * ("1,024"), unlike a list of pairs ("0:1,2:3"). */
static bool in_number(const char *s, size_t len, size_t i)
{
    if (i == 0 || !isdigit((unsigned char)s[i - 1]))
        return false;
    size_t d = 0;
    while (i + 1 + d < len && isdigit((unsigned char)s[i + 1 + d]))
        d++;
    return d == 3;
}

/* Where s may break at i: a space (the next line starts after it), or
 * after a comma in a list such as "[table,json,csv]" or "0:1,2:3" (never
 * in "1,024"). */
static bool breaks_at(const char *s, size_t len, size_t i)
{
    if (s[i] == ' ')
        return true;
    return s[i] == ',' && i + 1 < len && s[i + 1] != ' ' && !in_number(s, len, i);
}

void gq_wrap_line(FILE *f, const char *s, size_t len, int width, int hang)
{
    if (hang < 0 || hang > width / 2)
        hang = width / 2 > 0 ? width / 2 : 0;
    int lead = 0; /* columns before s on this output line */
    for (;;) {
        int room = width - lead;
        if (gq_text_cols(s, len) <= room) {
            fwrite(s, 1, len, f);
            break;
        }
        /* the last break at or before the room's edge; else the first one
         * (a word wider than the room stays whole) */
        size_t end = 0, next = 0, first_end = 0, first_next = 0;
        size_t i = 0;
        while (i < len && s[i] == ' ')
            i++;
        int col = (int)i;
        for (; i < len; i++) {
            if (!is_cont((unsigned char)s[i]))
                col++;
            if (!breaks_at(s, len, i))
                continue;
            /* a space is left out; a comma stays on this line */
            size_t e = s[i] == ' ' ? i : i + 1;
            int ecols = s[i] == ' ' ? col - 1 : col;
            if (!first_end) {
                first_end = e;
                first_next = i + 1;
            }
            if (ecols > room)
                break;
            end = e;
            next = i + 1;
        }
        if (!end) {
            end = first_end;
            next = first_next;
        }
        if (!end) {
            fwrite(s, 1, len, f);
            break;
        }
        while (end > 0 && s[end - 1] == ' ')
            end--;
        fwrite(s, 1, end, f);
        fprintf(f, "\n%*s", hang, "");
        lead = hang;
        while (next < len && s[next] == ' ')
            next++;
        s += next;
        len -= next;
    }
    fputc('\n', f);
}

int gq_wrap_hang(const char *s, size_t len, int width)
{
    size_t i = 0;
    while (i < len && s[i] == ' ')
        i++;
    int indent = (int)i;
    /* a list item: "- text" or "* text" */
    if (i + 1 < len && (s[i] == '-' || s[i] == '*') && s[i + 1] == ' ')
        return indent + 2;
    /* the second field: after the first run of two or more spaces */
    for (; i + 2 < len; i++) {
        if (s[i] != ' ' && s[i + 1] == ' ' && s[i + 2] == ' ') {
            size_t j = i + 1;
            while (j < len && s[j] == ' ')
                j++;
            int col = gq_text_cols(s, j);
            if (j < len && col <= width / 2)
                return col;
            break;
        }
    }
    return indent + 2;
}
