/* What the libFuzzer targets share: the input as a file (a memory file
 * reached through /proc/self/fd/N, so the readers that take a path read it as
 * they read any file), and the check that a refusal is one line. */
#ifndef GQ_FUZZ_UTIL_H
#define GQ_FUZZ_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/status.h"

typedef struct fuzz_file {
    int fd;
    char path[64];
} fuzz_file;

/* 0 when the file holds the input; -1 (skip the input) when no memory file
 * could be made. One memory file serves every input of the process, emptied
 * and rewritten each time: making and closing one per input cost a tenth of
 * the time of the document targets in the kernel. */
static inline int fuzz_file_open(fuzz_file *f, const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0 && (fd = memfd_create("fuzz", 0)) < 0)
        return -1;
    if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        return -1;
    f->fd = fd;
    snprintf(f->path, sizeof f->path, "/proc/self/fd/%d", fd);
    return 0;
}

/* The memory file stays open for the next input. */
static inline void fuzz_file_close(fuzz_file *f)
{
    (void)f;
}

/* Whether the input could put a line break into a message that echoes it:
 * a raw newline or carriage return, or a JSON escape of one. (Once printed,
 * gpuqual replaces control characters with '?', so an echoed one does not
 * split the line the user sees.) */
static inline int fuzz_input_has_break(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        if (data[i] == '\n' || data[i] == '\r')
            return 1;
        if (data[i] == '\\' && i + 1 < size &&
            (data[i + 1] == 'n' || data[i + 1] == 'r' || data[i + 1] == 'u'))
            return 1;
    }
    return 0;
}

/* The input being run (each target sets it first), for fuzz_check_refusal. */
static const uint8_t *fuzz_in;
static size_t fuzz_in_size;
static inline void fuzz_input(const uint8_t *data, size_t size)
{
    fuzz_in = data;
    fuzz_in_size = size;
}

/* A refusal: a status other than OK, and one non-empty line (unless the
 * line break came from the input itself). */
static inline void fuzz_check_refusal(int rc, const gq_err *e)
{
    if (rc == GQ_OK || !e->msg[0])
        abort();
    if (strchr(e->msg, '\n') && !fuzz_input_has_break(fuzz_in, fuzz_in_size))
        abort();
}

/* Which of n consumers an input goes to: a hash of its bytes (FNV-1a), so the
 * same input always takes the same path and a mutation may move it to another.
 * Targets with several costly consumers of one decoded document run one per
 * input, which multiplies the executions per second without leaving any
 * consumer out. */
static inline unsigned fuzz_pick(const uint8_t *data, size_t size, unsigned n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 16777619u;
    return n ? h % n : 0;
}

/* The input as a NUL-terminated string (the caller frees it); NULL when it holds a NUL. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    if (memchr(data, 0, size))
        return NULL;
    char *s = malloc(size + 1);
    if (!s)
        return NULL;
    memcpy(s, data, size);
    s[size] = 0;
    return s;
}

#endif
