// tessel port: the porting report names what the platform models and what each op type costs there, whether the
// model runs and fits (and if not, the smallest parallel split that does), where its time goes, and what to
// change with the effect measured; a blocker is a finding (exit 0), bad input still an error (exit 2).
#include <gtest/gtest.h>

#include "tests/support/cli.h"

using tessel::test::run_tessel;

namespace {

/// The rest of the line after `label`.
std::string after(const std::string& out, const std::string& label) {
    const size_t at = out.find(label);
    if (at == std::string::npos) return "";
    return out.substr(at + label.size(), out.find('\n', at) - at - label.size());
}

}  // namespace

TEST(port, a_model_that_runs_gets_its_support_time_and_advice) {
    const auto r = run_tessel("port resnet50 -p h100_sxm");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("ops        175 ops of 8 types"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("support    every op type is modelled"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("model      25.56 M parameters"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("runs       yes: 449.7 us per run"), std::string::npos) << r.out;
    // By type: 53 convolutions are 8.174 of the 8.217 GFLOP (tessel graph info resnet50), on the tensor cores.
    const std::string conv = after(r.out, "           conv2d ");
    EXPECT_NE(conv.find(" 53  gpu (matrix) "), std::string::npos) << r.out;
    EXPECT_NE(conv.find(" 99.5% "), std::string::npos) << conv;
    EXPECT_NE(r.out.find("           flatten                    1  no work (a view)"), std::string::npos) << r.out;
    // The longest: layer 4's 3x3 convolutions (49 output rows, K = 4608, one implicit-GEMM kernel without split-K).
    EXPECT_NE(r.out.find("time       longest ops (first step to last, share of the run): layer4.0.conv2 "),
              std::string::npos)
        << r.out;
    // ResNet-50's weights (25.56 M fp16 parameters, 51.11 MB: tessel graph info) and its batchnorm statistics
    // (mean and variance of 26,560 channels, 0.11 MB) against the H100's 80 GB.
    EXPECT_NE(r.out.find("fit        yes: weights and state 51.22 MB of 80 GB"), std::string::npos) << r.out;
    // The batch-8 effect it quotes is what tessel run says at batch 8.
    const auto b8 = run_tessel("run -p h100_sxm -w resnet50 --set workload.batch=8");
    const std::string throughput = after(b8.out, "throughput ");
    ASSERT_FALSE(throughput.empty()) << b8.out;
    EXPECT_NE(r.out.find("at batch 8: " + throughput.substr(0, throughput.find(' ')) + " samples/s"), std::string::npos)
        << r.out << "\n"
        << throughput;
}

TEST(port, a_model_that_does_not_fit_says_why_and_what_to_do) {
    const auto r = run_tessel("port bert-large -p groqchip1");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("runs       no: workload 'bert-large' does not fit on 'groqchip1'"), std::string::npos)
        << r.out;
    // 670.3 MB of weights over the 220 MiB of MEM slices: ceil(670.3 / 230.7) = 3 chips.
    EXPECT_NE(r.out.find("fit        no: weights and state 670.3 MB against 220 MiB per chip: at least 3 chips"),
              std::string::npos)
        << r.out;
    // Inference advice: the split of its forward pass over the chip's system, not a training plan.
    EXPECT_NE(r.out.find("split its forward pass over groqrack by tensor and pipeline parallelism: tessel run -p "
                         "groqrack -w bert-large --set parallel.tp=T --set parallel.pp=P, T x P at least 3"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("workload.training"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("suggest    the model does not fit one chip: split it over a system (a parallel plan"),
              std::string::npos)
        << r.out;
    // The GroqChip names the system that models its chip-to-chip links.
    EXPECT_NE(r.out.find("systems/groqrack runs a rack of them over their chip-to-chip links"), std::string::npos)
        << r.out;
}

TEST(port, a_language_model_that_does_not_fit_is_served_split_over_the_system) {
    const auto r = run_tessel("port llama2-70b -p a100_sxm");
    ASSERT_EQ(r.code, 0) << r.out;
    // 138 GB of weights against 80 GB: ceil(138 / 80) = 2 chips.
    EXPECT_NE(r.out.find("fit        no: weights and state 138 GB against 80 GB per chip: at least 2 chips"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("tessel serve -p dgx_a100 -w llama2-70b --set parallel.tp=T --set parallel.pp=P, T x P at "
                         "least 2 (docs/serving.md)"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("tessel plan"), std::string::npos) << r.out;
}

TEST(port, training_that_does_not_fit_gets_the_smallest_split_that_does) {
    // Llama-2-7B with Adam: 6.74 G parameters x 16 bytes (fp16 weights and gradients, fp32 master and moments) is
    // 108 GB before activations: more than one 80 GB A100, so at least a 2-chip split.
    const auto r = run_tessel(
        "port llama2-7b -p a100_sxm --set workload.training=adam --set workload.batch=8 --set workload.seq=2048");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("model      6738 M parameters"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("runs       no: "), std::string::npos) << r.out;
    const std::string split = after(r.out, "fit        no: the smallest split that fits is on 2 chips: ");
    ASSERT_FALSE(split.empty()) << r.out;
    const double per_chip = std::stod(split.substr(split.find(": ") + 2));
    EXPECT_GT(per_chip, 108.0 / 2);  // half the weights and state, plus activations
    EXPECT_LE(per_chip, 80.0);
    EXPECT_NE(r.out.find("tessel plan -p dgx_a100 -w llama2-7b --set workload.training=adam --set workload.batch=8"),
              std::string::npos)
        << r.out;
}

TEST(port, a_data_type_the_chip_lacks_gets_the_ones_it_runs_measured) {
    const auto r = run_tessel("port resnet50 -p tpu_v4 --set workload.precision=fp32");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("runs       no: tpu: the MXUs do not multiply fp32"), std::string::npos) << r.out;
    // The fp16 it measures runs in bf16 on the MXUs, and the report of that model says so.
    const auto fp16 = run_tessel("port resnet50 -p tpu_v4");
    EXPECT_NE(fp16.out.find("note       fp16 ops run in bf16 (mapper.float16_as)"), std::string::npos) << fp16.out;
    const auto bf16 = run_tessel("run -p tpu_v4 -w resnet50 --set workload.precision=bf16");
    const std::string sim = after(bf16.out, "simulated  ");
    EXPECT_NE(r.out.find("measured: bf16 " + sim.substr(0, sim.find("  (")) + " per run"), std::string::npos)
        << r.out << "\n"
        << sim;
}

TEST(port, an_op_no_platform_models_is_named_with_a_replacement) {
    const auto r = run_tessel("port workloads/porting/custom_op.yaml -p mesh4x4");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("support    1 op type(s) tessel does not model, run as memory traffic only: GridSample x1"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("           GridSample                 1  memory traffic only"), std::string::npos) << r.out;
    // Its one op, d, spans the share of the run the time line gives it.
    const std::string time = after(r.out, "time       longest ops (first step to last, share of the run): ");
    const std::string d = time.substr(time.find("d ") + 2);
    EXPECT_NE(r.out.find("as memory traffic alone it spans " + d.substr(0, d.find('%') + 1) + " of the run"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("suggest    replace GridSample (x1) with ops tessel models"), std::string::npos) << r.out;
    EXPECT_TESSEL_ERROR("port no_such_model -p mesh4x4", "no_such_model");
}
