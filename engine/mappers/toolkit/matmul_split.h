// Splitting a matrix product (batch x M x N x K) over parallel units, as the mappers that tile products over
// many units do (bsp: IPU tiles; mesh: tiles with a scratchpad). The enumeration is shared; what differs per
// style is the policy: which factors are worth trying for each dimension, which splits are allowed, what a split
// costs (the mapper's own timing rules) and how ties are broken.
//
// The search visits batch, then M, then N, then K factors, nested, each list given by the space for the factors
// chosen so far (so "N factors up to the units the batch and M factors leave" is one function), and keeps the
// split the cost callback and the comparison prefer. The callback sees the best so far, so it can skip a split
// whose lower bound cannot win without costing it. The first of equal splits in visiting order is kept unless
// `better` prefers a later one.
//
// The rdu and wafer mappers do not use it because they do not search such splits. The rdu mapper gives a
// section's PCUs one at a time to its slowest stage (a greedy allocation timed by the PCU's own rules), and what
// one PCU computes of a product follows from its lanes (column blocks, then rows: gemm_span). The wafer mappers
// give each op a rectangle whose lines carry K and whose columns carry N while M streams through in time, sized
// by a one-dimensional search over PE counts under the SRAM bound (min_pes) and the pipeline's balance. Casting
// either as a batch x M x N x K enumeration would change what they search and so their results.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tessel::toolkit {

/// Parts each dimension of a matrix product is cut into.
struct matmul_split {
    int batch = 1, m = 1, n = 1, k = 1;
    std::int64_t units() const { return static_cast<std::int64_t>(batch) * m * n * k; }
    /// "1x2x4x1" (batch x M x N x K).
    std::string str() const;
};

/// Factors to try for each dimension, given the split so far (the dimensions before it already chosen; the
/// later ones still 1). An empty list skips that branch.
struct split_space {
    using factors = std::function<std::vector<int>(const matmul_split&)>;
    factors batch, m, n, k;
};

/// A fixed list of factors for any split so far.
split_space::factors fixed(std::vector<int> v);

/// Calls `visit` for every split of the space, in order (batch outermost, K innermost).
void for_each_split(const split_space& space, const std::function<void(const matmul_split&)>& visit);

/// The best split of `space` by `cost` (nothing: not allowed or pruned; it gets the best plan so far, or
/// nullptr) and `better(a, b)`: whether plan `a` beats plan `b`. Nothing when no split is allowed.
template <class Plan>
std::optional<Plan> best_split(const split_space& space,
                               const std::function<std::optional<Plan>(const matmul_split&, const Plan* best)>& cost,
                               const std::function<bool(const Plan& a, const Plan& b)>& better) {
    std::optional<Plan> best;
    for_each_split(space, [&](const matmul_split& s) {
        std::optional<Plan> p = cost(s, best ? &*best : nullptr);
        if (p && (!best || better(*p, *best))) best = std::move(p);
    });
    return best;
}

/// Factors worth trying for a dimension of `d` cut into at most `limit` parts: the products 2^a 3^b, d
/// divided by 1..8 (rounded up), and the limit itself (the bsp mapper's candidates).
std::vector<int> smooth_factors(std::int64_t d, int limit);

}  // namespace tessel::toolkit
