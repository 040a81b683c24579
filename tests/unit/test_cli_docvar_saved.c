/* Saved documents spoiled one field at a time (tests/unit/docvariants.h): the own sections of saved domains
 * (place --input), a placement (report), a stress run (compare) and a sweep (report). */
#include "docvariants.h"

static const reader readers[] = {
    {"domains.json",
     false,
     NULL,
     &gq_frame_place,
     {"--input", "doc.json", "--prefill", "1", "--decode", "1"}},
    {"place.json", false, NULL, &gq_frame_report, {"doc.json", "--format", "markdown"}},
    {"stress.json", false, NULL, &gq_frame_compare, {"doc.json", "doc.json"}},
    {"sweep.json", false, NULL, &gq_frame_report, {"doc.json", "--format", "markdown"}},
};

static void test_doc_variants(void **state)
{
    (void)state;
    doc_variants(readers, sizeof readers / sizeof readers[0], "docvar_saved");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doc_variants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
