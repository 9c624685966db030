// The mesh's two representations, arrays (data-oriented) and modules (one router sc_module per node,
// reached through TLM sockets), give identical timings for the same packets.
#include <gtest/gtest.h>

#include <random>

#include "models/interconnect/mesh_noc.h"
#include "tests/support/harness.h"

using namespace tessel;
using test::ns;

namespace {
txn packet(std::uint32_t from, std::uint32_t to, std::uint64_t bytes, tick at) {
    txn t = test::request(txn_kind::route, at, bytes);
    t.src_port = from;
    t.dst_port = to;
    return t;
}
const char* mesh_params =
    "{width: 4, height: 4, link_bandwidth: 32B/cycle, router_latency: 2cycles, link_latency: 1cycle, header_bytes: "
    "16B}";
}  // namespace

TEST(mesh_noc, arrays_and_modules_give_identical_timings) {
    sim_context sim;
    auto arrays = test::make<mesh_noc>(sim, "mesh_noc", "arr", mesh_params);
    auto modules = test::make<mesh_noc>(sim, "mesh_noc", "mod",
                                        "{width: 4, height: 4, link_bandwidth: 32B/cycle, router_latency: 2cycles, "
                                        "link_latency: 1cycle, header_bytes: 16B, representation: modules}");
    // The routers' sockets are complete only after elaboration.
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    std::mt19937 rng(7);
    for (int i = 0; i < 5000; ++i) {
        const std::uint32_t from = rng() % 16, to = rng() % 16;
        const std::uint64_t bytes = 1 + rng() % 256;
        const tick at = (rng() % 2000) * ns / 4;
        txn a = packet(from, to, bytes, at), b = packet(from, to, bytes, at);
        arrays->traverse(a);
        modules->traverse(b);
        ASSERT_EQ(a.head, b.head) << "packet " << i;
        ASSERT_EQ(a.tail, b.tail) << "packet " << i;
    }
}
