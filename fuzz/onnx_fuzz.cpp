// libFuzzer harness: the ONNX importer (protobuf parse, libonnx shape inference, constant folding, every op's
// import and shape inference, costs). The input is written to a scratch file, as import_onnx reads a path.
#include "engine/workload/onnx_import.h"
#include "fuzz/fuzz_common.h"

TESSEL_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tessel;
    fuzz::init_once();
    const std::string path = fuzz::scratch_file(data, size, ".onnx");
    try {
        onnx_import_options opt;
        const onnx_import_result r = import_onnx(path, opt);
        (void)r.graph.total();
    } catch (const input_error&) {
    }
    return 0;
}
