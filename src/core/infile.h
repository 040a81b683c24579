/* Checks on a file before it is read: one clear line for a directory, a file
 * larger than its reader's limit, or a path that cannot be opened, instead of
 * the parser's "not JSON" after reading gigabytes. FIFOs, /dev/stdin and
 * /dev/fd/N pass the checks (their readers read them once, up to the same
 * limit). */
#ifndef GQ_CORE_INFILE_H
#define GQ_CORE_INFILE_H

#include "core/status.h"

/* The limits, each stated in the --help of the commands that read such a
 * file: a saved document or journal (report, compare, place --input, kv
 * --input, --resume, fleet's card directories), and the small files written
 * by hand. */
#define GQ_INFILE_DOC_MAX (256LL << 20)  /* 256 MiB */
#define GQ_INFILE_TEXT_MAX (16LL << 20)  /* 16 MiB: expectations, a model's config, a snapshot */
#define GQ_INFILE_DOC_MAX_TEXT "256 MiB" /* as help and messages say it */
#define GQ_INFILE_TEXT_MAX_TEXT "16 MiB"

/* GQ_E_USAGE when `path` is empty or a directory ("'PATH' is a directory,
 * expected WHAT"; `what` names the file expected, "a gpuqual JSON document");
 * else GQ_OK: a missing or unreadable file is left to the caller's open, which
 * names it with its errno. */
int gq_infile_check(const char *path, const char *what, gq_err *err);

/* gq_infile_check, and a regular file larger than limit bytes is refused at
 * once from its size, before a byte is read: "'PATH' is 2.0 GiB (2147483648
 * bytes), over the 256 MiB limit for WHAT". */
int gq_infile_check_size(const char *path, const char *what, long long limit, gq_err *err);

/* A size for messages: "2.0 GiB", "312 KiB", "17 bytes". */
const char *gq_infile_size_text(long long bytes, char *buf, unsigned cap);

#endif
