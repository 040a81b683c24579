/* libFuzzer target for the journal reader (measure/journal.c, what `report`
 * and a resume read): the input is a journal file (JSON lines). A refusal is
 * one line; what reads is a set of records whose count is within reason.
 *
 * Build and run: as tests/fuzz/fuzz_doc.c, with the target fuzz_journal.
 */
#include "core/record.h"
#include "fuzz_util.h"
#include "measure/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input(data, size);
    fuzz_file ff;
    if (fuzz_file_open(&ff, data, size))
        return 0;
    gq_recordset rs = {0};
    bool truncated = false;
    gq_err e = {0};
    int rc = gq_journal_read(ff.path, &rs, &truncated, &e);
    if (rc)
        fuzz_check_refusal(rc, &e);
    else if (rs.n < 0 || (size_t)rs.n > size)
        abort(); /* every record needs at least a byte of its own */
    gq_records_free(&rs);
    fuzz_file_close(&ff);
    return 0;
}
