// Floorplans people can read: a title, a colour bar with its scale that fits in the picture, a relative scale for
// runs whose units are all about as busy, and a wafer's SVG drawn in blocks instead of a rectangle per PE.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "tests/support/cli.h"
#include "tests/support/files.h"

namespace fs = std::filesystem;
using tessel::test::run_tessel;
using tessel::test::slurp;

namespace {

int svg_width(const std::string& svg) {
    const size_t at = svg.find("width=\"");
    return at == std::string::npos ? 0 : std::stoi(svg.substr(at + 7));
}

std::uint32_t be32(const std::string& s, size_t at) {
    std::uint32_t v = 0;
    for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
    return v;
}

}  // namespace

TEST(floorplan, svg_and_png_carry_a_title_and_a_colour_bar_that_fits) {
    const fs::path d = fs::temp_directory_path() / ("tessel_floorplan_" + std::to_string(getpid()));
    fs::create_directories(d);
    ASSERT_EQ(run_tessel("run -p mesh4x4 -w mlp -q --floorplan " + (d / "f.svg").string()).code, 0);
    const std::string svg = slurp(d / "f.svg");
    EXPECT_NE(svg.find("mesh4x4: tile[x,y] and its links, busy fraction"), std::string::npos);
    EXPECT_NE(svg.find(">0%</text>"), std::string::npos);
    EXPECT_NE(svg.find(">100%</text>"), std::string::npos);
    EXPECT_NE(svg.find(">busy fraction: units as squares, links as bars between them</text>"), std::string::npos);
    // The colour bar runs from x = 10 to 230: the picture is wide enough to hold it on a 4 x 4 grid.
    EXPECT_GE(svg_width(svg), 250);

    // Relative: the ends of the bar are the least and the most busy tile, and the caption says so.
    ASSERT_EQ(run_tessel("run -p mesh4x4 -w mlp -q --floorplan-relative --floorplan " + (d / "r.svg").string()).code,
              0);
    const std::string rel = slurp(d / "r.svg");
    EXPECT_NE(rel.find("(relative scale)"), std::string::npos);
    EXPECT_EQ(rel.find(">100%</text>"), std::string::npos) << "no tile of mlp on mesh4x4 is busy the whole run";

    // PNG: the 4 x 4 grid at 150 pixels per tile, in a white margin with the title above and the bar below.
    ASSERT_EQ(run_tessel("run -p mesh4x4 -w mlp -q --floorplan " + (d / "f.png").string()).code, 0);
    const std::string png = slurp(d / "f.png");
    ASSERT_GT(png.size(), 24u);
    EXPECT_EQ(png.substr(1, 3), "PNG");
    EXPECT_EQ(be32(png, 16), 600u + 20) << "width: the grid and its margins";
    EXPECT_GT(be32(png, 20), 600u + 60) << "height: the title above and the colour bar with its scale below";
    fs::remove_all(d);
}

TEST(floorplan, a_wafer_svg_is_drawn_in_blocks) {
    const fs::path d = fs::temp_directory_path() / ("tessel_floorplan_wafer_" + std::to_string(getpid()));
    fs::create_directories(d);
    ASSERT_EQ(run_tessel("run -p wse2 -w mlp -q --floorplan " + (d / "w.svg").string()).code, 0);
    const std::string svg = slurp(d / "w.svg");
    EXPECT_NE(svg.find("(5 x 5 units per cell)"), std::string::npos);  // 994 rows: blocks of 5 keep 199 a side
    EXPECT_LT(svg.size(), 10u << 20) << "a rectangle per block, not per PE";
    // The MLP keeps every PE under 1% busy: one flat colour on the absolute scale, and the caption says what to do.
    EXPECT_NE(svg.find(": --floorplan-relative spreads the colours)"), std::string::npos);
    fs::remove_all(d);
}

TEST(floorplan, a_mesh_draws_its_links_busy_as_the_statistics_say) {
    const fs::path d = fs::temp_directory_path() / ("tessel_floorplan_links_" + std::to_string(getpid()));
    fs::create_directories(d);
    ASSERT_EQ(
        run_tessel("run -p mesh4x4 -w mlp -q --out " + d.string() + " --floorplan " + (d / "f.svg").string()).code, 0);
    const std::string svg = slurp(d / "f.svg");
    // A 4 x 4 mesh has 2 x 3 x 4 links each way along x and along y: 48 bars, each with its direction.
    size_t links = 0, east = 0;
    int busiest = -1;
    for (size_t at = svg.find("<title>link ("); at != std::string::npos; at = svg.find("<title>link (", at + 1)) {
        ++links;
        const std::string title = svg.substr(at, svg.find("</title>", at) - at);
        east += title.find(") east busy ") != std::string::npos;
        busiest = std::max(busiest, std::stoi(title.substr(title.find(" busy ") + 6)));
    }
    EXPECT_EQ(links, 48u);
    EXPECT_EQ(east, 12u);
    // The busiest bar is the network's busiest link (max_link_utilisation), to the percent the picture prints.
    const std::string csv = slurp(d / "stats.csv");
    const std::string key = "\nmesh4x4.noc,max_link_utilisation,";
    const size_t at = csv.find(key);
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(busiest, static_cast<int>(std::lround(100 * std::stod(csv.substr(at + key.size())))));
    EXPECT_NE(svg.find("links as bars between them"), std::string::npos);
    fs::remove_all(d);
}
