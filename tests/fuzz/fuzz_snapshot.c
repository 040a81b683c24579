/* libFuzzer target for topology snapshots (`topo --from-snapshot FILE`,
 * topo/snapshot.c): the input is read with gq_snapshot_load; a snapshot that
 * loads is written back and read again, and must load the second time too.
 *
 * Build and run: as tests/fuzz/fuzz_doc.c, with the target fuzz_snapshot.
 */
#include <jansson.h>

#include "fuzz_util.h"
#include "topo/snapshot.h"
#include "topo/topo.h"

static gq_topo t1, t2;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input(data, size);
    fuzz_file ff;
    if (fuzz_file_open(&ff, data, size))
        return 0;
    gq_err e = {0};
    int rc = gq_snapshot_load(ff.path, &t1, &e);
    if (rc) {
        fuzz_check_refusal(rc, &e);
    } else {
        if (t1.ngpu < 0 || t1.ngpu > GQ_MAX_GPUS)
            abort();
        json_t *j = gq_topo_to_json(&t1);
        if (j) {
            gq_topo_init(&t2);
            if (gq_topo_from_json(j, &t2, &e) != GQ_OK || t2.ngpu != t1.ngpu)
                abort(); /* what was accepted once reads back the same */
            json_decref(j);
        }
    }
    fuzz_file_close(&ff);
    return 0;
}
