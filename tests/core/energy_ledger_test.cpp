// The energy ledger: joules by op and part, and a power timeline whose bins widen without losing a joule.
#include <gtest/gtest.h>

#include "models/core/energy_ledger.h"

using tessel::energy_ledger;
using tessel::energy_part;
using tessel::tick;

TEST(energy_ledger, joules_are_kept_by_op_and_part) {
    energy_ledger l;
    l.spend(2, energy_part::dram, 3.0, 0, 10);
    l.spend(0, energy_part::compute, 1.0, 0, 10);
    l.spend(2, energy_part::dram, 0.5, 20, 30);
    ASSERT_EQ(l.by_op().size(), 3u);
    EXPECT_EQ(l.by_op()[2][static_cast<size_t>(energy_part::dram)], 3.5);
    EXPECT_EQ(l.by_op()[0][static_cast<size_t>(energy_part::compute)], 1.0);
    EXPECT_EQ(l.by_op()[1][static_cast<size_t>(energy_part::compute)], 0.0);
    EXPECT_EQ(l.total()[static_cast<size_t>(energy_part::dram)], 3.5);
}

TEST(energy_ledger, a_spend_is_spread_evenly_over_its_interval) {
    energy_ledger l;
    // Bins start one tick wide: 4 J over [2, 6) is 1 J in each of bins 2..5.
    l.spend(0, energy_part::compute, 4.0, 2, 6);
    EXPECT_EQ(l.bin_ticks(), 1u);
    ASSERT_EQ(l.bins().size(), 6u);
    EXPECT_EQ(l.bins()[1], 0.0);
    for (size_t b = 2; b < 6; ++b) EXPECT_DOUBLE_EQ(l.bins()[b], 1.0);
    // An instant goes into the bin it falls in.
    l.spend(0, energy_part::sync, 2.0, 3, 3);
    EXPECT_DOUBLE_EQ(l.bins()[3], 3.0);
}

TEST(energy_ledger, bins_double_when_the_run_outgrows_them_and_keep_every_joule) {
    energy_ledger l;
    l.spend(0, energy_part::compute, 1.0, 0, 1);  // bin 0
    l.spend(0, energy_part::compute, 1.0, 1, 2);  // bin 1
    // A spend ending at 4096 ticks needs bins of 4 ticks: its last tick, 4095, is in bin 1023 (< 1024 bins).
    l.spend(0, energy_part::compute, 8.0, 4088, 4096);
    EXPECT_EQ(l.bin_ticks(), 4u);
    EXPECT_LE(l.bins().size(), energy_ledger::max_bins);
    EXPECT_DOUBLE_EQ(l.bins()[0], 2.0);  // the first two merged
    double sum = 0;
    for (double j : l.bins()) sum += j;
    EXPECT_DOUBLE_EQ(sum, 10.0);
    // Peak: the 8 J over [4088, 4096) are 4 J in each of the last two bins, 4 ticks (4 fs) wide.
    EXPECT_DOUBLE_EQ(l.bins()[1022], 4.0);
    EXPECT_DOUBLE_EQ(l.peak_watts(), 4.0 / 4e-15);
}
