// Memory timing against hand-computed values: SRAM bank conflicts, HBM row hits and misses, HBM streaming
// against random access, refresh.
#include <gtest/gtest.h>

#include <random>

#include "models/memory/hbm.h"
#include "models/memory/sram_bank.h"
#include "tests/support/harness.h"

using namespace tessel;
using test::ns;

TEST(sram_bank, one_access_is_bytes_over_bank_bandwidth_plus_latency) {
    sim_context sim;
    // 4 banks x 16 B/cycle at 1 GHz, 64 B interleave, 1-cycle latency.
    auto s = test::make<sram_bank>(sim, "sram_bank", "s1",
                                   "{capacity: 64KiB, banks: 4, bank_bandwidth: 16B/cycle, latency: 1cycle}");
    // 64 B in bank 0: 4 cycles, then 1 cycle of latency.
    txn t = test::request(txn_kind::read, 0, 64, 0);
    s->transport(t);
    EXPECT_EQ(t.head, 1 * ns);
    EXPECT_EQ(t.tail, 5 * ns);
    // 256 B spread over all four banks: 4 cycles in each, in parallel.
    txn u = test::request(txn_kind::read, 100 * ns, 256, 0);
    s->transport(u);
    EXPECT_EQ(u.tail, 105 * ns);
}

TEST(sram_bank, same_bank_conflicts_serialise_other_banks_do_not) {
    sim_context sim;
    auto s = test::make<sram_bank>(sim, "sram_bank", "s2",
                                   "{capacity: 64KiB, banks: 4, bank_bandwidth: 16B/cycle, latency: 0cycles}");
    txn a = test::request(txn_kind::read, 0, 64, 0);
    txn b = test::request(txn_kind::read, 0, 64, 256);  // 256 / 64 = stripe 4 -> bank 0 again
    s->transport(a);
    s->transport(b);
    EXPECT_EQ(a.tail, 4 * ns);
    EXPECT_EQ(b.tail, 8 * ns) << "the second access waits for bank 0";
    txn c = test::request(txn_kind::read, 20 * ns, 64, 0);
    txn d = test::request(txn_kind::read, 20 * ns, 64, 64);  // bank 1
    s->transport(c);
    s->transport(d);
    EXPECT_EQ(c.tail, 24 * ns);
    EXPECT_EQ(d.tail, 24 * ns) << "different banks proceed together";
}

TEST(sram_bank, two_ports_serve_two_accesses_to_one_bank) {
    sim_context sim;
    auto s = test::make<sram_bank>(
        sim, "sram_bank", "s3", "{capacity: 64KiB, banks: 4, ports: 2, bank_bandwidth: 16B/cycle, latency: 0cycles}");
    txn a = test::request(txn_kind::read, 0, 64, 0), b = test::request(txn_kind::read, 0, 64, 256);
    s->transport(a);
    s->transport(b);
    EXPECT_EQ(b.tail, 4 * ns);
}

TEST(sram_bank, capacity_must_divide_into_banks) {
    sim_context sim;
    EXPECT_THROW(test::make<sram_bank>(sim, "sram_bank", "s4", "{capacity: 1000B, banks: 3}"), input_error);
}

// One HBM2e pseudo-channel: tRCD = tCL = tRP = 14 ns, tRAS = 34 ns, 32 B bursts at 25.6 GB/s (1.25 ns).
std::unique_ptr<hbm> one_pc(sim_context& sim, const std::string& name) {
    return test::make<hbm>(sim, "hbm", name, "{channels: 1, pseudo_channels: 1}", "hbm2e_stack");
}

TEST(hbm, row_hit_is_faster_than_a_miss) {
    sim_context sim;
    auto h = one_pc(sim, "h1");
    // First access: bank closed -> activate at 0, column at tRCD = 14, data at +tCL = 28; 256 B = 8 bursts = 10 ns.
    txn a = test::request(txn_kind::read, 0, 256, 0);
    h->transport(a);
    EXPECT_EQ(a.head, 28 * ns);
    EXPECT_EQ(a.tail, 38 * ns);
    // Same 1 KiB row: a hit, column at once, data after tCL.
    txn b = test::request(txn_kind::read, 100 * ns, 256, 256);
    h->transport(b);
    EXPECT_EQ(b.head, 114 * ns);
    EXPECT_EQ(b.tail, 124 * ns);
    // Another row of bank 0: address 17408 is 256 B block 68, row-block 68 / 4 = 17, row 17 / 16 = 1, and bank
    // (17 % 16) XOR (row % 16) = 0 with the default XOR bank hash. Precharge, activate, column.
    txn c = test::request(txn_kind::read, 200 * ns, 256, 17408);
    h->transport(c);
    EXPECT_EQ(c.head, 242 * ns) << "tRP + tRCD + tCL = 42 ns after arrival";
    EXPECT_EQ(c.tail, 252 * ns);
}

TEST(hbm, activations_wait_for_tRAS) {
    sim_context sim;
    auto h = one_pc(sim, "h2");
    txn a = test::request(txn_kind::read, 0, 32, 0);
    h->transport(a);                                            // activate at 0
    txn b = test::request(txn_kind::read, 10 * ns, 32, 17408);  // same bank, other row, before tRAS = 34 ns
    h->transport(b);
    // Precharge no earlier than 34 ns, then tRP + tRCD + tCL = 42 ns: data at 76 ns.
    EXPECT_EQ(b.head, 76 * ns);
}

