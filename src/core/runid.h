/* A run's identity: "YYYYMMDDTHHMMSSZ-xxxxxxxx", the UTC start and 8
 * lowercase hex random digits. Written in every document and journal. */
#ifndef GQ_CORE_RUNID_H
#define GQ_CORE_RUNID_H

void gq_run_id_make(char buf[32]);

#endif
