// What bounds a GPU or TPU run, from the time-weighted bound of its kernels (issue: "bound by" was always compute,
// with the tensor unit 100% busy, even for DRAM-bound decode or launch-bound batch 1), and tensor-unit utilisation
// as the time the tensor cores work, not the time kernels occupy the GPU.
#include <gtest/gtest.h>

#include "tests/support/run_summary.h"

using namespace tessel::test;

namespace {

const nlohmann::json& resource(const nlohmann::json& s, const std::string& name) {
    for (const auto& r : s["resources"])
        if (r["name"] == name) return r;
    ADD_FAILURE() << "no resource " << name;
    static const nlohmann::json none = nlohmann::json::object();
    return none;
}

std::string gemm(int m, int n, int k) {
    return " -w gemm --set workload.m=" + std::to_string(m) + " --set workload.n=" + std::to_string(n) +
           " --set workload.k=" + std::to_string(k);
}

}  // namespace

TEST(bound_by, a_large_gemm_is_compute_bound_and_its_tensor_cores_work_at_the_sustained_rate) {
    const nlohmann::json s = run_summary("-p gpu/h100_sxm" + gemm(8192, 8192, 8192));
    EXPECT_EQ(s["bound_by"], "compute");
    // platforms/gpu/h100_sxm.yaml: 132 SMs x 2048 bf16 MACs per cycle at 1.83 GHz, tensor_efficiency 0.7682 (fit):
    // 8192^3 MACs / (4.947e14 MAC/s x 0.7682) = 1.4465 ms of tensor-core work.
    const double expected = 8192.0 * 8192.0 * 8192.0 / (132.0 * 2048 * 1.83e9 * 0.7682);
    EXPECT_NEAR(resource(s, "gpu.tensor")["busy_max_s"].get<double>(), expected, expected * 1e-9);
    EXPECT_LT(expected, s["sim_time_s"].get<double>());
}

TEST(bound_by, a_matrix_vector_product_is_memory_bound_with_idle_tensor_cores) {
    // 1 x 8192 x 8192 bf16: 128 MiB of weights read once for 67 MFLOP.
    const nlohmann::json s = run_summary("-p gpu/h100_sxm" + gemm(1, 8192, 8192));
    EXPECT_EQ(s["bound_by"], "memory");
    EXPECT_LT(resource(s, "gpu.tensor")["utilisation_max"].get<double>(), 0.01);
    EXPECT_GT(resource(s, "gpu.hbm")["utilisation_max"].get<double>(), 0.5);
}

TEST(bound_by, a_tiny_kernel_is_latency_bound) {
    // 16 x 16 x 16: the 1.662 us launch overhead is longer than the kernel's body.
    const nlohmann::json s = run_summary("-p gpu/h100_sxm" + gemm(16, 16, 16));
    EXPECT_EQ(s["bound_by"], "latency");
    EXPECT_EQ(s["mapping"]["kernels"][0]["bound"], "overhead");
    const nlohmann::json t = run_summary("-p tpu/tpu_v4" + gemm(16, 16, 16));
    EXPECT_EQ(t["bound_by"], "latency");
}
