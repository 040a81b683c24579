#include "core/infile.h"
#include "cli/card_opts.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "doc/expect_load.h"
#include "render/analysis_render.h"
#include "doc/card_compose.h"
#include "doc/saved_doc.h"
#include "render/card_render.h"
#include "render/render.h"
#include "core/units.h"
#include "topo/topo.h"

#define OFF(f) offsetof(gq_card_cli, f)
/* clang-format off */
const gq_opt gq_card_cli_opts[] = {
    {.name = "level",
     .type = GQ_OPT_ENUM,
     .off = OFF(level),
     .def = "standard",
     .arg = "LEVEL",
     .help = "which steps: quick (identity, each GPU's host paths, the P2P read matrix, 30 s stress; "
             "1m budget), standard (every step, 60 s stress; 5m) or full (standard with both matrix "
             "directions and more sweeps, 5 min stress; 15m)",
     .choices = "quick,standard,full"},
    {.name = "budget",
     .type = GQ_OPT_DURATION,
     .off = OFF(budget_s),
     .arg = "TIME",
     .help = "time the whole card may take (default: the level's, raised for a machine whose steps need more, "
             "at most 4 times); quality is lowered to fit, and a step of the level that still does not fit "
             "makes the card INCOMPLETE",
     .lo = 0.001,
     .hi = 7 * 86400},
    {.name = "expect",
     .shortname = 'e',
     .type = GQ_OPT_STR,
     .off = OFF(expect),
     .arg = "FILE",
     .help = "expectations file with per-GPU-model thresholds (examples/expect/*.expect; at most " GQ_INFILE_TEXT_MAX_TEXT ")"},
    {.name = "set",
     .type = GQ_OPT_KV,
     .off = OFF(set),
     .arg = "[MODEL:]CHECK.LEVEL=VALUE",
     .help = GQ_CARD_SET_HELP},
    {.name = "stress",
     .type = GQ_OPT_DURATION,
     .off = OFF(stress_s),
     .arg = "TIME",
     .help = "length of the stress run with telemetry (default: the level's, 30s, 60s or 5m)",
     .lo = 0.1,
     .hi = 7 * 86400},
    {.name = "no-stress", .type = GQ_OPT_FLAG, .off = OFF(no_stress), .help = "skip the stress run (the verdict says so)"},
    {.name = "no-placement",
     .type = GQ_OPT_FLAG,
     .off = OFF(no_placement),
     .help = "skip the placement step (the verdict says so)"},
    {.name = "allow-busy",
     .type = GQ_OPT_FLAG,
     .off = OFF(allow_busy),
     .help = "judge the card even when other work ran on a GPU (its figures are still left out; the verdict "
             "names the busy GPU); without it such a card is INCOMPLETE"},
    {.name = "prefill",
     .type = GQ_OPT_INT,
     .off = OFF(prefill),
     .def = "0",
     .arg = "N",
     .help = "prefill workers for the placement (left out with --decode: half the GPUs each; --prefill 0 "
             "--decode 0 --offload 0 leaves every role out, which turns the placement off)",
     .lo = 0,
     .hi = GQ_MAX_GPUS,
     .seen_off = OFF(prefill_seen)},
    {.name = "decode",
     .type = GQ_OPT_INT,
     .off = OFF(decode),
     .def = "0",
     .arg = "M",
     .help = "decode workers for the placement",
     .lo = 0,
     .hi = GQ_MAX_GPUS,
     .seen_off = OFF(decode_seen)},
    {.name = "offload",
     .type = GQ_OPT_INT,
     .off = OFF(offload),
     .def = "-1",
     .arg = "K",
     .help = "KV offload workers for the placement (-1: half the GPUs)",
     .lo = -1,
     .hi = GQ_MAX_GPUS},
    GQ_OPT_END,
};
/* clang-format on */

const char *const gq_card_defaults[] = {"buffer-size=256", NULL};

const char *const gq_card_bounds[] = {"buffer-size=4096..1099511627776", NULL};

int gq_card_cli_expect(const char *path, const gq_optlist *set, gq_expect *ex, bool *have, gq_err *err)
{
    *have = path || set->n > 0;
    int rc = GQ_OK;
    if (path)
        rc = gq_expect_load(path, ex, err);
    else
        gq_expect_init(ex);
    for (int i = 0; !rc && i < set->n; i++)
        rc = gq_expect_set(ex, set->item[i], err);
    return rc;
}

