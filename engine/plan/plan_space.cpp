#include "engine/plan/plan_space.h"

#include <algorithm>
#include <memory>
#include <tuple>

#include "engine/system/memory.h"
#include "engine/system/partition.h"
#include "models/core/error.h"
#include "models/core/units.h"

namespace tessel {

namespace {

std::vector<int> divisors(std::int64_t n) {
    std::vector<int> d;
    for (std::int64_t k = 1; k <= n; ++k)
        if (n % k == 0) d.push_back(static_cast<int>(k));
    return d;
}

/// Powers of two dividing n, and n itself, ascending.
std::vector<int> microbatch_choices(std::int64_t n) {
    std::vector<int> v;
    for (std::int64_t k = 1; k <= n; k *= 2)
        if (n % k == 0) v.push_back(static_cast<int>(k));
    if (v.empty() || v.back() != n) v.push_back(static_cast<int>(n));
    return v;
}

/// Partitions are the expensive part (building the graph and cutting it); they depend on the plan only through
/// what one rank runs, so plans differing in dp or zero share one, and its plan and microbatch count are set
/// before each memory estimate. Only the memory model reads them: the chunks' graphs are not made. A rank's graph
/// depends only on tp, the microbatch and sequence parallelism, so it is built once for every pp, interleave and
/// recomputation; the plans come tp by tp, so only the current tp's graphs are kept.
class partition_cache {
public:
    partition_cache(std::shared_ptr<const workload_source> source, workload_overrides overrides,
                    const plan_target& target)
        : m_source(std::move(source)), m_overrides(std::move(overrides)), m_target(target) {}

    partition_result& get(const parallel_plan& p, std::int64_t batch) {
        const auto key =
            std::make_tuple(p.tp, p.pp, p.interleave, p.microbatch, p.recompute, p.sequence_parallel, p.schedule);
        auto it = m_cache.find(key);
        if (it == m_cache.end()) {
            validate_plan(p, m_target);
            it = m_cache
                     .emplace(key, std::make_unique<partition_result>(partition(rank_graph(p), m_source->spec(),
                                                                                m_target, p, partition_detail::memory)))
                     .first;
        }
        partition_result& r = *it->second;
        r.plan = p;
        r.microbatches = microbatches(p, batch);
        return r;
    }

private:
    const workload_graph& rank_graph(const parallel_plan& p) {
        if (p.tp != m_graphs_tp) m_graphs.clear();
        m_graphs_tp = p.tp;
        const auto key = std::make_pair(p.microbatch, p.sequence_parallel);
        auto it = m_graphs.find(key);
        if (it == m_graphs.end())
            it = m_graphs.emplace(key, m_source->build(rank_overrides(m_target, m_overrides, p))).first;
        return it->second;
    }

