// libFuzzer harness: the SCALE-Sim readers. Each input is read both as a topology (.csv: the layer table, its
// header telling convolutions from matrix products, then built as a workload graph, shape inference and costs
// included) and as a configuration (.cfg: ArrayHeight, ArrayWidth, Dataflow).
#include "engine/workload/load.h"
#include "engine/workload/scalesim_config.h"
#include "fuzz/fuzz_common.h"

TESSEL_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tessel;
    fuzz::init_once();
    try {
        const workload_graph g = load_workload(fuzz::scratch_file(data, size, ".csv"), {});
        (void)g.total();
    } catch (const input_error&) {
    }
    try {
        (void)scalesim_settings(fuzz::scratch_file(data, size, ".cfg"));
    } catch (const input_error&) {
    }
    return 0;
}
