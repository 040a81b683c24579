/* Every numeric option of every command shows its bounds in --help and
 * enforces them at parse time: a whole number, decimal, percentage or size
 * option has lo < hi (or is one of the counts kv checks itself, listed below
 * with where); a duration without bounds of its own takes 1 ms .. 168 h. The
 * help line of each is rendered and must show the range. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/units.h"

/* Counts with a lower bound checked after parsing, in their own words ("--layers 0: the model needs at
 * least 1 layer"): cmd_kv.c and analysis/kv.c gq_kv_shape_check / gq_kv_payload (overflow checked). */
static const char *const self_checked[] = {"kv --layers", "kv --kv-heads", "kv --head-dim", "kv --tokens",
                                           NULL};

static bool is_self_checked(const char *cmd, const char *name)
{
    char key[96];
    snprintf(key, sizeof key, "%s --%s", cmd, name);
    for (const char *const *s = self_checked; *s; s++)
        if (!strcmp(*s, key))
            return true;
    return false;
}

/* The help line(s) of one option, as --help prints them. */
static char *help_of(const gq_optset *set, const gq_opt *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    gq_optset_help(f, set, 1000); /* wide: one line per option */
    fclose(f);
    char needle[80];
    snprintf(needle, sizeof needle, "--%s ", o->name);
    char *at = strstr(buf, needle);
    char *line = NULL;
    if (at) {
        char *end = strchr(at, '\n');
        line = strndup(at, end ? (size_t)(end - at) : strlen(at));
    }
    free(buf);
    return line;
}

static void test_numeric_options_bounded(void **state)
{
    (void)state;
    int checked = 0;
    for (const gq_command *c = gq_commands; c->name; c++) {
        const gq_optset *set = &c->frame->opts;
        int it = 0;
        for (const gq_opt *o = NULL; (o = gq_optset_next(set, &it, o));) {
            bool numeric = o->type == GQ_OPT_INT || o->type == GQ_OPT_DOUBLE || o->type == GQ_OPT_PERCENT ||
                           o->type == GQ_OPT_SIZE;
            if (!numeric && o->type != GQ_OPT_DURATION)
                continue;
            if (numeric && !(o->lo < o->hi) && !is_self_checked(c->name, o->name))
                fail_msg("%s --%s: a %s option without bounds (give .lo and .hi)", c->name, o->name,
                         gq_opt_kind_name(o->type));
            if (numeric && !(o->lo < o->hi))
                continue;
            char *line = help_of(set, o);
            if (!line)
                fail_msg("%s --%s: not in --help", c->name, o->name);
            if (!strstr(line, "..") || !strchr(line, '('))
                fail_msg("%s --%s: --help shows no range: %s", c->name, o->name, line);
            if (o->type == GQ_OPT_DURATION && !(o->lo < o->hi) && !strstr(line, "(1ms..168h)"))
                fail_msg("%s --%s: a duration's default range 1ms..168h is not in --help: %s", c->name,
                         o->name, line);
            free(line);
            checked++;
        }
    }
    assert_true(checked > 40);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_numeric_options_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
