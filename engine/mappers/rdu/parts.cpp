// The rdu mapper: the chip as it sees it. PCUs, PMUs and AGCUs found by capability, their grids in snake
// order, each unit's nearest AGCU, and how a section's loads are balanced over the AGCUs; floorplan outlines.
#include <algorithm>
#include <cstdlib>

#include "engine/mappers/rdu/internal.h"
#include "engine/mappers/toolkit/parts.h"
#include "models/interconnect/interconnect.h"

namespace tessel::rdu {

namespace {

/// Snake order over a w x h grid: column by column, up then down.
std::vector<std::pair<int, int>> snake(int w, int h) {
    std::vector<std::pair<int, int>> out;
    out.reserve(static_cast<size_t>(w * h));
    for (int x = 0; x < w; ++x)
        for (int k = 0; k < h; ++k) out.emplace_back(x, x % 2 == 0 ? k : h - 1 - k);
    return out;
}

}  // namespace

chip discover(const platform& plat, const rdu_mapper::options& o) {
    chip c;
    const platform::group* pg = &toolkit::find_part(
        plat, o.pcus,
        {"rdu mapper", "pcus", "a group of reconfigurable compute units (PCUs)", toolkit::is_reconfigurable_compute});
    const platform::group* mg = &toolkit::find_part(
        plat, o.pmus,
        {"rdu mapper", "pmus", "a group of reconfigurable memory units (PMUs)", toolkit::is_reconfigurable_memory});
    const platform::group* ag = &toolkit::find_part(
        plat, o.agcus,
        {"rdu mapper", "agcus", "a group of AGCUs (DMA engines with memories behind them)", toolkit::fronts_memories});
    if (pg->shape.size() != 2 || mg->shape.size() != 2)
        throw input_error("rdu mapper: PCUs and PMUs must be 2D replicate grids ({x: .., y: ..}); '" + pg->name +
                          "' and '" + mg->name + "' are not");
    c.pcu_group = pg->name;
    c.pmu_group = mg->name;
    c.agcu_group = ag->name;
    c.pcu_w = pg->shape[0];
    c.pcu_h = pg->shape[1];
    c.pmu_w = mg->shape[0];
    c.pmu_h = mg->shape[1];
    const component& pcu = toolkit::first(plat, *pg);
    const component& pmu = toolkit::first(plat, *mg);
    c.pcu = pcu.unit_model();
    c.agcu = &toolkit::first(plat, *ag);
    c.pcu_config = pcu.config_bytes();
    c.pmu_config = pmu.config_bytes();
    c.pmu_capacity = pmu.capacity_bytes();
    c.pmu_bw = pmu.peak_bytes_per_second();
    c.agcu_units = static_cast<int>(c.agcu->unit_count());
    c.agcu_bw = c.agcu->unit_bytes_per_second();
    double tier_bw = 0;
    for (const auto& t : c.agcu->memory_tiers())
        if (o.weights_tier.empty() ? t.peak_bytes_per_second > tier_bw : t.name == o.weights_tier)
            tier_bw = t.peak_bytes_per_second;
    c.memory_bw = tier_bw > 0 ? tier_bw : c.agcu_units * c.agcu_bw;
    // Every unit on one mesh; ports give the distances that placement and AGCU choice use.
    std::uint32_t net = ~0u;
    auto port_of = [&](std::uint32_t id, std::int32_t unit, const std::string& what) {
        const attach_point ap = plat.attachment(id, unit);
        if (!ap.valid()) throw input_error("rdu mapper: " + what + " is not connected to the switch mesh");
        if (net == ~0u) net = ap.net;
        if (ap.net != net)
            throw input_error("rdu mapper: " + what +
                              " is on another network than the PCUs; all units must share one mesh");
        const std::vector<int> shape = plat.net(net).port_shape();
        if (shape.size() != 2) throw input_error("rdu mapper: the units' network must be a 2D mesh");
        return std::make_pair(static_cast<int>(ap.port) % shape[0], static_cast<int>(ap.port) / shape[0]);
    };
    port_of(pg->ids.front(), 0, c.pcu_group + "[0,0]");  // the PCUs' mesh is the one
    std::vector<std::pair<int, int>> agcu_port;
    for (int u = 0; u < c.agcu_units; ++u)
        agcu_port.push_back(port_of(ag->ids.front(), u, c.agcu_group + "[" + std::to_string(u) + "]"));
    c.link_bw = plat.net(net).link_bytes_per_second();
    c.packet_bytes = plat.net(net).packet_bytes();
    auto nearest = [&](std::pair<int, int> p) {
        int best = 0, bd = -1;
        for (int u = 0; u < c.agcu_units; ++u) {
            const int d = std::abs(agcu_port[static_cast<size_t>(u)].first - p.first) +
                          std::abs(agcu_port[static_cast<size_t>(u)].second - p.second);
            if (bd < 0 || d < bd) bd = d, best = u;
        }
        return best;
    };
    for (const auto& [x, y] : snake(c.pcu_w, c.pcu_h)) {
        const std::uint32_t id = pg->ids[static_cast<size_t>(y * c.pcu_w + x)];
        c.pcu_ids.push_back(id);
        c.pcu_xy.emplace_back(x, y);
        c.pcu_agcu.push_back(nearest(port_of(id, 0, plat.name_of(endpoint{id, 0, 0}))));
    }
    for (const auto& [x, y] : snake(c.pmu_w, c.pmu_h)) {
        const std::uint32_t id = mg->ids[static_cast<size_t>(y * c.pmu_w + x)];
        c.pmu_ids.push_back(id);
        c.pmu_xy.emplace_back(x, y);
        const std::pair<int, int> at = port_of(id, 0, plat.name_of(endpoint{id, 0, 0}));
        c.pmu_agcu.push_back(nearest(at));
        std::vector<int> order(static_cast<size_t>(c.agcu_units));
        for (int u = 0; u < c.agcu_units; ++u) order[static_cast<size_t>(u)] = u;
        auto dist = [&](int u) {
            return std::abs(agcu_port[static_cast<size_t>(u)].first - at.first) +
                   std::abs(agcu_port[static_cast<size_t>(u)].second - at.second);
        };
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return dist(a) < dist(b); });
        c.pmu_agcus.push_back(std::move(order));
    }
    return c;
}

