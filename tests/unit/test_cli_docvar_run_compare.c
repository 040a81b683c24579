/* Saved documents spoiled one field at a time (tests/unit/docvariants.h): a saved run, every section, read by
 * compare (the same file twice). */
#include "docvariants.h"

static const reader readers[] = {
    {"run.json", true, NULL, &gq_frame_compare, {"doc.json", "doc.json"}},
};

static void test_doc_variants(void **state)
{
    (void)state;
    doc_variants(readers, sizeof readers / sizeof readers[0], "docvar_run_compare");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doc_variants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
