// Every number a doc quotes comes from a command it shows: README.md and every doc under docs/ quote runs in
// ```console blocks, and each quick block is re-run here unless the doc has a test of its own that does it
// (tests/support/doc_runs.h).
#include "tests/support/doc_runs.h"

using namespace tessel::test;

TEST(docs, every_quoted_tessel_command_is_in_a_console_block) {
    for (const auto& doc : every_doc())
        for (int line : unchecked_commands(doc))
            ADD_FAILURE() << doc << ":" << line
                          << ": a quoted `$ tessel` command outside a ```console block is never re-run; "
                          << "fence it ```console (or ```console slow) so the docs test checks what it prints";
}

TEST(docs, every_doc_without_a_test_of_its_own_prints_what_it_quotes) {
    // README.md's tour (four runs) and docs/noc.md's load point at least.
    EXPECT_GE(check_docs_without_their_own_test(false), 5u);
}
