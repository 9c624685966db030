// A sample of k and k + 1 layers per pipeline chunk, the model's other layers counted by the difference (what
// `tessel plan --estimate-layers` estimates from), against the whole model on a GPU system (1F1B, interleaved,
// tensor parallel), a TPU pod and a GroqRack. The IPU, RDU and wafer cases are layer_sample_slow_test.cpp (their
// chip mappers take seconds per run). Measured errors (2026-12-07): GPU -0.010% (tp x pp), -0.33% (interleaved),
// +1.09% (data parallel alone: a layer of the 12 costs 4.48 ms, of the first two 4.56), TPU +0.001%, GroqRack
// -0.086%. The GPT here has 2048-wide layers: a sample of narrower ones fits a GPU's L2 and runs each layer faster
// than the model does (GPT-2 small: 1.58 ms a layer from one and two layers, 1.65 ms from six to twelve).
#include "tests/system/layer_sample_check.h"

using tessel::test::check_layer_sample;

namespace {

const std::string k_dgx =
    "-p platforms/systems/dgx_h100.yaml -w gpt2 --set workload.training=adam --set workload.batch=32 "
    "--set workload.hidden=2048 --set workload.heads=16 ";
const std::string k_small =
    "-w gpt2 --set workload.hidden=256 --set workload.heads=4 --set workload.seq=128 --set workload.vocab=1024 "
    "--set workload.training=adam ";

}  // namespace

TEST(layer_sample, gpu_plans_count_their_layers_within_one_and_a_half_percent) {
    // 12 layers from 2 and 4 (pp 2), from 4 and 8 (pp 2 x interleave 2).
    check_layer_sample(
        k_dgx + "--set parallel.dp=2 --set parallel.pp=2 --set parallel.tp=2 --set parallel.microbatch=2", 12, 2, 1,
        0.015);
    check_layer_sample(k_dgx +
                           "--set parallel.dp=4 --set parallel.pp=2 --set parallel.interleave=2 "
                           "--set parallel.schedule=interleaved_1f1b --set parallel.microbatch=1",
                       12, 4, 1, 0.015);
    // One stage, data parallel: the gradient all-reduce grows with the layers too.
    check_layer_sample(k_dgx + "--set parallel.dp=8 --set parallel.microbatch=1", 12, 1, 1, 0.015);
}

TEST(layer_sample, a_tpu_pod_and_a_groqrack_count_their_layers_within_half_a_percent) {
    check_layer_sample("-p platforms/systems/tpu_v4_pod.yaml --set chips=16 " + k_small +
                           "--set workload.batch=64 --set parallel.dp=4 --set parallel.tp=2 --set parallel.pp=2 "
                           "--set parallel.microbatch=2",
                       8, 2, 1, 0.005);
    check_layer_sample("-p platforms/systems/groqrack.yaml --set nodes=2 " + k_small +
                           "--set workload.context=128 --set workload.precision=fp16 --set workload.batch=32 "
                           "--set parallel.dp=8 --set parallel.pp=2 --set parallel.microbatch=1",
                       8, 2, 1, 0.005);
}
