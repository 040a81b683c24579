/* Every command on the frame (src/cli/commands.c): a short flag has one
 * meaning across all commands (core/options.h gq_short_flags), no command
 * declares a name or a letter twice, every default parses, and every help
 * fits 100 columns. Commands not yet on the frame keep their old tables
 * until they are converted; the shared tables are checked here too. No
 * command keeps a letter of its own (compare's -t for --threshold is gone). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/commands.h"
#include "cli/common.h"

static void check_set(const char *cmd, const gq_optset *set)
{
    int it = 0;
    for (const gq_opt *o = NULL; (o = gq_optset_next(set, &it, o));) {
        if (o->shortname) {
            if (gq_short_for(o->name) != o->shortname)
                fail_msg("%s: -%c --%s is not in gq_short_flags (it says -%c)", cmd, o->shortname, o->name,
                         gq_short_for(o->name) ? gq_short_for(o->name) : '?');
        }
        int it2 = it;
        for (const gq_opt *p = o; (p = gq_optset_next(set, &it2, p));) {
            if (!strcmp(p->name, o->name))
                fail_msg("%s: --%s is declared twice", cmd, o->name);
            if (o->shortname && p->shortname == o->shortname)
                fail_msg("%s: -%c is declared twice", cmd, o->shortname);
        }
    }
}

static void test_short_flags_one_meaning(void **state)
{
    (void)state;
    int nframe = 0;
    for (const gq_command *c = gq_commands; c->name; c++) {
        assert_true(c->frame || c->fn);
        if (!c->frame)
            continue;
        assert_string_equal(c->frame->name, c->name);
        check_set(c->name, &c->frame->opts);
        nframe++;
    }
    assert_true(nframe >= 3);
    const gq_opt *const shared[] = {gq_common_output_opts, gq_common_backend_opts, gq_common_measure_opts};
    gq_optset all = {.tabs = shared, .ntab = 3};
    check_set("shared", &all);
}

static void test_defaults_and_help(void **state)
{
    (void)state;
    for (const gq_command *c = gq_commands; c->name; c++) {
        if (!c->frame)
            continue;
        void *o = calloc(1, c->frame->opts_size);
        char *argv[] = {"gpuqual", (char *)c->name, NULL};
        const char *pos[GQ_FRAME_MAXPOS];
        int npos;
        bool help;
        gq_err e = {0};
        assert_int_equal(
            gq_optset_parse(&c->frame->opts, o, 2, argv, 2, pos, GQ_FRAME_MAXPOS, &npos, &help, &e), GQ_OK);
        free(o);
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);
        gq_optset_help(f, &c->frame->opts, 100);
        fclose(f);
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
            if (strlen(line) > 100 && strchr(line + strspn(line, " "), ' '))
                fail_msg("%s --help: a line over 100 columns: %s", c->name, line);
        free(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_flags_one_meaning),
        cmocka_unit_test(test_defaults_and_help),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
