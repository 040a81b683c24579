/* Helpers shared by the card renderers (render/card_render.h). */
#include <stdio.h>
#include <string.h>

#include "render/card_render.h"

void gq_card_matrix_labels(const gq_cf_matrix *m, char (*labels)[16])
{
    for (int i = 0; i < m->n; i++)
        snprintf(labels[i], 16, "GPU %lld", m->label[i]);
}

void gq_card_overrides_text(const gq_card *c, char *buf, size_t n)
{
    size_t used = 0;
    if (n)
        buf[0] = 0;
    for (int i = 0; i < c->noverrides && used < n; i++) {
        const gq_expect_override *o = &c->overrides[i];
        used += (size_t)snprintf(buf + used, n - used, "%s%s (%s %s, was %s)", i ? "; " : "", o->spec, o->key,
                                 o->level, o->was[0] ? o->was : "unset");
    }
}
