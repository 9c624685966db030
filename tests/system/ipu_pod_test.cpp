// The IPU-POD netlists (platforms/systems/ipu_pod16.yaml, ipu_pod64.yaml) build with GC200 and Bow IPUs, and a
// transfer between IPUs of different machines crosses both dimensions of the IPU-Link torus; their streaming
// memories' stream level of detail agrees with the bank level (docs/systems.md, "Level of detail").
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli.h"
#include "tests/support/run_summary.h"

using tessel::test::run_tessel;
using tessel::test::write_temp;

TEST(ipu_pod, pods_build_and_route_over_both_torus_dimensions) {
    // IPU 0 of machine 0 to IPU 1 of machine 1 (ipu[5]): one hop round the machine's ring, one to the next machine.
    const std::string g = write_temp(
        "tessel_ipu_pod.yaml",
        "program: p\nsteps:\n"
        "  - {id: a, transfer: {from: \"ipu[0].streaming_memory\", to: \"ipu[5].streaming_memory\", bytes: 16MiB}}\n");
    for (const std::string pod : {"ipu_pod16", "ipu_pod64"})
        for (const std::string ipu : {"gc200", "bow"}) {
            std::string args = "run -p platforms/systems/";
            args += pod;
            args += ".yaml --set ipu=";
            args += ipu;
            args += " -g ";
            args += g;
            const auto r = run_tessel(args);
            ASSERT_EQ(r.code, 0) << pod << " " << ipu << "\n" << r.out;
            for (const char* link : {"link_ring[*]", "link_rack[*]"}) {
                const size_t at = r.out.find(link);
                ASSERT_NE(at, std::string::npos) << link << "\n" << r.out;
                const std::string row = r.out.substr(at, r.out.find('\n', at) - at);
                EXPECT_EQ(row.find(" 0.0% "), std::string::npos) << "unused: " << row;
            }
        }
}

TEST(ipu_pod, streaming_memory_at_stream_level_agrees_with_the_bank_level) {
    // A 2-layer BERT-large training iteration on 4 IPUs (data parallel): every weight and Adam state tensor streams
    // from each IPU's streaming memory through its gateway. The system files time that DDR4 as streams; the chip
    // file's bank level gives nearly the same iteration, since the gateway, not the DDR, bounds the streaming.
    const std::string args =
        "-p platforms/systems/ipu_pod16.yaml --set machines=1 -w bert-large --set workload.layers=2 "
        "--set workload.training=adam --set workload.batch=16 --set parallel.dp=4 --set parallel.microbatch=4";
    const auto stream = tessel::test::run_summary(args);
    const auto banks = tessel::test::run_summary(args + " --set ipu.streaming_memory.detail=banks");
    ASSERT_FALSE(stream.is_null());
    ASSERT_FALSE(banks.is_null());
    const double s = stream["sim_time_s"].get<double>(), b = banks["sim_time_s"].get<double>();
    EXPECT_NE(s, b) << "the level of detail did not reach the streaming memory";
    EXPECT_NEAR(s, b, 0.01 * b);
    EXPECT_EQ(stream["physical_bound_resource"], "ipu[0].gateway");
}
