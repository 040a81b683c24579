/* A card directory written as a set (carddir.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cli/carddir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/outfile.h"
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
    json_t *j = json_load_file(path, 0, NULL);
    const char *tool = json_string_value(json_object_get(j, "tool"));
    bool ok = tool && !strcmp(tool, "gpuqual") && json_is_object(json_object_get(j, "card"));
    json_decref(j);
    return ok;
}

int gq_carddir_check(const char *dir, bool force, gq_err *err)
{
    struct stat lst;
    if (lstat(dir, &lst) == 0 && S_ISLNK(lst.st_mode))
        return gq_err_set(err, GQ_E_USAGE,
                          "-o '%s' is a symbolic link, which a card is never written through; give "
                          "the directory itself",
                          dir);
    DIR *d = opendir(dir);
    if (!d)
        return GQ_OK; /* new: check_outdir has checked its parent */
    struct dirent *e;
    char foreign[256] = "";
    int n = 0;
    bool card = false;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        n++;
        char p[2048];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (!card_file(e->d_name) || lstat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
            if (!foreign[0])
                snprintf(foreign, sizeof foreign, "%s", e->d_name);
        } else if ((!strcmp(e->d_name, "card.json") && is_card_json(p)) ||
                   (!strcmp(e->d_name, "journal.jsonl") && gq_journal_sniff(p))) {
            card = true;
        }
    }
    closedir(d);
    if (n == 0)
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
