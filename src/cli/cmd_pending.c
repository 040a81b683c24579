/* Commands whose implementation has not landed yet. Each says so plainly and
 * exits 1; a command moves out of this file when it is implemented. */
#include <string.h>

#include "cli/commands.h"
#include "cli/common.h"

static int pending(int argc, char **argv, const char *issue)
{
    for (int i = 2; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("gpuqual %s: not implemented in this version yet (tracked in %s).\n", argv[1], issue);
            return 0;
        }
    gq_cli_error("'%s' is not implemented in this version yet (tracked in %s)", argv[1], issue);
    return 1;
}

int gq_cmd_fleet(int argc, char **argv) { return pending(argc, argv, "the fleet issue"); }
