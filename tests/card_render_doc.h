/* The card renderers on a saved document's root, as `gpuqual report` runs
 * them: decoded once (gq_card_doc_from_json, doc/card_figs.h), rendered,
 * freed. For the tests and fuzzers that hold the document as JSON. */
#ifndef GQ_TESTS_CARD_RENDER_DOC_H
#define GQ_TESTS_CARD_RENDER_DOC_H

#include <stdio.h>

#include <jansson.h>

#include "doc/card_figs.h"
#include "render/card_render.h"

static inline int gq_test_render_markdown(FILE *f, const json_t *root, gq_err *err)
{
    gq_card_doc *d = NULL;
    int rc = gq_card_doc_from_json(root, &d, err);
    if (!rc)
        rc = gq_card_render_markdown(f, d, err);
    gq_card_doc_free(d);
    return rc;
}

static inline int gq_test_render_html(FILE *f, const json_t *root, gq_err *err)
{
    gq_card_doc *d = NULL;
    int rc = gq_card_doc_from_json(root, &d, err);
    if (!rc)
        rc = gq_card_render_html(f, d, err);
    gq_card_doc_free(d);
    return rc;
}

static inline int gq_test_render_summary(FILE *f, const json_t *root, int width, gq_err *err)
{
    gq_card_doc *d = NULL;
    int rc = gq_card_doc_from_json(root, &d, err);
    if (!rc)
        rc = gq_card_render_summary(f, d, width, err);
    gq_card_doc_free(d);
    return rc;
}

#endif