    std::shared_ptr<const workload_source> m_source;  // read once for the whole search
    workload_overrides m_overrides;
    const plan_target& m_target;  // the search's: every plan has its chips
    std::map<std::tuple<int, int, int, int, std::string, bool, std::string>, std::unique_ptr<partition_result>> m_cache;
    int m_graphs_tp = 0;
    std::map<std::pair<int, bool>, workload_graph> m_graphs;  // the current tp's rank graphs
};

std::string largest_items(const stage_memory& s) {
    std::string out;
    for (size_t i = 0; i < s.largest.size() && i < 3; ++i)
        out += (i ? ", " : "") + s.largest[i].what + " " + format_bytes(s.largest[i].bytes);
    return out;
}

}  // namespace

plan_space enumerate_plans(const std::string& spec, const std::map<std::string, std::string>& overrides,
                           std::int64_t chips, double capacity_bytes, const plan_limits& limits) {
    plan_space out;
    const auto source = make_workload_source(spec);
    const workload_overrides typed = parse_workload_overrides(overrides);
    out.target = plan_target_of(*source, typed, chips);
    out.capacity = capacity_bytes;
    const plan_target& t = out.target;
    partition_cache parts(source, typed, t);

    auto restricted = [](const std::vector<int>& user, std::vector<int> all) {
        if (user.empty()) return all;
        return user;
    };

    // Memory of plan p, or an explanation of why it could not be partitioned.
    auto memory_of = [&](const parallel_plan& p, std::string& error) -> std::unique_ptr<memory_report> {
        try {
            const partition_result& part = parts.get(p, t.batch);
            if (!part.training) out.training = false;
            return std::make_unique<memory_report>(memory_per_chip(part, capacity_bytes));
        } catch (const input_error& e) {
            error = e.message();
            return nullptr;
        }
    };

    auto refuse = [&](std::string why) {
        if (out.first_violation.empty()) out.first_violation = std::move(why);
    };
    for (const int tp : restricted(limits.tp, divisors(chips))) {
        if (tp < 1 || chips % tp) {
            refuse("tp=" + std::to_string(tp) + ": does not divide the system's " + std::to_string(chips) + " chips");
            continue;
        }
        for (const int pp : restricted(limits.pp, divisors(chips / tp))) {
            if (pp < 1 || (chips / tp) % pp) {
                refuse("tp=" + std::to_string(tp) + " pp=" + std::to_string(pp) +
                       ": tp x pp does not divide the system's " + std::to_string(chips) + " chips");
                continue;
            }
            const int dp = static_cast<int>(chips / tp / pp);
            if (!limits.dp.empty() && std::find(limits.dp.begin(), limits.dp.end(), dp) == limits.dp.end()) continue;
            const std::int64_t per_replica = t.batch / dp;
            std::vector<int> mbs =
                restricted(limits.microbatch, microbatch_choices(std::max<std::int64_t>(1, per_replica)));
            // Largest first. With pp = 1 a larger microbatch runs the same work in larger kernels, so the first
            // that fits is kept, unless it needs recomputation: then smaller ones are tried for each cheaper
            // recomputation (a re-run forward can cost more than the larger kernels save).
            std::sort(mbs.rbegin(), mbs.rend());
            std::vector<int> ils = restricted(limits.interleave, pp > 1 ? std::vector<int>{1, 2} : std::vector<int>{1});
            for (const int il : ils) {
                bool kept_one = false;
                const bool largest_only = pp == 1 && limits.microbatch.empty();
                std::size_t cheapest_kept = std::size_t(-1);  // largest_only: the cheapest recomputation kept so far
                plan_candidate smallest_miss;
                bool missed = false;
                for (const int mb : mbs) {
                    if (largest_only && cheapest_kept == 0) break;
                    parallel_plan p = limits.base;
                    p.dp = dp;
                    p.tp = tp;
                    p.pp = pp;
                    p.microbatch = mb;
                    p.interleave = il;
                    if (il > 1)
                        p.schedule = "interleaved_1f1b";
                    else if (p.schedule == "interleaved_1f1b")
                        p.schedule = "1f1b";
                    p.zero = 0;
                    p.recompute = "none";
                    const std::vector<std::string> broken = plan_violations(p, t);
                    if (!broken.empty()) {
                        std::string why = p.str() + ": ";
                        for (size_t i = 0; i < broken.size(); ++i) why += (i ? "; " : "") + broken[i];
                        refuse(why);
                        continue;
                    }
                    if (pp > 1 && limits.microbatch.empty() && microbatches(p, t.batch) < pp) continue;
                    const std::vector<int> zeros =
                        !limits.zero.empty() ? limits.zero : (dp > 1 ? std::vector<int>{0, 1} : std::vector<int>{0});
                    const std::vector<std::string> recomputes =
                        !limits.recompute.empty() ? limits.recompute
                                                  : std::vector<std::string>{"none", "selective", "full"};
                    std::size_t fitted = std::size_t(-1);  // the cheapest recomputation that fits this microbatch
                    auto try_zero = [&](int z) {
                        for (std::size_t k = 0; k < recomputes.size(); ++k) {
                            const std::string& rc = recomputes[k];
                            if (largest_only && k >= cheapest_kept) break;  // a larger microbatch has it already
                            parallel_plan q = p;
                            q.zero = z;
                            q.recompute = rc;
                            std::string error;
                            const auto mem = memory_of(q, error);
                            if (!mem) {  // selective needs ops tagged as the attention core; the next rung may work
                                refuse(q.str() + ": " + error);
                                continue;
                            }
                            const stage_memory& w = mem->worst();
                            plan_candidate c{q, w.total, largest_items(w), "", 0};
                            for (const stage_memory& sm : mem->stages)
                                c.held_bytes = std::max(c.held_bytes, sm.weights + sm.state);
                            if (capacity_bytes <= 0) {  // nothing bounds memory (weights streamed): no estimate to show
                                c.memory_bytes = 0;
                                c.memory_largest.clear();
                            }
                            if (capacity_bytes <= 0 || mem->fits()) {
                                out.candidates.push_back(std::move(c));
                                fitted = std::min(fitted, k);
                                return true;
                            }
                            c.rejected = "needs " + format_bytes(w.total) + " per chip, a chip has " +
                                         format_bytes(capacity_bytes);
                            smallest_miss = std::move(c);
                            missed = true;
                        }
                        return false;
                    };
                    bool fits = false;
                    for (const int z : zeros) fits |= try_zero(z);
                    if (!fits && limits.zero.empty() && dp > 1) fits = try_zero(2);
                    kept_one |= fits;
                    cheapest_kept = std::min(cheapest_kept, fitted);
                }
                if (!kept_one && missed) out.rejected.push_back(std::move(smallest_miss));
            }
        }
    }
    return out;
}

}  // namespace tessel
