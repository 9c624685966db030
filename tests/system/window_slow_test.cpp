// A window of microbatches extrapolated to the whole iteration (window_test.cpp) on an IPU-POD16 and an SN40L node,
// whose chip mappers take seconds per run (left out of the sanitizer pass). Measured errors (2026-12-07): -0.69%
// (IPU, 4 stages of one layer each on a hidden-128 GPT: a microbatch's pass is 45 us, and the sends between stages
// are a larger share of it) and -0.50% (RDU).
#include "tests/system/tiny_gpt.h"
#include "tests/system/window_check.h"

using tessel::test::check_window;

using tessel::test::k_tiny_gpt;

TEST(window_slow, an_ipu_pod_extrapolates_within_one_percent) {
    check_window("-p platforms/systems/ipu_pod16.yaml " + k_tiny_gpt +
                     "--set workload.layers=4 --set workload.batch=32 --set parallel.dp=4 --set parallel.pp=4 "
                     "--set parallel.microbatch=1",
                 8, 4, 0.01);
}

TEST(window_slow, an_sn40l_node_extrapolates_within_one_percent) {
    check_window("-p platforms/systems/sn40l_node.yaml --set sockets=4 " + k_tiny_gpt +
                     "--set workload.layers=2 --set workload.precision=bf16 --set workload.batch=16 "
                     "--set parallel.dp=2 --set parallel.pp=2 --set parallel.microbatch=1",
                 8, 2, 0.01);
}
