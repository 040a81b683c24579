#include "render/wrap.h"

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
        /* the last space at or before the room's edge, past the first word */
        size_t brk = 0, first_word_end = 0;
        int col = 0;
        size_t i = 0;
        while (i < len && s[i] == ' ')
            i++;
        col = (int)i;
        for (; i < len; i++) {
            if (!is_cont((unsigned char)s[i]))
                col++;
            if (s[i] == ' ') {
                if (!first_word_end)
                    first_word_end = i;
                if (col - 1 <= room)
                    brk = i;
                else
                    break;
            }
        }
        if (!brk)
            brk = first_word_end; /* one word wider than the room */
        if (!brk) {
            fwrite(s, 1, len, f);
            break;
        }
        size_t end = brk;
        while (end > 0 && s[end - 1] == ' ')
            end--;
        fwrite(s, 1, end, f);
        fprintf(f, "\n%*s", hang, "");
        lead = hang;
        while (brk < len && s[brk] == ' ')
            brk++;
        s += brk;
        len -= brk;
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
