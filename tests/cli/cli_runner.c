/* Runs the CLI table each tests/cli/ case file: each case is a command line, the
 * exit code it must give, and a text that must appear in its output (stdout
 * or stderr). Checks too that errors are one line and that no output file is
 * left behind when a case says so.
 *
 * Line format (fields separated by " | "):
 *   EXIT | EXPECTED TEXT (or -) | ARGS...      ARGS split on spaces; '' = empty arg
 * Lines starting with '#' and blank lines are ignored. In ARGS, @SRC@ is
 * replaced by the source directory and @TMP@ by a fresh temporary directory.
 * A case whose EXIT is 2 must print exactly one line on stderr.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

static char *replace_all(const char *s, const char *pat, const char *rep)
{
    size_t lp = strlen(pat), lr = strlen(rep);
    size_t cap = strlen(s) * (lr > lp ? lr : 1) + 1 + 4096;
    char *out = malloc(cap), *o = out;
    while (*s) {
        if (!strncmp(s, pat, lp)) {
            memcpy(o, rep, lr);
            o += lr;
            s += lp;
        } else
            *o++ = *s++;
    }
    *o = 0;
    return out;
}

static int run_case(const char *bin, char **args, int nargs, char *outbuf, size_t outcap, int *nerrlines)
{
    int pout[2], perr[2];
    if (pipe(pout) || pipe(perr))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pout[1], 1);
        dup2(perr[1], 2);
        close(pout[0]);
        close(perr[0]);
        char *argv[64];
        argv[0] = (char *)bin;
        for (int i = 0; i < nargs && i < 62; i++)
            argv[i + 1] = args[i];
        argv[nargs + 1] = NULL;
        alarm(120); /* a hung case dies by SIGALRM and fails, instead of hanging ctest */
        execv(bin, argv);
        _exit(127);
    }
    close(pout[1]);
    close(perr[1]);
    size_t used = 0;
    static char errbuf[1 << 16];
    size_t eused = 0;
    /* Drain both pipes together: a child that fills one while we block on the
     * other would deadlock. Output beyond the buffers is read and dropped. */
    struct pollfd fds[2] = {{.fd = pout[0], .events = POLLIN}, {.fd = perr[0], .events = POLLIN}};
    int open_fds = 2;
    while (open_fds > 0) {
        if (poll(fds, 2, -1) < 0)
            break;
        for (int k = 0; k < 2; k++) {
            if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            char tmp[4096];
            ssize_t r = read(fds[k].fd, tmp, sizeof tmp);
            if (r <= 0) {
                fds[k].fd = -1;
                open_fds--;
                continue;
            }
            if (k == 0) {
                size_t take = (size_t)r;
                if (used + take >= outcap / 2)
                    take = used < outcap / 2 ? outcap / 2 - used : 0;
                memcpy(outbuf + used, tmp, take);
                used += take;
            } else {
                size_t take = (size_t)r;
                if (eused + take >= sizeof errbuf)
                    take = sizeof errbuf - 1 - eused;
                memcpy(errbuf + eused, tmp, take);
                eused += take;
            }
        }
    }
    errbuf[eused] = 0;
    close(pout[0]);
    close(perr[0]);
    int st;
    waitpid(pid, &st, 0);
    *nerrlines = 0;
    for (size_t i = 0; i < eused; i++)
        if (errbuf[i] == '\n')
            (*nerrlines)++;
    size_t room = outcap - used - 1;
    if (eused > room)
        eused = room;
    memcpy(outbuf + used, errbuf, eused);
    outbuf[used + eused] = 0;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: cli_runner GPUQUAL CASES SRCDIR\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        perror(argv[2]);
        return 2;
    }
    char tmpl[] = "/tmp/gq-cli-XXXXXX";
    char *tmpdir = mkdtemp(tmpl);
    char line[4096];
    int lineno = 0, passed = 0, failed = 0;
    static char out[1 << 20];
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = 0;
        if (!line[0] || line[0] == '#')
            continue;
        char *l1 = replace_all(line, "@SRC@", argv[3]);
        char *l = replace_all(l1, "@TMP@", tmpdir);
        free(l1);
        char *p1 = strstr(l, " | ");
        char *p2 = p1 ? strstr(p1 + 3, " | ") : NULL;
        if (!p1 || !p2) {
            fprintf(stderr, "%s:%d: malformed line\n", argv[2], lineno);
            failed++;
            free(l);
            continue;
        }
        *p1 = 0;
        *p2 = 0;
        int want = atoi(l);
        const char *text = p1 + 3;
        char *argstr = p2 + 3;
        char *args[64];
        int nargs = 0;
        for (char *tok = strtok(argstr, " "); tok && nargs < 62; tok = strtok(NULL, " "))
            args[nargs++] = strcmp(tok, "''") ? tok : "";
        int nerr = 0;
        int got = run_case(argv[1], args, nargs, out, sizeof out, &nerr);
        int ok = got == want && (!strcmp(text, "-") || strstr(out, text));
        if (ok && want == 2 && nerr != 1)
            ok = 0;
        if (ok)
            passed++;
        else {
            failed++;
            fprintf(stdout, "FAIL %s:%d: exit %d (want %d), %d stderr lines; output:\n%.2000s\n", argv[2], lineno,
                    got, want, nerr, out);
        }
        free(l);
    }
    fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
