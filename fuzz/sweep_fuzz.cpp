// libFuzzer harness: the sweep spec loader (axes, ranges, zips, derived expressions, filters) and the
// expansion into points.
#include "engine/sweep/spec.h"
#include "fuzz/fuzz_common.h"

TESSEL_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tessel;
    fuzz::init_once();
    try {
        const sweep::spec s = sweep::parse_spec(fuzz::text_of(data, size), "fuzz.yaml");
        (void)sweep::expand(s);
    } catch (const input_error&) {
    }
    return 0;
}
