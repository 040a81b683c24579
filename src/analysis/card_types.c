/* The card's typed vocabulary (analysis/card_types.h). */
#include "analysis/card_types.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *const ev_names[] = {"unknown", "measured", "skipped", "failed"};
static const char *const reason_names[] = {NULL,          "budget", "one_gpu", "not_applicable", "user",
                                           "interrupted", "error",  "level",   "no_library"};
static const char *const reason_words[] = {"",
                                           "did not fit the budget",
                                           "one GPU",
                                           "not applicable",
                                           "turned off",
                                           "interrupted",
                                           "failed with an error",
                                           "not in this level",
                                           "NCCL not found"};
static const char *const level_names[] = {"quick", "standard", "full"};
static const char *const verdict_names[] = {"pass", "warn", "fail", "incomplete"};

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *gq_evidence_name(gq_evidence e)
{
    return (unsigned)e < (unsigned)N(ev_names) ? ev_names[e] : "unknown";
}

const char *gq_ev_reason_name(gq_ev_reason r)
{
    return (unsigned)r < (unsigned)N(reason_names) ? reason_names[r] : NULL;
}

const char *gq_ev_reason_words(gq_ev_reason r)
{
    return (unsigned)r < (unsigned)N(reason_words) ? reason_words[r] : "";
}

const char *gq_card_level_name(gq_card_level l)
{
    return (unsigned)l < (unsigned)N(level_names) ? level_names[l] : "?";
}

const char *gq_card_verdict_name(gq_card_verdict v)
{
    return (unsigned)v < (unsigned)N(verdict_names) ? verdict_names[v] : "?";
}

int gq_card_verdict_exit_code(gq_card_verdict v)
{
    switch (v) {
    case GQ_CV_PASS: return 0;
    case GQ_CV_WARN: return 4;
    case GQ_CV_FAIL: return 1;
    case GQ_CV_INCOMPLETE: return 5;
    }
    return 1;
}

static bool find(const char *s, const char *const *names, int n, int *out)
{
    if (!s)
        return false;
    for (int i = 0; i < n; i++)
        if (names[i] && !strcmp(s, names[i])) {
            *out = i;
            return true;
        }
    return false;
}

bool gq_evidence_parse(const char *s, gq_evidence *out)
{
    int i;
    if (!find(s, ev_names, N(ev_names), &i))
        return false;
    *out = (gq_evidence)i;
    return true;
}

bool gq_ev_reason_parse(const char *s, gq_ev_reason *out)
{
    int i;
    if (!find(s, reason_names, N(reason_names), &i))
        return false;
    *out = (gq_ev_reason)i;
    return true;
}

bool gq_card_level_parse(const char *s, gq_card_level *out)
{
    int i;
    if (!find(s, level_names, N(level_names), &i))
        return false;
    *out = (gq_card_level)i;
    return true;
}

bool gq_card_verdict_parse(const char *s, gq_card_verdict *out)
{
    int i;
    if (!find(s, verdict_names, N(verdict_names), &i))
        return false;
    *out = (gq_card_verdict)i;
    return true;
}

bool gq_card_step_parse(const char *s, gq_card_step_id *out)
{
    for (int i = 0; s && i < GQ_CS_COUNT; i++)
        if (!strcmp(s, gq_card_step_name((gq_card_step_id)i))) {
            *out = (gq_card_step_id)i;
            return true;
        }
    return false;
}

