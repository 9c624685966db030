// The bsp mapper: its options, and the report after a run (time per superstep in exchange, compute and sync).
#include "engine/mappers/bsp/bsp_mapper.h"

#include <algorithm>

#include "engine/report/summary.h"

namespace tessel {

void bsp_mapper::options::declare(param_decl& d) {
    d(tiles, "tiles", "",
      "the tiles to run on (default: the first component whose units compute on their own memory: ipu_tiles)");
    d(sync, "sync", "", "the barrier that ends every superstep (default: the first barrier)");
    d(streaming_memory, "streaming_memory", "",
      "memory for weights that do not stay on the tiles (default: the first memory that does not compute; "
      "'none': no streaming memory)");
    d(code_reserve, "code_reserve", "0.25",
      "share of each tile's SRAM taken by code, vertex state, stacks and exchange buffers (not for tensors); an "
      "assumption: Poplar's always-live memory varies by model");
    d.choice(
        weights, "weights", "auto", {"auto", "resident", "streaming"},
        "auto: weights and state stay on the tiles when they fit, else the fewest that make the rest fit come from "
        "streaming memory (sparsely read tables first, then the largest; reported); "
        "resident: they must fit; streaming: always from streaming memory");
    d.choice(partials, "partials", "fp32", {"fp32", "fp16"},
             "type of matrix-product partial sums (Poplar's default: fp32)");
    d(min_piece, "min_piece", "256B",
      "smallest piece of a tensor given a tile of its own: small tensors spread over fewer tiles");
    d(matmul_split, "matmul_split", "",
      "force every matrix product's split as PMxPNxPK (teaching, tests); empty: the planner chooses");
    d.choice(
        representation, "representation", "auto", {"auto", "fine", "coarse"},
        "fine: a program step per message and per tile's compute; coarse: one step per superstep carrying every "
        "tile's exchange totals and compute (models/bsp/bsp_superstep.h); auto: coarse when the fine program would "
        "have more than coarse_above messages and compute steps (estimated from the graph)");
    d(coarse_above, "coarse_above", "2e6",
      "auto representation: the estimated fine step count above which a run is coarse", bound::positive);
}

namespace {
double superstep_seconds(const nlohmann::json& j) {
    return j["exchange_s"].get<double>() + j["compute_s"].get<double>() + j["sync_s"].get<double>();
}
}  // namespace

void bsp_mapper::explain(const mapping& m, const platform& plat, const executor::result& r, run_summary& s) const {
    if (m_steps.empty()) return;
    double tc = 0, ts = 0, tx = 0;
    tick prev = r.start;
    nlohmann::json arr = nlohmann::json::array();
    std::vector<std::pair<double, size_t>> longest;
    for (size_t i = 0; i < m_steps.size(); ++i) {
        const superstep& st = m_steps[i];
        tick xend = prev;
        for (std::uint32_t k = st.first; k < st.compute; ++k) xend = std::max(xend, r.step_end[k]);
        if (st.coarse) xend = std::max(xend, r.step_start[st.compute]);  // its head: the last tile's data in
        const tick sync_start = std::max(r.step_start[st.sync], xend);
        const tick sync_end = r.step_end[st.sync];
        const double x = ticks_to_seconds(xend - prev), c = ticks_to_seconds(sync_start - xend),
                     y = ticks_to_seconds(sync_end - sync_start);
        tx += x, tc += c, ts += y;
        nlohmann::json j;
        j["name"] = st.name;
        j["exchange_s"] = x;
        j["compute_s"] = c;
        j["sync_s"] = y;
        j["tiles"] = st.tiles;
        j["exchange_bytes"] = st.exchange_bytes;
        j["streamed_bytes"] = st.streamed_bytes;
        j["planned_compute_s"] = st.predicted_compute;
        arr.push_back(j);
        longest.emplace_back(x + c + y, i);
        prev = sync_end;
    }
    const double total = tc + ts + tx;
    double updates = 0;
    size_t update_steps = 0;
    for (size_t i = 0; i < m_steps.size(); ++i)
        if (m_steps[i].update) updates += superstep_seconds(arr[i]), ++update_steps;
    s.details["supersteps"] = arr;
    s.details["phase_totals_s"] = {{"compute", tc}, {"sync", ts}, {"exchange", tx}};
    auto pct = [&](double v) { return format_number(total > 0 ? 100 * v / total : 0, 3) + "%"; };
    s.notes.push_back(std::to_string(m_steps.size()) + " supersteps: compute " + format_time(tc) + " (" + pct(tc) +
                      "), sync " + format_time(ts) + " (" + pct(ts) + "), exchange " + format_time(tx) + " (" +
                      pct(tx) + ")");
    if (update_steps > 0) {
        s.details["optimizer_s"] = updates;
        s.notes.push_back(
            "optimizer updates: " + std::to_string(update_steps) + " supersteps, " + format_time(updates) + " (" +
            pct(updates) +
            " of the supersteps; weights and state rewritten in place, streamed ones read and written back)");
    }
    std::sort(longest.rbegin(), longest.rend());
    for (size_t i = 0; i < longest.size() && i < 5; ++i) {
        const auto& j = arr[longest[i].second];
        s.notes.push_back("  superstep " + std::to_string(longest[i].second) + " '" + j["name"].get<std::string>() +
                          "': " + format_time(longest[i].first) + " = compute " +
                          format_time(j["compute_s"].get<double>()) + " + sync " +
                          format_time(j["sync_s"].get<double>()) + " + exchange " +
                          format_time(j["exchange_s"].get<double>()) + " (" +
                          format_bytes(j["exchange_bytes"].get<double>() + j["streamed_bytes"].get<double>()) + " in)");
    }
}

TESSEL_REGISTER_MAPPER(make_mapper<bsp_mapper>(
    "bsp",
    "Graphcore IPU: every op a bulk-synchronous superstep (exchange, compute, sync) over all tiles; matrix "
    "products split in batch x M x N x K to minimise compute + exchange within each tile's memory; weights "
    "resident or streamed"));

}  // namespace tessel
