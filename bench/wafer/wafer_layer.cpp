// Simulation speed at wafer scale: one transformer layer mapped onto the full WSE-2 fabric (750 x 994 PEs and
// routers, all simulated) by the layer-pipelined mapper, timed phase by phase: building the platform, loading
// the workload, mapping it, simulating, summarising. Reports wall-clock seconds per phase and the process's peak
// resident memory (the target: under a minute and under 8 GB on one core).
//   tessel_bench_wafer [--platform platforms/wafer/wse2.yaml] [--workload bert-large] [--set workload.layers=1 ...]
// Without --set, the workload runs with one layer (workload.layers=1).
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "engine/exec/executor.h"
#include "engine/mappers/mapper.h"
#include "engine/netlist/platform.h"
#include "engine/report/explain/explainer.h"
#include "engine/report/summary.h"
#include "engine/workload/load.h"

using namespace tessel;

namespace {

double peak_rss_gb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_maxrss) * 1024.0 / 1e9;  // ru_maxrss is in KiB on Linux
}

}  // namespace

int main_bench(int argc, char** argv) {
    std::string plat_path = std::string(TESSEL_SOURCE_DIR) + "/platforms/wafer/wse2.yaml";
    std::string workload = "bert-large";
    std::vector<std::string> sets;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--platform")
            plat_path = argv[i + 1];
        else if (a == "--workload")
            workload = argv[i + 1];
        else if (a == "--set")
            sets.emplace_back(argv[i + 1]);
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    if (sets.empty()) sets.emplace_back("workload.layers=1");
    try {
        using clock = std::chrono::steady_clock;
        auto secs = [](clock::time_point a, clock::time_point b) {
            return std::chrono::duration<double>(b - a).count();
        };
        const auto t0 = clock::now();
        sim_context sim;
        param_context ctx;
        std::map<std::string, std::string> wsets;
        for (const auto& s : sets) {
            const auto eq = s.find('=');
            if (eq == std::string::npos) throw input_error("--set " + s + ": expected PATH=VALUE");
            const std::string k = s.substr(0, eq), v = s.substr(eq + 1);
            if (k.rfind("workload.", 0) == 0)
                wsets[k.substr(9)] = v;
            else
                ctx.add_override(k, v);
        }
        auto plat = platform::load(plat_path, ctx, sim);
        const auto t1 = clock::now();
        const workload_graph g = load_workload(workload, wsets);
        const auto t2 = clock::now();
        auto mp = create_mapper(*plat, ctx);
        mapping m = mp->map(g, *plat);
        const auto t3 = clock::now();
        executor ex("executor", *plat);
        const auto r = ex.run(m.prog);
        const auto t4 = clock::now();
        run_summary s = summarise(*plat, r, m.prog, g.total().flops, m.samples);
        s.notes = m.notes;
        s.details = m.details;
        explain_run(mp->name(), m, *plat, r, s);
        const auto t5 = clock::now();
        std::printf("platform     %s (%s)\n", plat->title().c_str(), plat->description().c_str());
        std::printf("workload     %s", g.name.c_str());
        for (const auto& [k, v] : wsets) std::printf(" %s=%s", k.c_str(), v.c_str());
        std::printf("\nsteps        %zu\n", m.prog.size());
        std::printf("packets      %llu\n", static_cast<unsigned long long>(r.packets));
        std::printf("activations  %llu\n", static_cast<unsigned long long>(r.activations));
        std::printf("simulated    %s (%s)\n", format_time(s.sim_seconds).c_str(),
                    s.details.value("mode", std::string("?")).c_str());
        std::printf("build        %.3f s (platform)\n", secs(t0, t1));
        std::printf("load         %.3f s (workload)\n", secs(t1, t2));
        std::printf("map          %.3f s\n", secs(t2, t3));
        std::printf("simulate     %.3f s\n", secs(t3, t4));
        std::printf("summarise    %.3f s\n", secs(t4, t5));
        std::printf("total        %.3f s\n", secs(t0, t5));
        std::printf("peak memory  %.3f GB (resident)\n", peak_rss_gb());
        for (const auto& n : s.notes) std::printf("  %s\n", n.c_str());
    } catch (const input_error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
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