std::vector<int> balance_loads(const chip& c, const std::vector<double>& bytes) {
    double total = 0;
    for (double b : bytes) total += b;
    const double share = total / c.agcu_units;
    std::vector<double> carried(static_cast<size_t>(c.agcu_units), 0.0);
    std::vector<int> out(bytes.size(), -1);
    for (size_t u = 0; u < bytes.size(); ++u) {
        if (bytes[u] <= 0) continue;
        const auto& order = c.pmu_agcus[u];
        int pick = -1;
        for (int a : order)
            if (carried[static_cast<size_t>(a)] == 0 ||
                carried[static_cast<size_t>(a)] + bytes[u] <= share * (1 + 1e-9)) {
                pick = a;
                break;
            }
        if (pick < 0) {
            pick = order.front();
            for (int a : order)
                if (carried[static_cast<size_t>(a)] < carried[static_cast<size_t>(pick)]) pick = a;
        }
        carried[static_cast<size_t>(pick)] += bytes[u];
        out[u] = pick;
    }
    return out;
}

int pow2_floor(double v) {
    int p = 1;
    while (p * 2 <= v) p *= 2;
    return p;
}

std::vector<floorplan_region> run_regions(const std::vector<std::pair<int, int>>& xy, int h, int a, int b,
                                          const std::string& label) {
    std::vector<floorplan_region> out;
    int i = a;
    while (i < b) {
        const int x = xy[static_cast<size_t>(i)].first;
        int j = i;
        int y0 = xy[static_cast<size_t>(i)].second, y1 = y0;
        while (j < b && xy[static_cast<size_t>(j)].first == x) {
            y0 = std::min(y0, xy[static_cast<size_t>(j)].second);
            y1 = std::max(y1, xy[static_cast<size_t>(j)].second);
            ++j;
        }
        // Merge with the previous rectangle when both cover whole columns.
        if (!out.empty() && y0 == 0 && y1 == h - 1 && out.back().y0 == 0 && out.back().y1 == h && out.back().x1 == x)
            out.back().x1 = x + 1;
        else
            out.push_back(floorplan_region{label, x, y0, x + 1, y1 + 1});
        i = j;
    }
    return out;
}

std::string region_text(const std::string& group, const std::vector<floorplan_region>& rs) {
    std::string s;
    for (const auto& r : rs) {
        if (!s.empty()) s += " ";
        auto range = [](int a, int b) {
            return b - a == 1 ? std::to_string(a) : std::to_string(a) + ".." + std::to_string(b - 1);
        };
        s += group + "[" + range(r.x0, r.x1) + "," + range(r.y0, r.y1) + "]";
    }
    return s;
}

}  // namespace tessel::rdu
