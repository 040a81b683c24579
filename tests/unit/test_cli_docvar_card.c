/* Saved documents spoiled one field at a time (tests/unit/docvariants.h): the card section of a saved card,
 * read by report (Markdown). */
#include "docvariants.h"

static const reader readers[] = {
    {"card.json", false, "card", &gq_frame_report, {"doc.json", "--format", "markdown"}},
};

static void test_doc_variants(void **state)
{
    (void)state;
    doc_variants(readers, sizeof readers / sizeof readers[0], "docvar_card");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_doc_variants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
