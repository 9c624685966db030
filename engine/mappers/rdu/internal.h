// What the rdu mapper's files share: parts.cpp (the chip as the mapper sees it), plan.cpp (stages, sections
// and units: the plan), emit.cpp (the program) and options.cpp (options and the registration).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "engine/mappers/rdu/rdu_mapper.h"
#include "models/core/compute_model.h"

namespace tessel::rdu {

// ---------------------------------------------------------------------------------------------------------
// The chip as the mapper sees it.

struct chip {
    std::string pcu_group, pmu_group, agcu_group;
    int pcu_w = 0, pcu_h = 0, pmu_w = 0, pmu_h = 0;
    std::vector<std::uint32_t> pcu_ids, pmu_ids;      // snake order
    std::vector<std::pair<int, int>> pcu_xy, pmu_xy;  // grid coordinates, snake order
    std::vector<int> pcu_agcu, pmu_agcu;              // nearest AGCU unit, snake order
    std::vector<std::vector<int>> pmu_agcus;          // per PMU (snake order): every AGCU, nearest first
    const compute_model* pcu = nullptr;               // one PCU's timing rules
    std::uint64_t pcu_config = 0, pmu_config = 0, pmu_capacity = 0;
    double pmu_bw = 0;
    const component* agcu = nullptr;  // the AGCUs: DMA engines with the memories behind them
    int agcu_units = 0;
    double agcu_bw = 0;
    double link_bw = 0;
    std::uint64_t packet_bytes = 0;  // the mesh's own (the fine form's packets)
    double memory_bw = 0;  // the memory holding weights and configurations (the fastest, or mapper.weights_tier)
};

chip discover(const platform& plat, const rdu_mapper::options& o);

/// The AGCU each PMU loads through, given the bytes each loads (0: none): its nearest, unless that one already
/// carries an even share of all the bytes; then the nearest that does not (or, when every one does, the least
/// busy). Nearest keeps routes short; the share keeps a section whose bytes sit in a few large PMUs from
/// loading through the one or two AGCUs next to them.
std::vector<int> balance_loads(const chip& c, const std::vector<double>& bytes);

int pow2_floor(double v);

/// Rectangles covering a run [a, b) of snake positions on a w x h grid (column by column).
std::vector<floorplan_region> run_regions(const std::vector<std::pair<int, int>>& xy, int h, int a, int b,
                                          const std::string& label);

std::string region_text(const std::string& group, const std::vector<floorplan_region>& rs);

inline bool is_gemm(const op_node& op) { return op.cost.m > 0 && op.cost.n > 0 && op.cost.k > 0; }

// ---------------------------------------------------------------------------------------------------------
// A stage's timing on its PCUs (plan.cpp), used by the planner and the program builder alike.

/// Output columns one PCU covers per block: its lanes (times the MACs per functional unit).
std::int64_t column_width(const rdu_stage& s, const compute_model& pcu);

/// Row items [r0, r1) of tile t of T over R rows.
std::pair<std::int64_t, std::int64_t> tile_rows(std::int64_t R, int T, int t);

/// What PCU p of n covers of a matrix product's tile of `rows` rows: columns [c0, c1) and rows [q0, q1).
struct span {
    std::int64_t c0, c1, q0, q1;
};

span gemm_span(const rdu_stage& s, const compute_model& pcu, std::int64_t rows, int n, int p);

/// The work of PCU p of n for tile t of T of stage s.
work share(const rdu_stage& s, const compute_model& pcu, int T, int t, int n, int p);

/// The most PCUs that still each get work in every tile.
int max_parallel(const rdu_stage& s, const compute_model& pcu, int T);

/// Seconds of one tile on the busiest of n PCUs.
double tile_seconds(const rdu_stage& s, const compute_model& pcu, int T, int n);

/// Partitions `g` into stages and sections and places them on the chip (the plan); `roots` (when given) gets
/// each tensor's root, views resolved; `search` (when given) switches recalled section costs and counts them.
rdu_plan make_plan(const workload_graph& g, const chip& c, const rdu_mapper::options& o, const std::string& plat_name,
                   std::vector<int>* roots = nullptr, rdu_search* search = nullptr);

/// Builds the program of `plan` into `out`, recording its steps per section in `rec` (emit.cpp).
void emit_program(const workload_graph& g, const chip& c, const rdu_plan& plan, const std::vector<int>& roots,
                  const rdu_mapper::options& o, rdu_mapper::record& rec, mapping& out);

}  // namespace tessel::rdu
