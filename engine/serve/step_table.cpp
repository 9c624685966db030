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

namespace {

/// Chunked prefill's mixed steps (the rule in step_table.h): for each decode count (0, then 1, 2, 4, ... up to the
/// most that leave a token of the chunk for a prompt) the step's tokens at T + 1 (a one-token chunk) and at 16,
/// 32, ... up to the chunk; the decodes over the shortest context, the chunk over no prefix. Then the chunks alone
/// over the longest prefix a prompt (or a preempted request's recomputation) can give them.
void add_mixed_grid(const grid_bounds& g, std::set<step_shape>& shapes) {
    std::vector<std::int64_t> tokens;
    for (std::int64_t t = 16; t < g.chunk; t *= 2) tokens.push_back(t);
    tokens.push_back(g.chunk);
    std::vector<std::int64_t> decodes = {0};
    const std::int64_t most = g.context_max > 0 ? std::min(g.max_batch - 1, g.chunk - 1) : 0;
    if (most > 0)
        for (const std::int64_t d : batch_grid(most)) decodes.push_back(d);
    for (const std::int64_t d : decodes) {
        const std::int64_t context = d > 0 ? g.context_min : 0;
        shapes.insert({true, 1, 1, 0, d, context});
        for (const std::int64_t t : tokens)
            if (t > d + 1) shapes.insert({true, 1, t - d, 0, d, context});
    }
    const std::int64_t longest = std::max(g.prompt_max, g.reprefill_max);
    if (longest > 1) {
        shapes.insert({true, 1, 1, longest - 1, 0, 0});
        for (const std::int64_t t : tokens) shapes.insert({true, 1, t, longest - 1, 0, 0});
    }
}

}  // namespace

