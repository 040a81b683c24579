/* A card directory written as a set (carddir.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli/carddir.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/outfile.h"
#include "doc/saved_doc.h"
#include "core/infile.h"
#include "measure/journal.h"

/* The files a card directory holds. */
static const char *const card_files[] = {"card.json",  "card.md",       "card.html", "nvbandwidth.json",
                                         "stress.csv", "journal.jsonl", NULL};

static bool card_file(const char *name)
{
    for (int i = 0; card_files[i]; i++)
        if (!strcmp(name, card_files[i]))
            return true;
    return false;
}

static bool is_card_json(const char *path)
{
    if (gq_infile_check_size(path, "a card", GQ_INFILE_DOC_MAX, NULL))
        return false;
    json_t *j = json_load_file(path, 0, NULL);
    gq_saved_head h;
    gq_saved_head_read(j, &h);
    bool ok = h.gpuqual && h.has_card;
    json_decref(j);
    return ok;
}

/* What a directory holds, against a card's files: how many entries, the
 * first one that is not a card's file, and whether one marks a card (a
 * gpuqual card.json, or a journal). False when it cannot be opened. */
typedef struct card_scan {
    int n;
    char foreign[256];
    bool card;
} card_scan;

static bool scan_card(const char *dir, card_scan *s)
{
    memset(s, 0, sizeof *s);
    DIR *d = opendir(dir);
    if (!d)
        return false;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        s->n++;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (!card_file(e->d_name) || lstat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
            if (!s->foreign[0])
                snprintf(s->foreign, sizeof s->foreign, "%s", e->d_name);
        } else if ((!strcmp(e->d_name, "card.json") && is_card_json(p)) ||
                   (!strcmp(e->d_name, "journal.jsonl") && gq_journal_sniff(p))) {
            s->card = true;
        }
    }
    closedir(d);
    return true;
}

int gq_carddir_check(const char *dir, bool force, gq_err *err)
{
    struct stat lst;
    if (lstat(dir, &lst) == 0 && S_ISLNK(lst.st_mode))
        return gq_err_set(err, GQ_E_USAGE,
                          "-o '%s' is a symbolic link, which a card is never written through; give "
                          "the directory itself",
                          dir);
    card_scan cs;
    if (!scan_card(dir, &cs))
        return GQ_OK; /* new: check_outdir has checked its parent */
    const char *foreign = cs.foreign;
    bool card = cs.card;
    if (cs.n == 0)
        return GQ_OK;
    if (foreign[0] || !card)
        return gq_err_set(
            err, GQ_E_USAGE,
            "-o '%s' holds '%s', which is not part of a gpuqual card; give a new or empty directory", dir,
            foreign[0] ? foreign : "files");
    if (!force)
        return gq_err_set(
            err, GQ_E_USAGE,
            "-o '%s' holds an earlier card; give --force to replace it once the new one is complete, "
            "or another directory",
            dir);
    return GQ_OK;
}

int gq_carddir_begin(const char *dir, const char *run_id, char *partial, size_t cap, gq_err *err)
{
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    if ((size_t)snprintf(partial, cap, "%.*s.partial-%s", (int)len, dir, run_id) >= cap)
        return gq_err_set(err, GQ_E_USAGE, "-o '%s': the path is too long", dir);
    if (mkdir(partial, 0777) != 0)
        return gq_err_set(err, GQ_E_IO, "-o '%s': cannot create '%s': %s", dir, partial, strerror(errno));
    return GQ_OK;
}

/* Remove a card directory: its regular files, then itself. */
static int remove_card(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); /* never through a link */
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
            unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
    return rmdir(path);
}

void gq_carddir_discard(const char *partial)
{
    if (partial && partial[0])
        remove_card(partial);
}

int gq_carddir_commit(const char *dir, const char *partial, const char *run_id, gq_err *err)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (rename(partial, dir) != 0)
            return gq_err_set(err, GQ_E_FAIL, "cannot move the card from '%s' to '%s': %s", partial, dir,
                              strerror(errno));
    } else if (renameat2(AT_FDCWD, partial, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
        /* the earlier card is now under the partial name */
        if (remove_card(partial) != 0)
            fprintf(stderr, "gpuqual: warning: the earlier card is left in '%s'\n", partial);
    } else if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP) {
        char old[2100];
        size_t len = strlen(dir);
        while (len > 1 && dir[len - 1] == '/')
            len--;
        snprintf(old, sizeof old, "%.*s.old-%s", (int)len, dir, run_id);
        if (rename(dir, old) != 0)
            return gq_err_set(err, GQ_E_FAIL,
                              "cannot move the earlier card '%s' aside: %s; the new card is in '%s'", dir,
                              strerror(errno), partial);
        if (rename(partial, dir) != 0) {
            int e = errno;
            rename(old, dir);
            return gq_err_set(err, GQ_E_FAIL, "cannot move the card from '%s' to '%s': %s", partial, dir,
                              strerror(e));
        }
        if (remove_card(old) != 0)
            fprintf(stderr, "gpuqual: warning: the earlier card is left in '%s'\n", old);
    } else {
        return gq_err_set(err, GQ_E_FAIL, "cannot swap the card in '%s' into '%s': %s", partial, dir,
                          strerror(errno));
    }
    gq_outfile_sync_dir(dir);
    return GQ_OK;
}

