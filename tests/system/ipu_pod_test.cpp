// The IPU-POD netlists (platforms/systems/ipu_pod16.yaml, ipu_pod64.yaml) build with GC200 and Bow IPUs, and a
// transfer between IPUs of different machines crosses both dimensions of the IPU-Link torus. Training on them
// is blocked at the chip level (docs/systems.md, "Vendor systems"): this test covers the netlists only.
#include <gtest/gtest.h>

#include <string>

#include "tests/support/cli.h"

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
            const auto r = run_tessel("run -p platforms/systems/" + pod + ".yaml --set ipu=" + ipu + " -g " + g);
            ASSERT_EQ(r.code, 0) << pod << " " << ipu << "\n" << r.out;
            for (const char* link : {"link_ring[*]", "link_rack[*]"}) {
                const size_t at = r.out.find(link);
                ASSERT_NE(at, std::string::npos) << link << "\n" << r.out;
                const std::string row = r.out.substr(at, r.out.find('\n', at) - at);
                EXPECT_EQ(row.find(" 0.0% "), std::string::npos) << "unused: " << row;
            }
        }
}
