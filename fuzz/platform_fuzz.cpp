// libFuzzer harness: the platform YAML loader (yaml_node, the component registry, every kind's parameters,
// replicate:, connections). Each input is a platform file; loading must succeed or throw input_error.
#include "engine/netlist/platform.h"
#include "fuzz/fuzz_common.h"

TESSEL_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tessel;
    fuzz::init_once();
    static unsigned long n = 0;
    const std::string name = "fz" + std::to_string(n++);
    try {
        const yaml_node root = yaml_node::load_string(fuzz::text_of(data, size), "fuzz.yaml");
        sim_context sim;
        param_context ctx;
        platform p(name.c_str(), root, ctx, sim);
        (void)p.resolved_yaml(ctx);
    } catch (const input_error&) {
    }
    return 0;
}