int gq_carddir_find_partial(const char *dir, char *final, char *partial, size_t cap, char run_id[32],
                            gq_err *err)
{
    char d[1024];
    snprintf(d, sizeof d, "%s", dir);
    size_t len = strlen(d);
    while (len > 1 && d[len - 1] == '/')
        d[--len] = 0;
    const char *mark = strstr(d, ".partial-");
    struct stat st;
    if (mark && strlen(mark + 9) < 32 && stat(d, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(final, cap, "%.*s", (int)(mark - d), d);
        snprintf(partial, cap, "%s", d);
        snprintf(run_id, 32, "%s", mark + 9);
        return GQ_OK;
    }
    const char *slash = strrchr(d, '/');
    char parent[1024];
    if (!slash)
        snprintf(parent, sizeof parent, ".");
    else if (slash == d)
        snprintf(parent, sizeof parent, "/");
    else
        snprintf(parent, sizeof parent, "%.*s", (int)(slash - d), d);
    const char *base = slash ? slash + 1 : d;
    size_t blen = strlen(base);
    DIR *p = opendir(parent);
    char best[256] = "";
    struct dirent *e;
    while (p && (e = readdir(p)))
        if (!strncmp(e->d_name, base, blen) && !strncmp(e->d_name + blen, ".partial-", 9) &&
            strlen(e->d_name + blen + 9) < 32 && strcmp(e->d_name, best) > 0)
            snprintf(best, sizeof best, "%s", e->d_name);
    if (p)
        closedir(p);
    if (!best[0])
        return gq_err_set(err, GQ_E_USAGE,
                          "--resume '%s': no interrupted card there (no '%s.partial-RUNID/')", dir, d);
    snprintf(final, cap, "%s", d);
    snprintf(partial, cap, "%s/%s", parent, best);
    snprintf(run_id, 32, "%s", best + blen + 9);
    return GQ_OK;
}

int gq_carddir_check_outdir(const char *outdir, gq_err *err)
{
    if (!outdir)
        return access(".", W_OK | X_OK)
                   ? gq_err_set(err, GQ_E_IO, "the current directory is not writable; choose one with -o DIR")
                   : GQ_OK;
    if (!*outdir)
        return gq_err_set(err, GQ_E_USAGE, "-o: empty directory name");
    int crc = gq_outfile_check_chars("-o", outdir, err);
    if (crc)
        return crc;
    if (strlen(outdir) >= 1024)
        return gq_err_set(err, GQ_E_USAGE, "-o: the path is %zu characters, expected under 1024",
                          strlen(outdir));
    struct stat st;
    if (stat(outdir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return gq_err_set(err, GQ_E_IO, "-o '%s': exists and is not a directory", outdir);
        if (access(outdir, W_OK | X_OK) != 0)
            return gq_err_set(err, GQ_E_IO, "-o '%s': directory is not writable", outdir);
        return GQ_OK;
    }
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", outdir);
    char *slash = strrchr(tmp, '/');
    const char *parent = ".";
    if (slash) {
        *slash = 0;
        parent = *tmp ? tmp : "/";
    }
    if (access(parent, W_OK | X_OK) != 0)
        return gq_err_set(err, GQ_E_IO, "-o '%s': cannot create it: '%s' %s", outdir, parent,
                          access(parent, F_OK) ? "does not exist" : "is not writable");
    return GQ_OK;
}

/* ---- fleet directories ---------------------------------------------------- */

/* A node's folder as fleet names it: <host>-rank<N>, or its partial or
 * aside form <host>-rank<N>.partial-RUNID / .old-RUNID. *rank gets N,
 * *host_len the length of <host>, *base whether it is the plain form. */
static bool node_folder(const char *name, int *rank, size_t *host_len, bool *base)
{
    const char *r = NULL;
    for (const char *p = strstr(name, "-rank"); p; p = strstr(p + 1, "-rank"))
        r = p;
    if (!r || r == name || !isdigit((unsigned char)r[5]))
        return false;
    const char *d = r + 5;
    long v = 0;
    while (isdigit((unsigned char)*d) && v < 100000000)
        v = v * 10 + (*d++ - '0');
    if (isdigit((unsigned char)*d))
        return false;
    *rank = (int)v;
    *host_len = (size_t)(r - name);
    *base = !*d;
    if (*base)
        return true;
    const char *id = !strncmp(d, ".partial-", 9) ? d + 9 : !strncmp(d, ".old-", 5) ? d + 5 : NULL;
    return id && *id && strlen(id) < 32;
}

static bool file_starts(const char *path, const char *prefix)
{
    char buf[64] = "";
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    return !strncmp(buf, prefix, strlen(prefix));
}

static bool is_fleet_json(const char *path)
{
    if (gq_infile_check_size(path, "a fleet document", GQ_INFILE_DOC_MAX, NULL))
        return false;
    json_t *j = json_load_file(path, 0, NULL);
    gq_saved_head h;
    gq_saved_head_read(j, &h);
    bool ok = h.gpuqual && !strcmp(h.kind, "fleet");
    json_decref(j);
    return ok;
}

/* One entry of a fleet directory: fleet.json, fleet.md, a temporary file of
 * gpuqual's writer, or a node's folder holding only a card's files (*node).
 * Else *bad names what is not part of a fleet. */
static bool fleet_entry(const char *dir, const char *name, bool *node, bool *mark, char *bad, size_t cap)
{
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    struct stat st;
    int rank;
    size_t hl;
    bool base;
    *node = false;
    if (lstat(p, &st) != 0)
        return true; /* gone since readdir */
    if (S_ISREG(st.st_mode) && ((!strcmp(name, "fleet.json") && is_fleet_json(p)) ||
                                (!strcmp(name, "fleet.md") && file_starts(p, "# gpuqual fleet")))) {
        *mark = true;
        return true;
    }
    if (S_ISREG(st.st_mode) && !strncmp(name, ".gq-", 4))
        return true;
    card_scan cs;
    if (S_ISDIR(st.st_mode) && node_folder(name, &rank, &hl, &base) && scan_card(p, &cs)) {
        if (!cs.foreign[0] && (cs.card || cs.n == 0)) {
            *node = *mark = true;
            return true;
        }
        snprintf(bad, cap, "%s/%s", name, cs.foreign[0] ? cs.foreign : "");
        return false;
    }
    snprintf(bad, cap, "%s", name);
    return false;
}

int gq_carddir_check_fleet(const char *dir, bool force, char ***earlier, gq_err *err)
{
    *earlier = NULL;
    struct stat lst;
    if (lstat(dir, &lst) == 0 && S_ISLNK(lst.st_mode))
        return gq_err_set(err, GQ_E_USAGE,
                          "-o '%s' is a symbolic link, which a fleet is never written through; give "
                          "the directory itself",
                          dir);
    DIR *d = opendir(dir);
    if (!d)
        return GQ_OK; /* new: check_outdir has checked its parent */
    struct dirent *e;
    char bad[600] = "";
    int n = 0, nodes = 0, cap = 0, rc = GQ_OK;
    bool mark = false, json = false;
    char **names = NULL;
    while ((e = readdir(d)) && !bad[0] && !rc) {
        bool node;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        if (!fleet_entry(dir, e->d_name, &node, &mark, bad, sizeof bad) || !node) {
            json |= !strcmp(e->d_name, "fleet.json") && !bad[0];
            continue;
        }
        if (nodes + 2 > cap) {
            cap = cap * 2 + 8;
            char **v = realloc(names, (size_t)cap * sizeof *v);
            if (!v)
                rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
            else
                names = v;
        }
        if (!rc && !(names[nodes] = strdup(e->d_name)))
            rc = gq_err_set(err, GQ_E_NOMEM, "out of memory");
        if (!rc)
            names[++nodes] = NULL;
    }
    closedir(d);
    if (!rc && bad[0])
        rc = gq_err_set(err, GQ_E_USAGE,
                        "-o '%s' holds '%s', which is not part of a gpuqual fleet (fleet.json, fleet.md, one "
                        "<host>-rank<N>/ card folder per node); give a new or empty directory (--force "
                        "replaces only an earlier fleet)",
                        dir, bad);
    else if (!rc && n && !mark)
        rc = gq_err_set(err, GQ_E_USAGE,
                        "-o '%s' holds only temporary files, not a gpuqual fleet; give a new or empty "
                        "directory",
                        dir);
    else if (!rc && n && !force)
        rc = gq_err_set(err, GQ_E_USAGE,
                        "-o '%s' holds an earlier gpuqual fleet (%s%d node folder%s); give --force to "
                        "replace it, or another directory",
                        dir, json ? "fleet.json and " : "", nodes, nodes == 1 ? "" : "s");
    if (rc)
        gq_carddir_names_free(names);
    else
        *earlier = names;
    return rc;
}

void gq_carddir_names_free(char **names)
{
    for (int i = 0; names && names[i]; i++)
        free(names[i]);
    free(names);
}

int gq_carddir_fleet_prune(const char *dir, char *const *earlier, const char *const *hosts, int size,
                           char *left, size_t cap)
{
    int failed = 0;
    if (left && cap)
        left[0] = 0;
    for (int i = 0; earlier && earlier[i]; i++) {
        int rank;
        size_t hl;
        bool base;
        if (!node_folder(earlier[i], &rank, &hl, &base))
            continue;
        /* this fleet's own folder for that rank: replaced by its new card, or kept
         * beside that card's partial folder when it did not complete (as card does) */
        const char *h = rank < size ? hosts[rank] : NULL;
        if (base && rank < size && (!h || (strlen(h) == hl && !strncmp(h, earlier[i], hl))))
            continue;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, earlier[i]);
        if (remove_card(p) != 0 && errno != ENOENT && failed++ == 0 && left)
            snprintf(left, cap, "%s", p);
    }
    return failed;
}
