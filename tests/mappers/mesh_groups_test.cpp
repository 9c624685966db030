// The mesh mapper on a mesh with two groups of tiles (12 matrix tiles and a column of 4 vector tiles): every op
// runs on the group whose tiles, sharing it evenly, finish it first at peak rate, so the GEMMs go to the matrix
// tiles and the ReLUs to the vector tiles, and neither group is left idle (the mapper used to take the first group
// and leave the other idle without a word). `mapper.tiles` still names one group to use alone.
#include <gtest/gtest.h>

#include "tests/support/cli.h"
#include "tests/support/run_summary.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace {

// mesh4x4 (docs/getting-started.md) with its last column of tiles swapped for vector tiles: 16 MACs but 256 lanes.
const std::string k_platform = R"(platform: mesh_two_groups
clock: 1GHz
components:
  mtile:
    kind: tile
    replicate: {x: 3, y: 4}
    params:
      pe: {macs_per_cycle: {fp16: 256}, vector_lanes: 16, issue_overhead: 4cycles}
      sram: {capacity: 256KiB, banks: 4, bank_bandwidth: 32B/cycle, latency: 2cycles}
  vtile:
    kind: tile
    replicate: {y: 4}
    params:
      pe: {macs_per_cycle: {fp16: 16}, vector_lanes: 256, issue_overhead: 4cycles}
      sram: {capacity: 256KiB, banks: 4, bank_bandwidth: 32B/cycle, latency: 2cycles}
  noc:
    kind: mesh_noc
    params: {width: 4, height: 4, link_bandwidth: 32B/cycle, router_latency: 2cycles, link_latency: 1cycle,
             packet_bytes: 256B, header_bytes: 16B}
  hbm:
    kind: hbm
    preset: hbm2e_stack
    params: {channels: 4, capacity: 8GiB}
connections:
  - mtile[x,y] -> noc[x,y]
  - vtile[y] -> noc[3,y]
  - hbm[c] -> noc[0,c]
mapper:
  impl: mesh
)";

std::string platform_file() { return tessel::test::write_temp("tessel_mesh_two_groups.yaml", k_platform); }

// MACs and element operations the group's PEs did.
double work_of(const nlohmann::json& summary, const std::string& group) {
    return tessel::test::resource_work(summary, group + "[*].pe");
}

}  // namespace

TEST(mesh_groups, gemms_run_on_the_matrix_tiles_and_elementwise_ops_on_the_vector_tiles) {
    const std::string run = "-p " + platform_file() + " -w workloads/mlp.yaml";
    const auto s = tessel::test::run_summary(run);
    ASSERT_TRUE(s.contains("resources")) << s.dump();
    // Hand-computed choice, per tile at peak: fc (64x1024x1024 MACs) on 12 matrix tiles 64*1024*1024/(12*256)
    // = 21.8 us, on 4 vector tiles /(4*16) = 1049 us; relu (64*1024 element ops) on the matrix tiles
    // 65536/(12*16) = 341 ns, on the vector tiles 65536/(4*256) = 64 ns.
    // The three ReLUs (3 x 65536 element operations) on the vector tiles, and nothing else.
    EXPECT_EQ(work_of(s, "vtile"), 3 * 65536.0);
    EXPECT_GT(work_of(s, "mtile"), 4 * 64.0 * 1024 * 1024);
    const auto r = tessel::test::run_tessel("run " + run + " --out " +
                                            (std::filesystem::temp_directory_path() / "mesh_groups_out").string());
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("tile groups mtile (12), vtile (4): each op runs on the group that finishes it first"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("fc1: matmul 64x1024x1024 on"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("tiles of 'mtile'"), std::string::npos) << r.out;
}

TEST(mesh_groups, naming_one_group_uses_it_alone) {
    const auto s =
        tessel::test::run_summary("-p " + platform_file() + " -w workloads/mlp.yaml --set mapper.tiles=mtile");
    ASSERT_TRUE(s.contains("resources")) << s.dump();
    EXPECT_GT(work_of(s, "mtile"), 0);
    EXPECT_EQ(work_of(s, "vtile"), 0);
    // Both groups together are no slower than the matrix tiles alone: the ReLUs move to faster vector tiles.
    const auto both = tessel::test::run_summary("-p " + platform_file() + " -w workloads/mlp.yaml");
    EXPECT_LE(both["sim_time_s"].get<double>(), s["sim_time_s"].get<double>());
}
