// A transfer's window (max_outstanding) is its source interface's: on a route through two networks a packet
// gives its slot back when it leaves the first, so a long second network does not throttle the transfer to
// window x packet per round trip (the IPU-POD's gradient all-reduce ran at 6.3 GB/s on 64 GB/s links that way).
// On a route through one network the slot is held until delivery, as before.
#include <gtest/gtest.h>

#include "tests/support/harness.h"

using namespace tessel;

namespace {

// tile[0] -> near (64 GB/s, 100 ns) -> far (32 GB/s, 10 us) -> tile[1]; 4 KiB packets without headers, at most 2
// of a transfer in flight. Scratchpads fast enough never to matter.
const char* platform_yaml = R"(
platform: window
clock: 1GHz
components:
  tile:
    kind: tile
    replicate: {x: 2}
    params:
      sram: {capacity: 4MiB, banks: 8, bank_bandwidth: 256B/cycle, latency: 0cycles}
  near:
    kind: chip_link
    params: {lanes: 2, lane_bandwidth: 32GB/s, latency: 100ns, packet_bytes: 4KiB, header_bytes: 0B, max_outstanding: 2}
  far:
    kind: chip_link
    params: {lanes: 1, lane_bandwidth: 32GB/s, latency: 10us, packet_bytes: 4KiB, header_bytes: 0B, max_outstanding: 2}
connections:
  - tile[0] -> near[0]
  - near[1] -> far[0]
  - tile[1] -> far[1]
)";

test::bench& b() {
    static test::bench bench(platform_yaml, "window");
    return bench;
}

double seconds(const std::string& from, const std::string& to, std::uint64_t bytes) {
    program p;
    p.name = "window";
    p.add_transfer(p.intern_op("send"), b().at(from), b().at(to), bytes, {});
    const auto r = b().exec->run(p);
    return static_cast<double>(r.duration()) * 1e-15;
}

}  // namespace

TEST(window, a_second_network_does_not_throttle_a_transfer_to_its_round_trip) {
    // 256 KiB = 64 packets. Two at a time leave the near link every 100 ns + 64 ns, faster than the far link takes
    // them (128 ns each), so the far link's bandwidth bounds the transfer: 100 ns + 64 ns to reach it, 64 x 128 ns
    // through it, 10 us of its latency. Had the slot been held to delivery, 2 packets per 10.3 us round trip would
    // take 32 x 10.3 us = 330 us.
    const double t = seconds("tile[0]", "tile[1]", 256 * 1024);
    const double by_hand = 100e-9 + 64e-9 + 64 * 128e-9 + 10e-6;
    EXPECT_NEAR(t / by_hand, 1.0, 0.02) << t;
    EXPECT_GE(t, 256.0 * 1024 / 32e9 + 10e-6);  // never faster than the far link's bandwidth and latency
}

TEST(window, on_one_network_a_packet_holds_its_slot_until_it_is_delivered) {
    // tile[0] to the near link's far port alone is not a route through two networks; from tile[1] back to
    // tile[0] is (far, then near). One network: the far link from its port 0 side. A transfer of 64 packets
    // from far's port 0 to tile[1] keeps 2 in flight per 10 us round trip: 32 x (10 us + 128 ns).
    program p;
    p.name = "one";
    p.add_transfer(p.intern_op("send"), b().at("far[0]"), b().at("tile[1]"), 256 * 1024, {});
    const auto r = b().exec->run(p);
    const double t = static_cast<double>(r.duration()) * 1e-15;
    EXPECT_NEAR(t / (32 * (10e-6 + 128e-9)), 1.0, 0.02) << t;
}
