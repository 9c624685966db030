#include "engine/serve/step_table.h"

#include <algorithm>
#include <iterator>
#include <set>
#include <stdexcept>
#include <tuple>

namespace tessel::serve {

std::vector<std::int64_t> batch_grid(std::int64_t n) {
    std::vector<std::int64_t> out;
    for (std::int64_t b = 1; b < n; b *= 2) out.push_back(b);
    out.push_back(n);
    return out;
}

std::vector<step_shape> step_grid(const grid_bounds& g) {
    std::set<step_shape> shapes;
    // Prefill: the shortest and longest prompt (and the longest re-prefill), as far as the token budget allows
    // at each batch size; one prompt always runs, however long.
    std::set<std::int64_t> lengths = {g.prompt_min, g.prompt_max};
    if (g.reprefill_max > g.prompt_max) lengths.insert(g.reprefill_max);
    for (const std::int64_t k : batch_grid(g.max_prefill_batch)) {
        bool any = false;
        for (const std::int64_t s : lengths)
            if (k == 1 || k * s <= g.max_prefill_tokens) {
                shapes.insert({true, k, s});
                any = true;
            }
        if (!any && k * g.prompt_min <= g.max_prefill_tokens) shapes.insert({true, k, g.prompt_min});
    }
    // Decode: the shortest and longest context a batch of that size can hold in the KV cache.
    if (g.context_max > 0)
        for (const std::int64_t b : batch_grid(g.max_batch)) {
            const std::int64_t hi = std::min(g.context_max, g.kv_tokens / b);
            if (hi < g.context_min) break;
            shapes.insert({false, b, g.context_min});
            shapes.insert({false, b, hi});
        }
    return {shapes.begin(), shapes.end()};
}

namespace {

double lerp(double x0, double y0, double x1, double y1, double x) {
    return x1 == x0 ? y0 : y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

step_cost lerp(double x0, const step_cost& a, double x1, const step_cost& b, double x) {
    return {lerp(x0, a.seconds, x1, b.seconds, x), lerp(x0, a.joules, x1, b.joules, x)};
}

}  // namespace

step_cost step_table::in_row(bool prefill, std::int64_t batch, double length) const {
    std::vector<std::pair<double, step_cost>> row;
    for (auto it = m_points.lower_bound({prefill, batch, 0});
         it != m_points.end() && it->first.prefill == prefill && it->first.batch == batch; ++it)
        row.emplace_back(static_cast<double>(it->first.length), it->second);
    if (row.size() == 1) return row.front().second;
    // The segment holding `length`, or the first or last one to continue.
    std::size_t i = 1;
    while (i + 1 < row.size() && row[i].first < length) ++i;
    return lerp(row[i - 1].first, row[i - 1].second, row[i].first, row[i].second, length);
}

double transfer_table::seconds(std::int64_t tokens) const {
    if (m_points.empty()) throw std::logic_error("transfer table: no KV transfer simulated");
    if (m_points.size() == 1) return m_points.begin()->second;
    auto hi = m_points.upper_bound(tokens);
    if (hi == m_points.begin()) ++hi;
    if (hi == m_points.end()) --hi;
    const auto lo = std::prev(hi);
    return lerp(static_cast<double>(lo->first), lo->second, static_cast<double>(hi->first), hi->second,
                static_cast<double>(tokens));
}

step_cost step_table::lookup(bool prefill, std::int64_t batch, double length) const {
    std::vector<std::int64_t> batches;
    for (const auto& [s, c] : m_points)
        if (s.prefill == prefill && (batches.empty() || batches.back() != s.batch)) batches.push_back(s.batch);
    if (batches.empty())
        throw std::logic_error(std::string("step table: no ") + (prefill ? "prefill" : "decode") + " step simulated");
    if (batches.size() == 1) return in_row(prefill, batches.front(), length);
    std::size_t i = 1;
    while (i + 1 < batches.size() && batches[i] < batch) ++i;
    const std::int64_t b0 = batches[i - 1], b1 = batches[i];
    return lerp(static_cast<double>(b0), in_row(prefill, b0, length), static_cast<double>(b1),
                in_row(prefill, b1, length), static_cast<double>(batch));
}

}  // namespace tessel::serve
