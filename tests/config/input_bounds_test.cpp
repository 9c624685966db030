// Issue 51's unbounded inputs, one class per test: a YAML document of nested aliases (a few hundred bytes that
// expand to 10^9 nodes) and a file that never ends (a character device) are refused with one message and exit 2
// by every loader that reads them, where they used to hang; a task file tessel sweep did not write is exit 2, not
// an internal error.
#include <gtest/gtest.h>

#include <string>

#include "models/core/yaml_node.h"
#include "tests/support/cli.h"

using tessel::test::run_tessel;
using tessel::test::write_temp;

namespace {

// Nine levels of lists, each naming the one before it ten times: 10^9 scalars once the aliases are followed.
std::string nested_aliases() {
    std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int level = 1; level < 9; ++level) {
        const std::string prev = "*a" + std::to_string(level - 1);
        std::string items;
        for (int k = 0; k < 10; ++k) items += (k ? ", " : "") + prev;
        text += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [" + items + "]\n";
    }
    return text;
}

}  // namespace

TEST(input_bounds, nested_aliases_are_refused_by_every_loader) {
    const std::string doc = write_temp("tessel_nested_aliases.yaml", nested_aliases());
    const std::string expected = "tessel_nested_aliases.yaml:1:1: the document expands to more than";
    EXPECT_TESSEL_ERROR("run -q -p " + doc + " -w gemm", expected);
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -w " + doc, expected);
    EXPECT_TESSEL_ERROR("sweep " + doc + " --dry-run", expected);
}

TEST(input_bounds, anchors_used_as_intended_still_load) {
    // Three levels of ten (1,111 nodes): far below the budget of 10^6 plus 4 per byte.
    const std::string text =
        "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n";
    const tessel::yaml_node root = tessel::yaml_node::load_string(text, "anchors.yaml");
    EXPECT_EQ(root["c"].size(), 10u);
    EXPECT_EQ(root["c"].items()[9].items()[9].items()[9].scalar("x"), "x");
}

TEST(input_bounds, an_endless_file_is_refused_before_it_is_read) {
    // /dev/zero never ends: each reader checks for a plain file first (and its size) instead of reading forever.
    EXPECT_TESSEL_ERROR("import --scalesim /dev/zero -o /tmp/tessel_never.yaml",
                        "SCALE-Sim topology '/dev/zero' is not a plain file (a device, pipe or socket)");
    const std::string topology = write_temp("tessel_bounds_topology.csv",
                                            "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                                            "Channels, Num Filter, Strides,\nconv1, 8, 8, 3, 3, 4, 8, 1,\n");
    EXPECT_TESSEL_ERROR("import --scalesim " + topology + " --config /dev/zero -o /tmp/tessel_never.yaml",
                        "SCALE-Sim configuration '/dev/zero' is not a plain file");
    EXPECT_TESSEL_ERROR("calibrate -p h100_sxm -m /dev/zero", "measurements file '/dev/zero' is not a plain file");
    EXPECT_TESSEL_ERROR("serve -p gpu/h100_sxm -w llama3-8b --set workload.layers=2 --set serve.trace=/dev/zero",
                        "serve.trace '/dev/zero' is not a plain file");
    EXPECT_TESSEL_ERROR("sweep-task /dev/zero 0", "task file '/dev/zero' is not a plain file");
}

TEST(input_bounds, a_task_file_tessel_did_not_write_is_an_error_not_a_crash) {
    const std::string wrong = write_temp("tessel_bad_tasks.json", R"({"tessel": 1, "timeout_s": "soon"})");
    EXPECT_TESSEL_ERROR("sweep-task " + wrong + " 0", "is not a task file tessel sweep wrote");
    const std::string cut = write_temp("tessel_cut_tasks.json", R"({"tessel": "tessel", "timeout_s": 1)");
    EXPECT_TESSEL_ERROR("sweep-task " + cut + " 0", "not a JSON object");
}

TEST(input_bounds, credit_buffers_are_bounded_before_they_are_allocated) {
    // 2^40 flits per virtual channel used to wrap to nothing; 2^20 took 4 GB before the first packet.
    for (const char* flits : {"1099511627776", "1048576"})
        EXPECT_TESSEL_ERROR(std::string("run -q -g workloads/programs/noc_uniform.yaml --set "
                                        "flow_control=credit --set buffer_flits=") +
                                flits,
                            std::string("credit buffers of ") + flits +
                                " flits x 2 virtual channels x 5 ports x 64 "
                                "routers needs");
}