int gq_card_cli_plan(const gq_card_cli *o, const gq_common *cm, const gq_topo *topo, gq_card_opts *co,
                     gq_card_plan *plan, gq_err *err)
{
    gq_card_opts_default(co);
    if (o->level && !gq_card_level_parse(o->level, &co->level))
        return gq_err_set(err, GQ_E_USAGE, "--level %s: expected quick, standard or full", o->level);
    co->stress_s = o->no_stress ? 0 : o->stress_s > 0 ? o->stress_s : gq_card_level_stress_s(co->level);
    co->no_placement = o->no_placement;
    /* Every role left out: nothing to place, as if the placement were turned off. */
    co->no_roles = o->prefill_seen && o->decode_seen && !o->prefill && !o->decode && o->offload == 0;
    co->no_placement |= co->no_roles;
    co->allow_busy = o->allow_busy;
    co->prefill = o->prefill;
    co->decode = o->decode;
    co->offload = o->offload;
    co->bytes = cm->buffer_size;
    co->verify = cm->verify;
    co->ngpus = cm->ngpus_sel;
    memcpy(co->gpus, cm->gpus_sel, sizeof co->gpus);
    if ((o->prefill > 0) != (o->decode > 0))
        return gq_err_set(err, GQ_E_USAGE,
                          "--prefill and --decode go together (e.g. --prefill 4 --decode 4)");
    if (o->prefill + o->decode > co->ngpus)
        return gq_err_set(err, GQ_E_USAGE, "--prefill %d --decode %d needs %d GPUs; %d %s selected",
                          o->prefill, o->decode, o->prefill + o->decode, co->ngpus,
                          co->ngpus == 1 ? "is" : "are");
    if (o->offload > co->ngpus)
        return gq_err_set(err, GQ_E_USAGE, "--offload %d needs %d GPUs; %d %s selected", o->offload,
                          o->offload, co->ngpus, co->ngpus == 1 ? "is" : "are");
    /* --budget as given; without it, the level's, raised to what the machine needs. */
    if (o->budget_s > 0) {
        co->budget_s = o->budget_s;
    } else {
        co->budget_s = gq_card_default_budget_s(topo, co);
        co->level_budget_s = gq_card_level_budget_s(co->level);
    }
    return gq_card_plan_make(topo, co, plan, err);
}

int gq_card_cli_document(const gq_card_cli_run *run, json_t *options, json_t **doc, gq_err *err)
{
    const gq_card_result *res = run->res;
    json_t *placement = gq_card_placement_json(res);
    json_t *stress = gq_card_stress_json(res);
    gq_card_inputs in = {.topo = run->topo,
                         .rs = &res->rs,
                         .stress = stress,
                         .placement = placement,
                         .sec = &res->sec,
                         .expect = run->expect,
                         .plan = run->plan,
                         .opts = run->co,
                         .elapsed_s = res->elapsed_s,
                         .complete = run->complete,
                         .stopped_at = run->complete ? NULL : gq_card_step_name(res->stopped_at),
                         .bytes = run->co->bytes};
    json_t *composed = gq_card_compose(&in, err);
    json_decref(placement);
    *doc = NULL;
    if (!composed) {
        json_decref(stress);
        return err->code ? err->code : GQ_E_NOMEM;
    }
    /* The card just judged has a verdict (a string gpuqual wrote): never a
     * card written, nor success, without one. Only an allocation that failed
     * in the codec (a json_string()) can leave it out. */
    gq_saved_sections sec;
    gq_saved_sections_read(composed, &sec);
    if (gq_card_exit_code(sec.card) < 0) {
        json_decref(composed);
        json_decref(stress);
        return gq_err_set(err, GQ_E_NOMEM, "out of memory composing the card: its verdict is missing");
    }
    if (stress)
        json_object_set_new(composed, "stress", stress);
    gq_doc d = {.kind = "card",
                .version = gq_version,
                .git = gq_git_rev,
                .options = options,
                .topo = run->topo,
                .records = &res->rs,
                .sections = composed,
                .simulated = run->simulated,
                .incomplete = !run->complete};
    *doc = gq_doc_to_json(&d);
    json_decref(composed);
    return *doc ? GQ_OK : gq_err_set(err, GQ_E_NOMEM, "out of memory building card.json");
}

static int write_text(const char *dir, const char *name, const gq_card_doc *doc,
                      int (*fn)(FILE *, const gq_card_doc *, gq_err *), gq_err *err)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gq_outfile of;
    int rc = gq_outfile_open(&of, path, err);
    if (rc)
        return rc;
    if ((rc = fn(of.f, doc, err))) {
        gq_outfile_abort(&of);
        return rc;
    }
    return gq_outfile_commit(&of, err);
}

int gq_card_cli_write(const char *dir, const json_t *doc, const gq_card_cli_run *run, gq_err *err)
{
    char path[1200];
    int rc;
    snprintf(path, sizeof path, "%s/card.json", dir);
    if ((rc = gq_doc_write_file(doc, path, err)))
        return rc;
    gq_card_doc *cd = NULL;
    if ((rc = gq_card_doc_from_json(doc, &cd, err)))
        return rc;
    rc = write_text(dir, "card.md", cd, gq_card_render_markdown, err);
    if (!rc)
        rc = write_text(dir, "card.html", cd, gq_card_render_html, err);
    gq_card_doc_free(cd);
    if (rc)
        return rc;
    json_t *nvb = gq_render_nvbandwidth_json(run->topo, &run->res->rs, gq_version);
    snprintf(path, sizeof path, "%s/nvbandwidth.json", dir);
    rc = nvb ? gq_doc_write_file(nvb, path, err) : GQ_OK;
    json_decref(nvb);
    if (rc || !run->res->have_stress)
        return rc;
    snprintf(path, sizeof path, "%s/stress.csv", dir);
    gq_outfile of;
    if ((rc = gq_outfile_open(&of, path, err)))
        return rc;
    /* a stress run re-used from a journal reads back as it was measured: the same file */
    gq_stress_write_csv(of.f, &run->res->stress);
    return gq_outfile_commit(&of, err);
}
