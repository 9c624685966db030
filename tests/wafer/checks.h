// Checks every wafer mapping must pass (tests/wafer): nothing over a PE's SRAM, every weight placed, each op's
// compute inside its own rectangle (layer-pipelined: rectangles disjoint), every MAC of the graph computed once.
// They read the program alone (its placements and its steps' spans): mapping sets nothing on the PE array.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/mappers/mapper.h"
#include "models/core/grid_span.h"
#include "models/spatial/wafer_pe_array.h"

namespace tessel::test {

/// The checks every wafer mapping must pass: nothing over a PE's SRAM, every weight placed, each op's compute
/// inside its own rectangle (pipelined: rectangles disjoint), every MAC of the graph computed exactly once.
inline void check_wafer_mapping(const mapping& m, const workload_graph& g, const wafer_pe_array& pes, double reserved) {
    const double cap = static_cast<double>(pes.capacity_bytes());
    // The program's placements, tallied as the PE array will tally them when the run begins (add() throws for a
    // PE over its SRAM).
    sram_tally sram(pes.width(), pes.height(), pes.capacity_bytes(), pes.path());
    for (const placement& pl : m.prog.placements) {
        ASSERT_EQ(pl.comp, pes.id());
        EXPECT_NO_THROW(sram.add(pl.data)) << pl.data.what;
    }
    EXPECT_GT(sram.max_used(), 0u) << "nothing placed";
    EXPECT_LE(static_cast<double>(sram.max_used()), cap);
    const std::string mode = m.details.value("mode", std::string());
    double weights = 0;
    for (const auto& t : g.tensors())
        if ((t.role == tensor_role::weight || t.role == tensor_role::state) && t.alias_of < 0 && !t.consumers.empty())
            weights += static_cast<double>(t.bytes());
    std::map<std::string, floorplan_region> region_of;
    if (mode == "layer-pipelined") {
        double placed = 0;
        for (const auto& d : m.details["ops"]) {
            const double per_pe = d["bytes_per_pe"].get<double>();
            EXPECT_LE(per_pe, cap - reserved) << d["op"];
            placed += d["stationary_bytes_per_pe"].get<double>() * d["pes"].get<double>();
        }
        // Every weight is on some PE (a weight two ops read, like a tied LM head, is held by both).
        EXPECT_GE(placed, weights * (1 - 1e-9)) << "weights were left off the wafer";
        std::vector<int> owner(static_cast<size_t>(pes.pe_count()), -1);
        int index = 0;
        for (const auto& [group, r] : m.regions) {
            EXPECT_EQ(group, "pe");
            ASSERT_GE(r.x0, 0);
            ASSERT_GE(r.y0, 0);
            ASSERT_LE(r.x1, pes.width());
            ASSERT_LE(r.y1, pes.height());
            for (int y = r.y0; y < r.y1; ++y)
                for (int x = r.x0; x < r.x1; ++x) {
                    int& o = owner[static_cast<size_t>(pes.unit_of(x, y))];
                    EXPECT_EQ(o, -1) << r.label << " overlaps another op at (" << x << "," << y << ")";
                    o = index;
                }
            region_of[r.label] = r;
            ++index;
        }
    }
    double macs = 0;
    for (std::uint32_t i = 0; i < m.prog.size(); ++i) {
        const step& st = m.prog.steps[i];
        if (st.kind != step_kind::compute) continue;
        ASSERT_EQ(st.at.comp, pes.id());
        const grid_span* sp = payload_as<grid_span>(m.prog.payload_of(i));
        const grid_rect s = sp ? sp->rect : pes.rect_of(st.at.unit);
        ASSERT_FALSE(s.empty());
        ASSERT_TRUE(s.contains(pes.rect_of(st.at.unit))) << "a span step names a PE outside its span";
        macs += m.prog.works[st.work].macs * static_cast<double>(s.area());
        if (mode == "layer-pipelined") {
            const auto it = region_of.find(m.prog.op_names[st.op]);
            ASSERT_NE(it, region_of.end()) << m.prog.op_names[st.op];
            const floorplan_region& r = it->second;
            EXPECT_TRUE(s.x0 >= r.x0 && s.x1 <= r.x1 && s.y0 >= r.y0 && s.y1 <= r.y1)
                << m.prog.op_names[st.op] << " computes outside its rectangle";
        }
    }
    EXPECT_NEAR(macs, g.total().macs, 1e-9 * g.total().macs);
}

}  // namespace tessel::test
