/* Renderers of the acceptance card (docs/json-card.md, docs/card.md).
 *
 * Every renderer reads a saved document only: the root object that
 * gq_doc_to_json() builds, with the "card" section composed by
 * gq_card_compose. The card's verdict, table and findings are printed
 * from the typed card (gq_card, read with gq_card_from_json); the figures
 * from the document's sections. So `gpuqual card` and `gpuqual report card.json` give the
 * same output for the same run. Nothing here measures or judges: the rows,
 * verdicts and findings are already in the document.
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
 * All return GQ_OK, or GQ_E_USAGE when root has no usable "card" section
 * (message says what is missing). They write through FILE *f; the caller
 * owns atomic file handling (gq_outfile_*).
 */
#ifndef GQ_RENDER_CARD_RENDER_H
#define GQ_RENDER_CARD_RENDER_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>

#include "analysis/card.h"
#include "doc/card_codec.h"
#include "core/status.h"

int gq_card_render_markdown(FILE *f, const json_t *root, gq_err *err);
int gq_card_render_html(FILE *f, const json_t *root, gq_err *err);
/* width: terminal columns (<= 0: 100). */
int gq_card_render_summary(FILE *f, const json_t *root, int width, gq_err *err);

/* ---- helpers shared by the card renderers (render/card_util.c) ---------- */

/* The card section of root, or NULL (err says why). */
const json_t *gq_cj_card(const json_t *root, gq_err *err);
/* Number at key, NAN when missing, null or not a number. */
double gq_cj_num(const json_t *o, const char *key);
/* String at key, or def. */
const char *gq_cj_str(const json_t *o, const char *key, const char *def);
/* Array of numbers (null -> NAN) into out (up to max); returns the count. */
int gq_cj_nums(const json_t *arr, double *out, int max);
/* Square matrix {gpus:[..], values:[[..]]} into labels ("GPU n") and vals
 * (n*n, row-major, NAN for null). Returns n (0 when malformed). vals must
 * hold max*max doubles; labels max entries of 16 bytes. */
int gq_cj_matrix(const json_t *m, int max, char (*labels)[16], double *vals);
/* The card's --set overrides in one line ("h2d_gbps.fail=50 (h2d_gbps_min
 * fail, was 48); ..."), "" when none. */
void gq_card_overrides_text(const gq_card *c, char *buf, size_t n);

#endif
