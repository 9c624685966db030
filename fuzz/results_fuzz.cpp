// libFuzzer harness: a sweep's results record as a resumed sweep, plan, compare or serve reads it back. Each input
// is a results.jsonl: the store reads it (torn last line, rows that are not rows), rewrites results.csv from its
// rows, and every row a reader takes is read as the sweep's table and the plan's reader use it.
#include <filesystem>

#include "engine/sweep/results.h"
#include "fuzz/fuzz_common.h"

TESSEL_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tessel;
    fuzz::init_once();
    namespace fs = std::filesystem;
    static const fs::path dir = [] {
        const char* t = std::getenv("TMPDIR");
        return fs::path(t && *t ? t : "/tmp") / ("tessel-fuzz-results-" + std::to_string(getpid()));
    }();
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
    {
        std::ofstream os(dir / "results.jsonl", std::ios::binary);
        os.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    }
    try {
        sweep::results_store store(dir.string(), true);
        for (const auto& [key, r] : store.latest()) {
            // What every reader relies on once a row is accepted (driver.cpp, advisor.cpp, serve.cpp).
            (void)r["status"].get<std::string>();
            (void)r["error"].get<std::string>();
            (void)r["point"].dump();
            for (const auto& [k, v] : r["params"].items()) (void)v.get<std::string>();
            try {
                (void)sweep::read_point_summary(dir.string(), r,
                                                [](const nlohmann::json& s) { return s.value("sim_time_s", 0.0); });
            } catch (const input_error&) {
            }
        }
        store.rewrite_csv({"p"}, {"m"});
    } catch (const input_error&) {
    }
    fs::remove_all(dir, ec);
    return 0;
}
