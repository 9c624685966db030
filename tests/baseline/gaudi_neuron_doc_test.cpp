// The Gaudi and Neuron pages quote real runs (chips, GEMMs, decode steps, plans on their systems, a port with a
// host fallback): re-run here, beside the numbers they explain (so the docs test leaves them out:
// tests/support/doc_runs.h, checked_by_its_own_test).
#include <gtest/gtest.h>

#include "tests/support/doc_runs.h"

using namespace tessel::test;

TEST(gaudi_neuron_docs, the_gaudi_page_prints_what_it_quotes) {
    EXPECT_GE(check_quoted_runs("docs/platforms/gaudi.md", false), 12u);
}

TEST(gaudi_neuron_docs, the_neuron_page_prints_what_it_quotes) {
    EXPECT_GE(check_quoted_runs("docs/platforms/neuron.md", false), 16u);
}