/* Each step's line (analysis/card_steps.h). */
static const struct {
    const char *name, *title;
    unsigned levels;
    int drop;
    bool pair, late;
    const char *row, *checks;
} steps[GQ_CS_COUNT] = {
#define STEP_(ID, NAME, TITLE, LEVELS, DROP, PAIR, LATE, ROW, CHECKS)                                        \
    [GQ_CS_##ID] = {#NAME, TITLE, LEVELS, DROP, PAIR, LATE, ROW, CHECKS},
    GQ_CARD_STEPS(STEP_)
#undef STEP_
};

const char *gq_card_step_name(gq_card_step_id s)
{
    return (unsigned)s < GQ_CS_COUNT ? steps[s].name : "?";
}

const char *gq_card_step_title(gq_card_step_id s)
{
    return (unsigned)s < GQ_CS_COUNT ? steps[s].title : "?";
}

int gq_card_step_drop(gq_card_step_id s)
{
    return (unsigned)s < GQ_CS_COUNT ? steps[s].drop : 0;
}

bool gq_card_step_needs_pair(gq_card_step_id s)
{
    return (unsigned)s < GQ_CS_COUNT && steps[s].pair;
}

bool gq_card_step_late(gq_card_step_id s)
{
    return (unsigned)s < GQ_CS_COUNT && steps[s].late;
}

bool gq_card_level_has(gq_card_level l, gq_card_step_id s)
{
    if ((unsigned)s >= GQ_CS_COUNT || (unsigned)l > GQ_LEVEL_FULL)
        return false;
    return (steps[s].levels >> l & 1u) != 0;
}

double gq_card_level_budget_s(gq_card_level l)
{
    return l == GQ_LEVEL_QUICK ? 60 : l == GQ_LEVEL_FULL ? 900 : 300;
}

double gq_card_level_stress_s(gq_card_level l)
{
    return l == GQ_LEVEL_QUICK ? 30 : l == GQ_LEVEL_FULL ? 300 : 60;
}

/* True when id is one of the space-separated words of list. */
static bool in_list(const char *list, const char *id)
{
    size_t n = strlen(id);
    for (const char *p = list; *p;) {
        size_t w = strcspn(p, " ");
        if (w == n && !strncmp(p, id, n))
            return true;
        p += w;
        p += strspn(p, " ");
    }
    return false;
}

gq_card_step_id gq_card_check_step(const char *id)
{
    for (int s = 0; id && *id && s < GQ_CS_COUNT; s++)
        if (in_list(steps[s].checks, id))
            return (gq_card_step_id)s;
    /* Identity and links, the expectations' coverage, and the integrity of
     * the records: what discovery and every step give. */
    return GQ_CS_IDENTITY;
}

int gq_card_row_step(const char *title)
{
    if (!title || !*title)
        return -1;
    for (int s = 0; s < GQ_CS_COUNT; s++)
        if (!strcmp(title, steps[s].row))
            return s;
    return strcmp(title, "Measurement integrity") ? -1 : GQ_CS_IDENTITY;
}

gq_card_verdict gq_card_overall(int worst, bool complete, gq_card_level level, const gq_evidence *ev,
                                const gq_ev_reason *why, bool *turned_off, char *text, size_t n)
{
    gq_card_verdict v = worst == 4 ? GQ_CV_FAIL : worst == 3 ? GQ_CV_WARN : GQ_CV_PASS;
    int noff = 0;
    for (int s = 0; s < GQ_CS_COUNT; s++) {
        turned_off[s] = false;
        if (!gq_card_level_has(level, (gq_card_step_id)s) || ev[s] == GQ_EV_MEASURED)
            continue;
        if (ev[s] == GQ_EV_SKIPPED && why[s] == GQ_EVR_USER) {
            turned_off[s] = true;
            noff++;
        } else if (ev[s] == GQ_EV_UNKNOWN || ev[s] == GQ_EV_FAILED ||
                   (ev[s] == GQ_EV_SKIPPED &&
                    (why[s] == GQ_EVR_BUDGET || why[s] == GQ_EVR_INTERRUPTED || why[s] == GQ_EVR_ERROR))) {
            complete = false; /* a step of the level that should have run did not */
        }
    }
    if (!complete)
        v = GQ_CV_INCOMPLETE;
    static const char *const upper[] = {"PASS", "WARN", "FAIL", "INCOMPLETE"};
    size_t used = (size_t)snprintf(text, n, "%s", upper[v]);
    int k = 0;
    for (int s = 0; s < GQ_CS_COUNT && v != GQ_CV_INCOMPLETE && used < n; s++) {
        if (!turned_off[s])
            continue;
        k++;
        used += (size_t)snprintf(text + used, n - used, "%s%s",
                                 k == 1      ? " without "
                                 : k == noff ? " and "
                                             : ", ",
                                 gq_card_step_name((gq_card_step_id)s));
    }
    return v;
}
