// libFuzzer harness: the arguments of `tessel plan` and `tessel compare` that tessel parses itself (CLI11 reads
// the rest). Each line of the input is one argument: every line is read as a --system (with and without --power),
// and all of them together as the --set list of a plan (platform, workload and parallel.* keys, the searched ones
// folded into the plan's limits as lists such as "1,2,4").
#include <sstream>

#include "engine/plan/advisor.h"
#include "engine/plan/compare.h"
#include "fuzz/fuzz_common.h"

TESSEL_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {  // NOLINT: libFuzzer names it
    using namespace tessel;
    fuzz::init_once();
    plan_options o;
    std::istringstream is(fuzz::text_of(data, size));
    for (std::string line; std::getline(is, line);) {
        o.sets.push_back(line);
        for (bool power : {false, true}) {
            try {
                (void)sweep::parse_system(line, power);
            } catch (const input_error&) {
            }
        }
    }
    try {
        plan_limits limits;
        (void)split_user_sets(o, limits);
    } catch (const input_error&) {
    }
    return 0;
}
