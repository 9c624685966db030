// SCALE-Sim topologies run as workloads: conv layers as convolutions with SCALE-Sim's output size, GEMM layers
// as matrix products, a configuration's array as platform settings, and bad rows named by file:line:column.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/cli.h"

using tessel::test::run_tessel;
using tessel::test::write_temp;

namespace {

double flops_of(const std::string& topology) {
    const auto r = run_tessel("run -p systolic -w " + topology + " --json");
    EXPECT_EQ(r.code, 0) << r.out;
    return r.code == 0 ? nlohmann::json::parse(r.out)["flops"].get<double>() : 0.0;
}

}  // namespace

TEST(scalesim_topology, conv_layers_take_scalesim_shapes) {
    // MACs per layer as SCALE-Sim maps them (M = output pixels, N = filters, K = window x channels), its output
    // size ceil((in - filter + stride) / stride):
    //   Conv1 32x32, 3x3 over 3 channels, 32 filters, stride 1: 30 x 30 = 900 pixels x 32 x 27 = 777,600
    //   Conv2 32x32, 3x3 over 32 channels, 64 filters, stride 2: ceil(31 / 2) = 16, 256 x 64 x 288 = 4,718,592
    //         (PyTorch would give 15 x 15: the far edges are padded)
    //   Conv3_DP depthwise 16x16, 3x3, 64 channels: 14 x 14 = 196 pixels x 9 per channel x 64 = 112,896
    //   Conv4 14x14, 1x1 over 64 channels, 128 filters: 196 x 128 x 64 = 1,605,632
    EXPECT_DOUBLE_EQ(flops_of("workloads/scalesim/small_cnn.csv"), 2.0 * (777600 + 4718592 + 112896 + 1605632));
}

TEST(scalesim_topology, gemm_layers_are_matrix_products) {
    const std::string t = write_temp("tessel_scalesim_gemm.csv", "Layer, M, N, K,\ng1, 64, 32, 16,\ng2, 8, 8, 8,\n");
    EXPECT_DOUBLE_EQ(flops_of(t), 2.0 * (64 * 32 * 16 + 8 * 8 * 8));
}

TEST(scalesim_topology, import_writes_the_workload_and_the_arrays_settings) {
    const auto r =
        run_tessel("import --scalesim workloads/scalesim/small_cnn.csv --config workloads/scalesim/small_cnn.cfg");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(
        r.out.find("- {name: Conv2, op: conv2d, inputs: [Conv2_in, Conv2_w], stride: [2, 2], padding: [0, 0, 1, 1]}"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("groups: 64"), std::string::npos) << r.out;
    EXPECT_NE(
        r.out.find("--set tile.pe.rows=32 --set tile.pe.cols=32 --set tile.pe.dataflow=ws --set tile.pe.scalesim=true"),
        std::string::npos)
        << r.out;
}

TEST(scalesim_topology, bad_rows_are_named_by_file_line_and_column) {
    const std::string header =
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n";
    struct bad {
        std::string text, expect;
    };
    for (const bad& c : std::vector<bad>{
             {header + "c1, 32, 32, 3, 3, 3, 3x, 1,\n",
              ":2:22: '3x' is not a positive whole number (column 'num filter')"},
             {header + "c1, 32, 32, 3, 3, 3,\n", ":2:"},
             {header + "c1, 8, 8, 9, 3, 3, 4, 1,\n", "a 9 x 3 filter does not fit a 8 x 8 input"},
             {header + "c1, 8, 8, 3, 3, 3, 4, 1,\nc1, 8, 8, 3, 3, 3, 4, 1,\n", ":3:1: two layers are named 'c1'"},
             {"name, a, b,\n", "not a SCALE-Sim topology header"},
             {header, "has a header but no layers"},
             // Found by fuzz/scalesim_fuzz.cpp: strtoll clamped a size past 2^63 to 2^63 - 1, and a depthwise
             // layer's channels x filters then overflowed (fuzz/regressions/scalesim/).
             {header + "c1, 8, 8, 3, 3, 3, 18888888888888888888888, 1,\n",
              ":2:20: '18888888888888888888888' is more than 2^53 (column 'num filter')"},
             {header + "c1_DP, 8, 8, 3, 3, 4294967296, 4294967296, 1,\n", "layer 'c1_DP': channels x filters"},
         }) {
        const std::string t = write_temp("tessel_scalesim_bad.csv", c.text);
        const auto r = run_tessel("run -p systolic -w " + t);
        EXPECT_EQ(r.code, 2) << c.text << "\n" << r.out;
        EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.text << "\n" << r.out;
    }
    const std::string cfg = write_temp("tessel_scalesim_bad.cfg",
                                       "[architecture_presets]\nArrayHeight: 32\nArrayWidth: 32\nDataflow : xs\n");
    const auto r = run_tessel("import --scalesim workloads/scalesim/small_cnn.csv --config " + cfg);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find(":4:12: Dataflow must be os, ws or is, not 'xs'"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("workload: small_cnn"), std::string::npos)
        << "nothing is written before both inputs are checked";
    EXPECT_TESSEL_ERROR("import workloads/scalesim/small_cnn.csv --scalesim workloads/scalesim/small_cnn.csv",
                        "not both");
}
