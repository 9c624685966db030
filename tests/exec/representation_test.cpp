// The two representations of a grid, one module per tile and router (tile + mesh_noc modules) against
// data-oriented arrays (tile_array + mesh_noc arrays), run the same program and must agree to the femtosecond.
// (The two platforms run one after the other in simulated time, so refresh, which happens at absolute times,
// is switched off: tREFI = 0.)
#include <gtest/gtest.h>

#include <random>

#include "tests/support/harness.h"

using namespace tessel;

namespace {

std::string platform_text(bool modules) {
    const std::string tiles = modules ? R"(
  tile:
    kind: tile
    replicate: {x: 4, y: 4}
    params: &tp
      pe: {macs_per_cycle: {fp16: 256}, issue_overhead: 3cycles}
      sram: {capacity: 256KiB, banks: 4, bank_bandwidth: 32B/cycle, latency: 2cycles}
)"
                                      : R"(
  tile:
    kind: tile_array
    params:
      width: 4
      height: 4
      pe: {macs_per_cycle: {fp16: 256}, issue_overhead: 3cycles}
      sram: {capacity: 256KiB, banks: 4, bank_bandwidth: 32B/cycle, latency: 2cycles}
)";
    return std::string("platform: ") + (modules ? "as_modules" : "as_arrays") + "\nclock: 1GHz\ncomponents:" + tiles +
           "  noc:\n    kind: mesh_noc\n    params: {width: 4, height: 4, link_bandwidth: 32B/cycle, representation: " +
           (modules ? "modules" : "arrays") +
           "}\n  hbm:\n    kind: hbm\n    preset: hbm2e_stack\n    params: {channels: 4, tREFI: 0ns}\n" +
           "connections:\n  - tile[x,y] -> noc[x,y]\n  - hbm[c] -> noc[0,c]\n";
}

program random_program(test::bench& b, unsigned seed) {
    program p;
    p.name = "random";
    std::mt19937 rng(seed);
    const auto op = p.intern_op("r");
    std::vector<std::uint32_t> last(16, ~0u);
    for (int i = 0; i < 600; ++i) {
        const int t = static_cast<int>(rng() % 16);
        const std::string me = "tile[" + std::to_string(t % 4) + "," + std::to_string(t / 4) + "]";
        std::vector<std::uint32_t> deps;
        if (last[static_cast<size_t>(t)] != ~0u) deps.push_back(last[static_cast<size_t>(t)]);
        std::uint32_t s;
        switch (rng() % 3) {
            case 0: {
                work w;
                w.macs = 1000 + rng() % 100000;
                w.bytes_in = static_cast<double>(rng() % 8192);
                s = p.add_compute(op, b.at(me), p.add_work(w), deps);
                break;
            }
            case 1: {
                const int u = static_cast<int>(rng() % 16);
                const std::string other = "tile[" + std::to_string(u % 4) + "," + std::to_string(u / 4) + "]";
                s = p.add_transfer(op, b.at(me), b.at(other), 1 + rng() % 20000, deps);
                break;
            }
            default: {
                endpoint h = b.at("hbm");
                h.address = (rng() % 4096) * 64;
                s = p.add_transfer(op, h, b.at(me), 1 + rng() % 20000, deps);
            }
        }
        last[static_cast<size_t>(t)] = s;
    }
    return p;
}

}  // namespace

TEST(representation, modules_and_arrays_agree_exactly) {
    // Both platforms are built before the first sc_start (SystemC elaborates once per process).
    test::bench modules(platform_text(true), "as_modules");
    test::bench arrays(platform_text(false), "as_arrays");
    for (unsigned seed : {1u, 2u, 3u}) {
        const program pm = random_program(modules, seed), pa = random_program(arrays, seed);
        const auto rm = modules.exec->run(pm);
        const auto ra = arrays.exec->run(pa);
        for (size_t s = 0; s < pm.size(); ++s)
            if (rm.step_end[s] - rm.start != ra.step_end[s] - ra.start) {
                std::printf("first difference: step %zu kind %d end %llu vs %llu start %llu vs %llu\n", s,
                            int(pm.steps[s].kind), (unsigned long long)(rm.step_end[s] - rm.start),
                            (unsigned long long)(ra.step_end[s] - ra.start),
                            (unsigned long long)(rm.step_start[s] - rm.start),
                            (unsigned long long)(ra.step_start[s] - ra.start));
                break;
            }
        ASSERT_EQ(rm.duration(), ra.duration()) << "seed " << seed;
        for (size_t s = 0; s < pm.size(); ++s) {
            ASSERT_EQ(rm.step_start[s] - rm.start, ra.step_start[s] - ra.start) << "seed " << seed << " step " << s;
            ASSERT_EQ(rm.step_end[s] - rm.start, ra.step_end[s] - ra.start) << "seed " << seed << " step " << s;
        }
        ASSERT_EQ(rm.packets, ra.packets);
    }
}
