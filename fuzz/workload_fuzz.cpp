// libFuzzer harness: the workload YAML loader (parameters, expressions in shapes, shape inference, costs,
// cycle detection) and the workload options (training expansion, fusion).
#include "engine/workload/load.h"
#include "engine/workload/yaml_workload.h"
#include "fuzz/fuzz_common.h"

TESSEL_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tessel;
    fuzz::init_once();
    try {
        const workload_graph g = load_workload_yaml_text(fuzz::text_of(data, size), "fuzz.yaml", {});
        (void)g.total();
    } catch (const input_error&) {
    }
    return 0;
}
