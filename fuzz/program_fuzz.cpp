// libFuzzer harness: the program YAML loader (steps, endpoints, loops, ranges, dependencies, traffic) against
// the teaching mesh (platforms/teaching/mesh4x4.yaml), loaded once.
#include <memory>

#include "engine/netlist/platform.h"
#include "engine/program/program_yaml.h"
#include "fuzz/fuzz_common.h"
#include "models/core/limits.h"

TESSEL_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tessel;
    fuzz::init_once();
    // A valid program near the default steps budget (2e7, about 1 GiB unsanitized) outgrows the fuzzer's 2 GB
    // RSS cap under AddressSanitizer: a 9 M-step loop did. Here the budget is 1 M steps, so loops past it are
    // refused up front (an input_error) as they are past the real budget.
    static const bool budget = [] {
        limits().steps = 1e6;
        return true;
    }();
    (void)budget;
    static sim_context sim;
    static param_context pctx;
    static std::unique_ptr<platform> plat =
        platform::load(std::string(TESSEL_SOURCE_DIR) + "/platforms/teaching/mesh4x4.yaml", pctx, sim);
    try {
        // As a file is read: an emitted program's tables cut out of the text first (split_emitted_tables).
        param_context ctx;
        const program p = parse_program_text(fuzz::text_of(data, size), "fuzz.yaml", *plat, &ctx);
        (void)p.steps.size();
    } catch (const input_error&) {
    }
    return 0;
}
