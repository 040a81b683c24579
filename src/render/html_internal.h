/* Internal to the card's HTML renderer (html.c, html_figs.c): the figures,
 * drawn as inline SVG into a memory stream before the page is written, so
 * the page's <body data-figures> can list them. Not for use outside
 * src/render/html*.c. */
#ifndef GQ_RENDER_HTML_INTERNAL_H
#define GQ_RENDER_HTML_INTERNAL_H

#include <stdio.h>

#include "core/status.h"
#include "doc/card_figs.h"

typedef struct figs {
    FILE *f;        /* memstream the figures go to */
    char ids[1024]; /* space-separated ids, for <body data-figures> */
    int n;
    gq_err err;
} figs;

/* Every figure of the card document d into F: the matrices, the concurrent
 * pairs, the host bandwidth, the sweeps, the P2P latency and the stress run's
 * series. A figure that cannot be drawn sets F->err. */
void gq_html_figures(figs *F, const gq_card_doc *d);

#endif
