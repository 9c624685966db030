// Simulation speed: a large program on a large mesh. A W x H grid of tiles (data-oriented tile_array) on a
// mesh NoC (arrays); every tile runs R rounds of "compute, then send a message to a tile some hops away",
// each round waiting for the tile's previous round and for the message it receives. Reports executed steps
// per second of wall time, and the counts needed to compare runs (steps, packets, kernel activations).
//   tessel_bench_mesh [--width 64] [--height 64] [--rounds 8] [--bytes 1024] [--quantum 0ns]
// Compare runs by ratios taken in one session (this machine is shared), or count instructions with
//   valgrind --tool=callgrind build/bin/tessel_bench_mesh --rounds 2
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "engine/exec/executor.h"
#include "engine/netlist/platform.h"

using namespace tessel;

int main_bench(int argc, char** argv) {
    int width = 64, height = 64, rounds = 8;
    long bytes = 1024;
    std::string quantum = "0ns";
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--width")
            width = std::atoi(argv[i + 1]);
        else if (a == "--height")
            height = std::atoi(argv[i + 1]);
        else if (a == "--rounds")
            rounds = std::atoi(argv[i + 1]);
        else if (a == "--bytes")
            bytes = std::atol(argv[i + 1]);
        else if (a == "--quantum")
            quantum = argv[i + 1];
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    const std::string yaml = "platform: bench\nclock: 1GHz\nquantum: " + quantum +
                             "\ncomponents:\n"
                             "  tiles: {kind: tile_array, params: {width: " +
                             std::to_string(width) + ", height: " + std::to_string(height) +
                             ", sram: {capacity: 64KiB, banks: 4, bank_bandwidth: 16B/cycle}}}\n"
                             "  noc: {kind: mesh_noc, params: {width: " +
                             std::to_string(width) + ", height: " + std::to_string(height) +
                             ", link_bandwidth: 32B/cycle, packet_bytes: 1KiB}}\n"
                             "connections:\n  - tiles[x,y] -> noc[x,y]\n";
    const auto t0 = std::chrono::steady_clock::now();
    sim_context sim;
    param_context ctx;
    const yaml_node root = yaml_node::load_string(yaml, "bench.yaml");
    platform plat("bench", root, ctx, sim);
    executor ex("exec", plat);

    program p;
    p.name = "mesh_steps";
    const auto op = p.intern_op("round");
    work w;
    w.macs = 4096;
    w.bytes_in = 512;
    const auto wi = p.add_work(w);
    const std::uint32_t tiles = static_cast<std::uint32_t>(width * height);
    const std::uint32_t tiles_comp = plat.find_group("tiles")->ids.front();
    std::mt19937 rng(1);
    std::vector<std::uint32_t> last(tiles, ~0u), incoming(tiles, ~0u);
    for (int r = 0; r < rounds; ++r) {
        std::vector<std::uint32_t> next_incoming(tiles, ~0u);
        for (std::uint32_t t = 0; t < tiles; ++t) {
            std::vector<std::uint32_t> deps;
            if (last[t] != ~0u) deps.push_back(last[t]);
            if (incoming[t] != ~0u) deps.push_back(incoming[t]);
            const std::uint32_t c = p.add_compute(op, endpoint{tiles_comp, static_cast<std::int32_t>(t), 0}, wi, deps);
            // A destination up to 8 hops away in x and y.
            const int x = static_cast<int>(t % static_cast<std::uint32_t>(width)),
                      y = static_cast<int>(t / static_cast<std::uint32_t>(width));
            const int dx = std::clamp(x + static_cast<int>(rng() % 17) - 8, 0, width - 1);
            const int dy = std::clamp(y + static_cast<int>(rng() % 17) - 8, 0, height - 1);
            const std::uint32_t dst = static_cast<std::uint32_t>(dy * width + dx);
            const std::uint32_t s = p.add_transfer(op, endpoint{tiles_comp, static_cast<std::int32_t>(t), 0},
                                                   endpoint{tiles_comp, static_cast<std::int32_t>(dst), 0},
                                                   static_cast<std::uint64_t>(bytes), {c});
            last[t] = s;
            if (next_incoming[dst] == ~0u) next_incoming[dst] = s;
        }
        incoming = next_incoming;
    }
    const auto t1 = std::chrono::steady_clock::now();
    const auto r = ex.run(p);
    const auto t2 = std::chrono::steady_clock::now();
    const double build_s = std::chrono::duration<double>(t1 - t0).count();
    const double run_s = std::chrono::duration<double>(t2 - t1).count();
    std::printf("mesh %dx%d, %d rounds, %ld B messages, quantum %s\n", width, height, rounds, bytes, quantum.c_str());
    std::printf("steps        %zu\n", p.size());
    std::printf("packets      %llu\n", static_cast<unsigned long long>(r.packets));
    std::printf("activations  %llu\n", static_cast<unsigned long long>(r.activations));
    std::printf("events       %llu\n", static_cast<unsigned long long>(r.events));
    std::printf("simulated    %s\n", format_time(ticks_to_seconds(r.duration())).c_str());
    std::printf("build        %.3f s (platform and program)\n", build_s);
    std::printf("run          %.3f s\n", run_s);
    std::printf("steps/s      %.3g\n", static_cast<double>(p.size()) / run_s);
    return 0;
}

int main(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char** argv) {
    sim_context::init_systemc();
    return main_bench(argc, argv);
}