std::vector<step_shape> step_grid(const grid_bounds& g) {
    std::set<step_shape> shapes;
    if (g.chunk > 0) add_mixed_grid(g, shapes);
    // Prefill: the shortest and longest prompt (and the longest re-prefill), as far as the token budget allows
    // at each batch size; one prompt always runs, however long.
    std::set<std::int64_t> lengths = {g.prompt_min, g.prompt_max};
    if (g.reprefill_max > g.prompt_max) lengths.insert(g.reprefill_max);
    for (const std::int64_t k : g.chunk > 0 ? std::vector<std::int64_t>{} : batch_grid(g.max_prefill_batch)) {
        bool any = false;
        for (const std::int64_t s : lengths)
            if (k == 1 || k * s <= g.max_prefill_tokens) {
                shapes.insert({true, k, s});
                any = true;
            }
        if (!any && k * g.prompt_min <= g.max_prefill_tokens) shapes.insert({true, k, g.prompt_min});
    }
    // Decode: the shortest and longest context a batch of that size can hold in the KV cache; speculative
    // decoding's verify steps (speculate + 1 tokens a sequence over its cache) at the same contexts.
    if (g.context_max > 0)
        for (const std::int64_t b : batch_grid(g.max_batch)) {
            const std::int64_t hi = std::min(g.context_max, g.kv_tokens / b);
            if (hi < g.context_min) break;
            shapes.insert({false, b, g.context_min});
            shapes.insert({false, b, hi});
            if (g.speculate > 0) {
                shapes.insert({true, b, g.speculate + 1, g.context_min});
                shapes.insert({true, b, g.speculate + 1, hi});
            }
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

/// Cost along a row of points sorted by x: piecewise linear, the first or last segment continued beyond.
step_cost along_row(const std::vector<std::pair<double, step_cost>>& row, double x) {
    if (row.size() == 1) return row.front().second;
    std::size_t i = 1;
    while (i + 1 < row.size() && row[i].first < x) ++i;
    return lerp(row[i - 1].first, row[i - 1].second, row[i].first, row[i].second, x);
}

step_cost operator+(const step_cost& a, const step_cost& b) { return {a.seconds + b.seconds, a.joules + b.joules}; }
step_cost operator-(const step_cost& a, const step_cost& b) { return {a.seconds - b.seconds, a.joules - b.joules}; }
step_cost operator*(double k, const step_cost& a) { return {k * a.seconds, k * a.joules}; }

/// A plain step (no prefix, no decodes beside it).
bool plain_shape(const step_shape& s) { return s.prefix == 0 && !s.mixed(); }

/// The cost at (`batch`, `x`) over the points `in` selects, each placed at `x_of` of its shape: piecewise linear
/// in x within a batch size (the first or last segment continued beyond), then linear between the two nearest
/// batch sizes simulated (the first or last two continued beyond).
template <class Select, class Place>
step_cost across_batches(const std::map<step_shape, step_cost>& points, Select in, Place x_of, std::int64_t batch,
                         double x, const char* what) {
    std::map<std::int64_t, std::vector<std::pair<double, step_cost>>> rows;
    for (const auto& [s, c] : points)
        if (in(s)) rows[s.batch].emplace_back(static_cast<double>(x_of(s)), c);
    if (rows.empty()) throw std::logic_error(std::string("step table: no ") + what + " step simulated");
    for (auto& [b, row] : rows)
        std::sort(row.begin(), row.end(), [](const auto& p, const auto& q) { return p.first < q.first; });
    if (rows.size() == 1) return along_row(rows.begin()->second, x);
    auto hi = std::next(rows.begin());
    while (std::next(hi) != rows.end() && hi->first < batch) ++hi;
    const auto lo = std::prev(hi);
    return lerp(static_cast<double>(lo->first), along_row(lo->second, x), static_cast<double>(hi->first),
                along_row(hi->second, x), static_cast<double>(batch));
}

}  // namespace

step_cost step_table::mixed_at_reference(std::int64_t decodes, double tokens) const {
    // Rows by decode count (0: the plain prefills of one sequence), each by the step's tokens.
    std::map<std::int64_t, std::vector<std::pair<double, step_cost>>> rows;
    for (const auto& [s, c] : m_points)
        if (s.prefill && s.batch == 1 && s.prefix == 0)
            rows[s.decodes].emplace_back(static_cast<double>(s.length + s.decodes), c);
    if (rows.empty()) throw std::logic_error("step table: no mixed step simulated");
    auto hi = rows.lower_bound(decodes);
    if (hi != rows.end() && hi->first == decodes) return along_row(hi->second, tokens);
    if (rows.size() == 1) return along_row(rows.begin()->second, tokens);
    if (hi == rows.end()) --hi;    // beyond the last row: the last two continue
    if (hi == rows.begin()) ++hi;  // before the first: the first two continue
    const auto lo = std::prev(hi);
    return lerp(static_cast<double>(lo->first), along_row(lo->second, tokens), static_cast<double>(hi->first),
                along_row(hi->second, tokens), static_cast<double>(decodes));
}

step_cost step_table::mixed(std::int64_t decodes, double context, std::int64_t chunk, double prefix) const {
    step_cost c = mixed_at_reference(decodes, static_cast<double>(chunk + decodes));
    if (decodes > 0) {
        // The decodes' contexts beyond the reference the mixed steps were simulated at.
        std::int64_t reference = 0;
        for (const auto& [s, x] : m_points)
            if (s.mixed()) reference = s.decode_context;
        c = c + decode(decodes, context) - decode(decodes, static_cast<double>(reference));
    }
    if (prefix > 0) {
        // The chunk's prefix: linear between no prefix and the longest simulated, at this chunk size.
        std::vector<std::pair<double, step_cost>> at_longest;
        std::int64_t longest = 0;
        for (const auto& [s, x] : m_points)
            if (s.prefill && s.batch == 1 && s.prefix > 0 && !s.mixed()) {
                at_longest.emplace_back(static_cast<double>(s.length), x);
                longest = s.prefix;
            }
        if (!at_longest.empty()) {
            const auto chunk_len = static_cast<double>(chunk);
            const step_cost slope = (1.0 / static_cast<double>(longest)) *
                                    (along_row(at_longest, chunk_len) - mixed_at_reference(0, chunk_len));
            c = c + prefix * slope;
        }
    }
    return c;
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
    return across_batches(
        m_points, [&](const step_shape& s) { return s.prefill == prefill && plain_shape(s); },
        [](const step_shape& s) { return s.length; }, batch, length, prefill ? "prefill" : "decode");
}

step_cost step_table::verify(std::int64_t batch, std::int64_t tokens, double context) const {
    return across_batches(
        m_points, [&](const step_shape& s) { return s.prefill && s.length == tokens && s.prefix > 0 && !s.mixed(); },
        [](const step_shape& s) { return s.prefix; }, batch, context, "verify");
}

}  // namespace tessel::serve