TEST(hbm, refresh_blocks_the_channel) {
    sim_context sim;
    auto h = one_pc(sim, "h3");
    // One channel: first refresh at tREFI = 3.9 us for tRFC = 350 ns. An access arriving at 4 us waits until 4.25 us,
    // and the refresh closed the rows.
    txn a = test::request(txn_kind::read, 4000 * ns, 32, 0);
    h->transport(a);
    EXPECT_EQ(a.head, (3900 + 350 + 14 + 14) * ns);
}

double bandwidth_of(hbm& h, const std::vector<std::uint64_t>& addresses, std::uint64_t bytes) {
    tick end = 0;
    for (std::uint64_t a : addresses) {
        txn t = test::request(txn_kind::read, 0, bytes, a);
        t.unit = -1;  // the channel comes from the address
        h.transport(t);
        end = std::max(end, t.tail);
    }
    return static_cast<double>(bytes * addresses.size()) / ticks_to_seconds(end);
}

TEST(hbm, streaming_reaches_most_of_peak_random_access_much_less) {
    sim_context sim;
    auto seq = test::make<hbm>(sim, "hbm", "stream", "{}", "hbm2e_stack");
    auto rnd = test::make<hbm>(sim, "hbm", "random", "{}", "hbm2e_stack");
    const double peak = seq->peak_bytes_per_second();
    EXPECT_DOUBLE_EQ(peak, 409.6e9);  // 8 channels x 2 pseudo-channels x 64 bit x 3.2 Gb/s
    std::vector<std::uint64_t> stream, random;
    for (std::uint64_t i = 0; i < 16384; ++i) stream.push_back(i * 64);
    std::mt19937_64 rng(42);
    for (int i = 0; i < 16384; ++i) random.push_back((rng() % (1ULL << 32)) / 64 * 64);
    const double s = bandwidth_of(*seq, stream, 64) / peak;
    const double r = bandwidth_of(*rnd, random, 64) / peak;
    // Streaming: rows stay open; what is lost is refresh (tRFC / tREFI = 9%) and a few activations.
    EXPECT_GT(s, 0.80);
    EXPECT_LE(s, 1.0);
    // Random 64 B: nearly every access activates a row, and a pseudo-channel may start only four activations
    // per tFAW = 30 ns: 4 x 64 B / 30 ns = 8.5 GB/s of its 25.6 GB/s (33%), before refresh.
    EXPECT_LT(r, 0.40);
    EXPECT_GT(r, 0.15);
    std::printf("streaming %.1f%% of peak, random %.1f%%\n", 100 * s, 100 * r);
}

// detail: stream times a request as a sequential stream at what the bank model reaches on one: the two agree on
// long streams, the stream rate never beats the pins, and requests queue behind each other.
TEST(hbm, stream_detail_matches_the_bank_model_on_long_streams) {
    sim_context sim;
    auto banks = test::make<hbm>(sim, "hbm", "banks", "{}", "hbm2e_stack");
    auto stream = test::make<hbm>(sim, "hbm", "streamed", "{detail: stream}", "hbm2e_stack");
    EXPECT_FALSE(banks->takes_whole_streams());
    EXPECT_TRUE(stream->takes_whole_streams());
    const double peak = banks->peak_bytes_per_second();
    const hbm::stream_rate r = stream->sustained_stream();
    EXPECT_LE(r.bytes_per_second, peak);
    // What streaming loses at bank level is refresh: tRFC / tREFI = 350 / 3900 = 9.0% of the time.
    EXPECT_NEAR(r.bytes_per_second / peak, 1 - 350.0 / 3900.0, 0.02);
    EXPECT_GE(r.latency_s, 28e-9);  // at least tRCD + tCL to the first data
    EXPECT_LT(r.latency_s, 1e-6);
    // 32 MiB as one request against the same bytes in 256 KiB requests at bank level.
    const std::uint64_t bytes = std::uint64_t{32} << 20;
    tick bank_end = 0;
    for (std::uint64_t off = 0; off < bytes; off += 256 << 10) {
        txn t = test::request(txn_kind::read, 0, 256 << 10, off);
        t.unit = -1;
        banks->transport(t);
        bank_end = std::max(bank_end, t.tail);
    }
    txn whole = test::request(txn_kind::read, 0, bytes, 0);
    whole.unit = -1;
    stream->transport(whole);
    EXPECT_NEAR(ticks_to_seconds(whole.tail), ticks_to_seconds(bank_end), 0.01 * ticks_to_seconds(bank_end));
    EXPECT_GE(ticks_to_seconds(whole.tail), static_cast<double>(bytes) / peak);  // never beats the pins
    // A second request waits for the first: one queue per device.
    txn next = test::request(txn_kind::write, 0, 1 << 20, bytes);
    next.unit = -1;
    stream->transport(next);
    EXPECT_EQ(next.head, whole.tail);
    EXPECT_NEAR(ticks_to_seconds(next.tail - next.head), (1 << 20) / r.bytes_per_second, 1e-12);
    // The statistics count the bytes as the bank model does.
    std::vector<resource_usage> u;
    stream->usage(u);
    EXPECT_DOUBLE_EQ(u.front().work, static_cast<double>(bytes + (1 << 20)));
    EXPECT_LE(u.front().ideal_max, ticks_to_seconds(next.tail));
}
