/* Run ids: every document root and journal line names the run it came from
 * (docs/json.md, "run_id"): "YYYYMMDDTHHMMSSZ-xxxxxxxx", the UTC start
 * second and 8 lowercase hex digits of randomness. */
#ifndef GQ_CORE_RUNID_H
#define GQ_CORE_RUNID_H

#include <stdbool.h>

/* A fresh id into buf (25 characters and the terminating 0). */
void gq_run_id_make(char buf[32]);

/* This process's run id, made on first use: every document and journal
 * line one invocation writes names the same run. */
const char *gq_run_id_current(void);

/* Whether s has the form above (exact: lowercase hex, 25 characters). */
bool gq_run_id_valid(const char *s);

#endif
