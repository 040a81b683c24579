/* Checks on a file before it is read: one clear line for a directory or a
 * path that cannot be opened, instead of the parser's "not JSON". FIFOs,
 * /dev/stdin and /dev/fd/N pass (they are read like any file). */
#ifndef GQ_CORE_INFILE_H
#define GQ_CORE_INFILE_H

#include "core/status.h"

/* GQ_E_USAGE when `path` is empty or a directory ("'PATH' is a directory,
 * expected WHAT"; `what` names the file expected, "a gpuqual JSON document");
 * else GQ_OK: a missing or unreadable file is left to the caller's open, which
 * names it with its errno. */
int gq_infile_check(const char *path, const char *what, gq_err *err);

#endif
