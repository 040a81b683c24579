/* Renderers of the acceptance card (docs/json-card.md, docs/card.md).
 *
 * Every renderer reads a saved card document typed: gq_card_doc
 * (doc/card_figs.h), decoded once from the root object that
 * gq_doc_to_json() builds, with the "card" section composed by
 * gq_card_compose, by gq_card_doc_from_json. The card's verdict, table and
 * findings are printed from the typed card in it (gq_card); the figures from
 * the typed sections beside it. So `gpuqual card` and `gpuqual report
 * card.json` give the same output for the same run. Nothing here reads JSON,
 * measures or judges: the rows, verdicts and findings are already in the
 * document.
 *
 *  - Markdown: seed 001 §9's table (check, what was measured, result, verdict, decision
 *    it supports), the findings in plain sentences, every check, then the
 *    figures as tables.
 *  - HTML: ONE self-contained file (inline CSS and SVG, no script, no
 *    network, no external file) with the same content and the figures drawn:
 *    P2P heatmaps (seed 001 fig. 1), concurrent pairs within against across
 *    (fig. 2), per-GPU host bandwidth alone against all active (fig. 3),
 *    sweep curves, and stress time series. Each figure is an
 *    <svg class="gq-fig" data-figure="ID">; the ids present are listed in
 *    <body data-figures="ID ID ...">, so a browser test can check them.
 *  - Summary: one screen of text for the terminal.
 *
 * Markdown and HTML return GQ_OK or what stopped them (GQ_E_IO: a write
 * error; the HTML page also GQ_E_NOMEM, out of memory for its figures); the
 * summary GQ_OK. A document with no usable "card" section is refused before,
 * by the decoder (GQ_E_USAGE, the line saying what is missing). They write
 * through FILE *f; the caller owns atomic file handling (gq_outfile_*).
 */
#ifndef GQ_RENDER_CARD_RENDER_H
#define GQ_RENDER_CARD_RENDER_H

#include <stddef.h>
#include <stdio.h>

#include "analysis/card.h"
#include "doc/card_figs.h"
#include "core/status.h"

int gq_card_render_markdown(FILE *f, const gq_card_doc *d, gq_err *err);
int gq_card_render_html(FILE *f, const gq_card_doc *d, gq_err *err);
/* width: terminal columns (<= 0: 100). */
int gq_card_render_summary(FILE *f, const gq_card_doc *d, int width, gq_err *err);

/* ---- helpers shared by the card renderers (render/card_util.c) ---------- */

/* s, or def where the document had no such string (NULL). */
static inline const char *gq_cf_or(const char *s, const char *def)
{
    return s ? s : def;
}
/* The labels of m's rows and columns, "GPU n" (at most 15 bytes), m->n of them. */
void gq_card_matrix_labels(const gq_cf_matrix *m, char (*labels)[16]);
/* The card's --set overrides in one line ("h2d_gbps.fail=50 (h2d_gbps_min
 * fail, was 48); ..."), "" when none. */
void gq_card_overrides_text(const gq_card *c, char *buf, size_t n);

#endif
