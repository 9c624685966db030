// Workload build cost: GPT-3 175B's graph (the gpt2 generator at 96 layers, hidden 12288, 96 heads, seq 2048,
// vocab 51200, as bench/system_gpt.sh 175b runs it) built from one workload source at N different batch sizes,
// as a serving run or the system mapper builds it. Reports the median time per build and, for comparison, the
// median time of load_workload (make the source, then build) at the same batch sizes.
//   tessel_bench_workload_build [--builds 1000] [--layers 96] [--loads 20] [--check RATIO]
// --check RATIO exits 1 unless median build <= RATIO x median load: building from a source must never cost more
// than loading the workload afresh (a ratio, so it holds on a slow or shared machine; see docs/performance.md).
// Count instructions instead of time with
//   valgrind --tool=callgrind build/bin/tessel_bench_workload_build --builds 10 --loads 0
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/workload/load.h"
#include "engine/workload/source.h"

using namespace tessel;

namespace {

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

template <class F>
double ms_of(F&& f) {
    const auto t0 = clock_type::now();
    f();
    return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

std::map<std::string, std::string> gpt3_175b(std::int64_t layers) {
    return {{"hidden", "12288"},  {"heads", "96"},     {"layers", std::to_string(layers)},
            {"seq", "2048"},      {"context", "2048"}, {"vocab", "51200"},
            {"precision", "fp16"}};
}

}  // namespace

int main(int argc, char** argv) {
    int builds = 1000, loads = 20;
    std::int64_t layers = 96;
    double check = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--builds")
            builds = std::atoi(argv[i + 1]);
        else if (a == "--loads")
            loads = std::atoi(argv[i + 1]);
        else if (a == "--layers")
            layers = std::atoll(argv[i + 1]);
        else if (a == "--check")
            check = std::atof(argv[i + 1]);
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    const auto text = gpt3_175b(layers);
    std::shared_ptr<const workload_source> src;
    const double make_ms = ms_of([&] { src = make_workload_source("gpt2"); });
    workload_overrides ov = parse_workload_overrides(text);
    std::vector<double> build_ms;
    size_t ops = 0;
    double macs = 0;
    for (int b = 1; b <= builds; ++b) {
        ov.batch = b;
        build_ms.push_back(ms_of([&] {
            const workload_graph g = src->build(ov);
            ops = g.ops().size();
            macs = g.total().macs;
        }));
    }
    std::vector<double> load_ms;
    for (int b = 1; b <= loads; ++b) {
        auto t = text;
        t["batch"] = std::to_string(b);
        load_ms.push_back(ms_of([&] { (void)load_workload("gpt2", t); }));
    }
    const double per_build = median(build_ms), per_load = median(load_ms);
    std::printf("gpt3-175b (%lld layers, %zu ops, %.4g MACs at batch %d): source made in %.3f ms\n",
                static_cast<long long>(layers), ops, macs, builds, make_ms);
    std::printf("median build %.3f ms over %d batch sizes (1..%d)\n", per_build, builds, builds);
    if (loads > 0) std::printf("median load_workload %.3f ms over %d batch sizes\n", per_load, loads);
    if (check > 0) {
        const double ratio = per_build / per_load;
        std::printf("build / load %.2f (bound %.2f)\n", ratio, check);
        if (!(ratio <= check)) return 1;
    }
    return 0;
}

// libsystemc (linked through the models) refers to sc_main; this benchmark runs no simulation.
int sc_main(int, char**) { return 0; }
