#include "engine/serve/batcher.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>

#include "models/core/error.h"

namespace tessel::serve {

namespace {

std::int64_t blocks_for(std::int64_t tokens, std::int64_t block) { return (tokens + block - 1) / block; }

/// SplitMix64's finaliser (Steele et al. 2014): a well-mixed 64-bit hash of `x`.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/// A request on a replica.
struct live {
    int id = 0;
    std::int64_t cached = 0;     // tokens in its KV cache
    std::int64_t generated = 0;  // output tokens so far
    std::int64_t blocks = 0;
    std::int64_t to_prefill = 0;  // chunked: prompt tokens (or a preempted one's recomputed tokens) not yet prefilled
    std::int64_t in_step = 0;     // chunked: its prompt tokens in the step running (0: it decodes, or waits)
    bool decoding = false;        // chunked: it decodes in the step running
};

/// One model replica: its queue, its batch and the step it is running.
struct replica_state {
    std::deque<live> waiting;
    std::deque<live> incoming;  // disaggregated decode replica: caches arrived, not yet admitted
    std::vector<live> running;  // admission order
    double links_free = 0;      // disaggregated prefill replica: when its last transfer ends
    std::int64_t free_blocks = 0;
    bool busy = false;
    double busy_until = 0;
    double idle_since = 0;
    // The step in flight, applied at busy_until.
    std::vector<live> admitted;  // its prefills
    bool prefill = false;
    std::size_t record = 0;  // its index in the run's steps
    // static batching: the batch's longest prompt and the tokens generated so far by the batch
    std::int64_t batch_prompt = 0, batch_step = 0, batch_blocks = 0;
};

class server {
public:
    server(const std::vector<request>& reqs, const server_config& cfg, const step_table& steps)
        : m_reqs(reqs), m_cfg(cfg), m_steps(steps), m_replicas(static_cast<std::size_t>(cfg.replicas)) {
        m_run.outcomes.resize(reqs.size());
        m_run.arrivals.resize(reqs.size(), -1);
        for (auto& r : m_replicas) r.free_blocks = cfg.kv_blocks;
        for (const request& r : reqs) {
            // Its longest KV cache: prompt and output but the last token (whose keys no step computes).
            const std::int64_t need = r.prompt_tokens + r.output_tokens - 1;
            if (blocks_for(need, cfg.block_tokens) > cfg.kv_blocks)
                throw input_error("request " + std::to_string(r.id) + " (" + std::to_string(r.prompt_tokens) +
                                  " prompt tokens, " + std::to_string(r.output_tokens) +
                                  " output) needs more KV cache than a replica has (" + std::to_string(cfg.kv_blocks) +
                                  " of " + std::to_string(cfg.block_tokens) + " tokens)");
            if (r.arrival_s >= 0) m_pending.emplace(r.arrival_s, r.id);
        }
        m_next_user_request = cfg.closed_loop_users;
    }

    serve_run run() {
        for (;;) {
            double t = std::numeric_limits<double>::infinity();
            if (!m_pending.empty()) t = m_pending.begin()->first;
            for (const auto& r : m_replicas)
                if (r.busy) t = std::min(t, r.busy_until);
            if (!m_sending.empty()) t = std::min(t, m_sending.begin()->first);
            if (t == std::numeric_limits<double>::infinity()) break;
            for (std::size_t i = 0; i < m_replicas.size(); ++i)
                if (m_replicas[i].busy && m_replicas[i].busy_until == t) finish_step(static_cast<int>(i), t);
            while (!m_sending.empty() && m_sending.begin()->first <= t) {
                deliver(m_sending.begin()->second);
                m_sending.erase(m_sending.begin());
            }
            while (!m_pending.empty() && m_pending.begin()->first <= t) {
                const int id = m_pending.begin()->second;
                m_pending.erase(m_pending.begin());
                m_run.arrivals[static_cast<std::size_t>(id)] = t;
                live l;
                l.id = id;
                const int rep = static_cast<int>(m_dispatched++ % static_cast<std::size_t>(prefilling()));
                m_run.outcomes[static_cast<std::size_t>(id)].replica = rep;
                m_replicas[static_cast<std::size_t>(rep)].waiting.push_back(l);
            }
            // Twice when disaggregated: a decode replica's preemption puts work back on a prefill replica.
            for (int pass = 0; pass < (m_cfg.prefill_replicas > 0 ? 2 : 1); ++pass)
                for (std::size_t i = 0; i < m_replicas.size(); ++i)
                    if (!m_replicas[i].busy) start_step(static_cast<int>(i), t);
        }
        double end = 0;
        for (const step_record& s : m_run.steps) end = std::max(end, s.end_s);
        for (const auto& r : m_replicas) {
            if (!r.waiting.empty() || !r.running.empty() || !r.incoming.empty())
                throw std::logic_error("serving: requests left unserved with nothing running");
            m_run.idle_joules += (end - r.idle_since) * m_cfg.idle_watts;
        }
        return std::move(m_run);
    }

private:
    const request& req(int id) const { return m_reqs[static_cast<std::size_t>(id)]; }
    outcome& out(int id) { return m_run.outcomes[static_cast<std::size_t>(id)]; }

    void record(int rep, double t, bool prefill, std::int64_t batch, std::int64_t tokens, double context,
                const step_cost& c) {
        replica_state& r = m_replicas[static_cast<std::size_t>(rep)];
        m_run.idle_joules += (t - r.idle_since) * m_cfg.idle_watts;
        step_record s;
        s.start_s = t;
        s.end_s = t + c.seconds;
        s.prefill = prefill;
        s.batch = batch;
        s.tokens = tokens;
        s.context = context;
        s.energy_j = c.joules;
        s.replica = rep;
        s.kv_blocks = m_cfg.kv_blocks - r.free_blocks;
        m_run.steps.push_back(s);
        r.busy = true;
        r.busy_until = s.end_s;
        r.prefill = prefill;
        r.record = m_run.steps.size() - 1;
    }

    bool speculative() const { return m_cfg.speculate > 0; }

    /// The tokens a decoding sequence's step writes to its cache: one, or with speculative decoding the draft's
    /// and one more, no more than its output still needs.
    std::int64_t step_tokens(const live& l) const {
        return speculative() ? std::min(m_cfg.speculate + 1, req(l.id).output_tokens - l.generated) : 1;
    }

    /// A prefill of `k` sequences padded to `length` tokens (with speculative decoding, the draft's too).
    step_cost prefill_cost(std::int64_t k, double length) const {
        step_cost c = m_steps.prefill(k, length);
        if (speculative()) {
            const step_cost d = m_cfg.draft->prefill(k, length);
            c = {c.seconds + d.seconds, c.joules + d.joules};
        }
        return c;
    }

    /// A decode step of `b` sequences over `context` cached tokens (mean); with speculative decoding the draft's
    /// decode steps, one per draft token, then the verify step.
    step_cost decode_cost(std::int64_t b, double context) const {
        if (!speculative()) return m_steps.decode(b, context);
        step_cost c = m_steps.verify(b, m_cfg.speculate + 1, context);
        for (std::int64_t j = 0; j < m_cfg.speculate; ++j) {
            const step_cost d = m_cfg.draft->decode(b, context + static_cast<double>(j));
            c = {c.seconds + d.seconds, c.joules + d.joules};
        }
        return c;
    }

    /// The replicas that take new requests (disaggregated: the prefill ones).
    int prefilling() const { return m_cfg.prefill_replicas > 0 ? m_cfg.prefill_replicas : m_cfg.replicas; }
    bool decodes_only(int rep) const { return m_cfg.prefill_replicas > 0 && rep >= m_cfg.prefill_replicas; }

    void start_step(int rep, double t) {
        if (decodes_only(rep))
            start_decode_pool(rep, t);
        else if (m_cfg.chunk > 0)
            start_chunked(rep, t);
        else if (m_cfg.continuous)
            start_continuous(rep, t);
        else
            start_static(rep, t);
    }

    /// A decode replica: arrived caches join the batch while it has room and the cache has their blocks.
    void start_decode_pool(int rep, double t) {
        replica_state& r = m_replicas[static_cast<std::size_t>(rep)];
        while (!r.incoming.empty() && static_cast<std::int64_t>(r.running.size()) < m_cfg.max_batch) {
            live l = r.incoming.front();
            const std::int64_t need = blocks_for(l.cached, m_cfg.block_tokens);
            if (need > r.free_blocks) break;
            r.incoming.pop_front();
            r.free_blocks -= need;
            l.blocks = need;
            r.running.push_back(l);
        }
        start_decode(rep, t);
    }

    /// A prefilled request's cache leaves for the next decode replica once the replica's earlier transfers are
    /// done; its blocks stay held until it has arrived.
    void send(const live& l, int from, double t) {
        replica_state& r = m_replicas[static_cast<std::size_t>(from)];
        transfer_record x;
        x.request = l.id;
        x.from = from;
        x.to = m_cfg.prefill_replicas +
               static_cast<int>(m_sent++ % static_cast<std::size_t>(m_cfg.replicas - m_cfg.prefill_replicas));
        x.tokens = l.cached;
        x.ready_s = t;
        x.start_s = std::max(t, r.links_free);
        x.end_s = x.start_s + m_cfg.transfers->seconds(l.cached);
        r.links_free = x.end_s;
        m_sending.emplace(x.end_s, std::make_pair(m_run.transfers.size(), l));
        m_run.transfers.push_back(x);
    }

    void deliver(const std::pair<std::size_t, live>& sent) {
        const transfer_record& x = m_run.transfers[sent.first];
        live l = sent.second;
        m_replicas[static_cast<std::size_t>(x.from)].free_blocks += l.blocks;
        l.blocks = 0;
        m_replicas[static_cast<std::size_t>(x.to)].incoming.push_back(l);
    }

    void start_continuous(int rep, double t) {
        replica_state& r = m_replicas[static_cast<std::size_t>(rep)];
        // Admission, first come first served.
        std::int64_t longest = 0;
        while (!r.waiting.empty() &&
               static_cast<std::int64_t>(r.running.size() + r.admitted.size()) < m_cfg.max_batch) {
            live l = r.waiting.front();
            const std::int64_t len = req(l.id).prompt_tokens + l.generated;  // a preempted one is recomputed
            const std::int64_t padded = std::max(longest, len);
            const auto k = static_cast<std::int64_t>(r.admitted.size()) + 1;
            if (!r.admitted.empty() && k * padded > m_cfg.max_prefill_tokens) break;
            const std::int64_t need = blocks_for(len, m_cfg.block_tokens);
            if (need > r.free_blocks) break;
            r.waiting.pop_front();
            r.free_blocks -= need;
            l.blocks = need;
            l.cached = len;
            longest = padded;
            r.admitted.push_back(l);
        }
        if (!r.admitted.empty()) {
            const auto k = static_cast<std::int64_t>(r.admitted.size());
            record(rep, t, true, k, k * longest, static_cast<double>(longest),
                   prefill_cost(k, static_cast<double>(longest)));
            return;
        }
        start_decode(rep, t);
    }

    /// The running requests that decode this step (chunked: those whose prompt is prefilled) get the block for
    /// their next token; the newest running requests are preempted while the cache lacks them. Returns the
    /// decoding requests' mean context (0: none decode).
    double grow_decodes(int rep, std::int64_t& decoding) {
        replica_state& r = m_replicas[static_cast<std::size_t>(rep)];
        auto decodes = [](const live& l) { return l.to_prefill == 0; };
        auto extra = [&] {
            std::int64_t e = 0;
            for (const live& l : r.running)
                if (decodes(l)) e += blocks_for(l.cached + step_tokens(l), m_cfg.block_tokens) - l.blocks;
            return e;
        };
        while (extra() > r.free_blocks) {
            live victim = r.running.back();
            r.running.pop_back();
            r.free_blocks += victim.blocks;
            victim.blocks = 0;
            victim.cached = 0;
            victim.to_prefill = 0;
            ++out(victim.id).preemptions;
            // Prefilled again where it was prefilled (disaggregated: on its prefill replica).
            m_replicas[static_cast<std::size_t>(decodes_only(rep) ? out(victim.id).replica : rep)].waiting.push_front(
                victim);
            if (r.running.empty()) throw std::logic_error("serving: no request fits the KV cache");
        }
        double context = 0;
        decoding = 0;
        for (live& l : r.running) {
            l.decoding = decodes(l);
            if (!l.decoding) continue;
            const std::int64_t more = blocks_for(l.cached + step_tokens(l), m_cfg.block_tokens) - l.blocks;
            r.free_blocks -= more;
            l.blocks += more;
            context += static_cast<double>(l.cached);
            ++decoding;
        }
        return decoding > 0 ? context / static_cast<double>(decoding) : 0;
    }

    /// Every running sequence decodes one token; the newest are preempted while the cache lacks their blocks.
    void start_decode(int rep, double t) {
        if (m_replicas[static_cast<std::size_t>(rep)].running.empty()) return;
        std::int64_t b = 0;
        const double context = grow_decodes(rep, b);
        record(rep, t, false, b, speculative() ? b * (m_cfg.speculate + 1) : b, context, decode_cost(b, context));
    }

    /// A chunked-prefill step: the decodes, then prompt chunks up to the token budget (batcher.h).
    void start_chunked(int rep, double t) {
        replica_state& r = m_replicas[static_cast<std::size_t>(rep)];
        std::int64_t decoding = 0;
        const double context = r.running.empty() ? 0 : grow_decodes(rep, decoding);
        std::int64_t budget = m_cfg.chunk - decoding, chunk = 0, chunks = 0;
        double prefix = 0;  // token-weighted
        auto take = [&](live& l) {
            l.in_step = std::min(l.to_prefill, budget);
            budget -= l.in_step;
            chunk += l.in_step;
            prefix += static_cast<double>(l.in_step) * static_cast<double>(l.cached);
            ++chunks;
        };
        for (live& l : r.running)
            if (l.to_prefill > 0 && budget > 0) take(l);
        while (budget > 0 && !r.waiting.empty() && static_cast<std::int64_t>(r.running.size()) < m_cfg.max_batch) {
            live l = r.waiting.front();
            const std::int64_t len = req(l.id).prompt_tokens + l.generated;  // a preempted one is recomputed
            const std::int64_t need = blocks_for(len, m_cfg.block_tokens);
            if (need > r.free_blocks) break;
            r.waiting.pop_front();
            r.free_blocks -= need;
            l.blocks = need;
            l.cached = 0;
            l.to_prefill = len;
            take(l);
            r.running.push_back(l);
        }
        if (chunk == 0) {
            if (decoding > 0) record(rep, t, false, decoding, decoding, context, m_steps.decode(decoding, context));
            return;
        }
        record(rep, t, true, decoding + chunks, decoding + chunk, context,
               m_steps.mixed(decoding, context, chunk, prefix / static_cast<double>(chunk)));
        m_run.steps.back().decodes = decoding;
    }

    /// The end of a chunked-prefill step: chunks join the cache (a finished prompt gives its first token), the
    /// decodes add their token.
    void finish_chunked(replica_state& r, double t) {
        std::vector<live> still;
        for (live& l : r.running) {
            bool emits = l.decoding;
            if (l.decoding) ++l.cached;
            if (l.in_step > 0) {
                l.cached += l.in_step;
                l.to_prefill -= l.in_step;
                l.in_step = 0;
                emits = l.to_prefill == 0;
            }
            l.decoding = false;
            if (emits) emit(l, t);
            if (l.generated >= req(l.id).output_tokens)
                r.free_blocks += l.blocks;
            else
                still.push_back(l);
        }
        r.running = std::move(still);
    }

    void start_static(int rep, double t) {
        replica_state& r = m_replicas[static_cast<std::size_t>(rep)];
        if (r.running.empty()) {
            // Form a batch: as many waiting requests as the batch, the prefill budget and the KV cache allow.
            std::int64_t longest = 0, longest_total = 0;
            std::vector<live> batch;
            while (!r.waiting.empty() && static_cast<std::int64_t>(batch.size()) < m_cfg.max_batch) {
                const request& q = req(r.waiting.front().id);
                const std::int64_t p = std::max(longest, q.prompt_tokens);
                const std::int64_t total = std::max(longest_total, q.prompt_tokens + q.output_tokens - 1);
                const auto k = static_cast<std::int64_t>(batch.size()) + 1;
                if (!batch.empty() && k * p > m_cfg.max_prefill_tokens) break;
                // Padded: every sequence holds the batch's longest prompt + output.
                if (k * blocks_for(total, m_cfg.block_tokens) > m_cfg.kv_blocks) break;
                batch.push_back(r.waiting.front());
                r.waiting.pop_front();
                longest = p;
                longest_total = total;
            }
            if (batch.empty()) return;
            const auto k = static_cast<std::int64_t>(batch.size());
            r.batch_blocks = k * blocks_for(longest_total, m_cfg.block_tokens);
            r.free_blocks = m_cfg.kv_blocks - r.batch_blocks;
            r.batch_prompt = longest;
            r.batch_step = 0;
            r.running = std::move(batch);
            record(rep, t, true, k, k * longest, static_cast<double>(longest),
                   m_steps.prefill(k, static_cast<double>(longest)));
            return;
        }
        // Decode the whole (padded) batch: after prefill and batch_step decode steps each sequence holds
        // batch_prompt + batch_step tokens.
        const auto k = static_cast<std::int64_t>(r.running.size());
        const auto context = static_cast<double>(r.batch_prompt + r.batch_step);
        record(rep, t, false, k, k, context, m_steps.decode(k, context));
    }

    void finish_step(int rep, double t) {
        replica_state& r = m_replicas[static_cast<std::size_t>(rep)];
        r.busy = false;
        r.idle_since = t;
        if (!m_cfg.continuous) {
            if (!r.prefill) ++r.batch_step;
            bool all = true;
            for (live& l : r.running) {
                if (l.generated < req(l.id).output_tokens) emit(l, t);
                all &= l.generated >= req(l.id).output_tokens;
            }
            if (all) {
                r.running.clear();
                r.free_blocks = m_cfg.kv_blocks;
            }
            return;
        }
        if (m_cfg.chunk > 0 && !decodes_only(rep)) {
            finish_chunked(r, t);
            return;
        }
        if (r.prefill) {
            for (live& l : r.admitted) {
                emit(l, t);
                if (l.generated >= req(l.id).output_tokens)
                    r.free_blocks += l.blocks;
                else if (m_cfg.prefill_replicas > 0)
                    send(l, rep, t);
                else
                    r.running.push_back(l);
            }
            r.admitted.clear();
            return;
        }
        std::vector<live> still;
        for (live& l : r.running) {
            // The kept tokens: one, or the accepted drafts and the model's own (their keys and values stay).
            const std::int64_t kept =
                speculative()
                    ? std::min(1 + accepted_drafts(m_cfg.seed, l.id, l.generated, m_cfg.speculate, m_cfg.acceptance),
                               step_tokens(l))
                    : 1;
            l.cached += kept;
            m_run.steps[r.record].emitted += kept;
            for (std::int64_t i = 0; i < kept; ++i) emit(l, t);
            const std::int64_t keep = blocks_for(l.cached, m_cfg.block_tokens);
            r.free_blocks += l.blocks - keep;  // a rejected draft's blocks
            l.blocks = keep;
            if (l.generated >= req(l.id).output_tokens)
                r.free_blocks += l.blocks;
            else
                still.push_back(l);
        }
        r.running = std::move(still);
    }

    /// One more output token of `l` at `t`; its first and its last are recorded, and a closed-loop user whose
    /// request ends sends the next one.
    void emit(live& l, double t) {
        ++l.generated;
        outcome& o = out(l.id);
        if (o.first_token_s < 0) o.first_token_s = t;
        if (l.generated < req(l.id).output_tokens) return;
        o.finish_s = t;
        if (m_cfg.closed_loop_users > 0 && m_next_user_request < static_cast<std::int64_t>(m_reqs.size()))
            m_pending.emplace(t, static_cast<int>(m_next_user_request++));
    }

    const std::vector<request>& m_reqs;
    const server_config& m_cfg;
    const step_table& m_steps;
    std::vector<replica_state> m_replicas;
    std::multimap<double, int> m_pending;                           // arrival time -> request id
    std::multimap<double, std::pair<std::size_t, live>> m_sending;  // arrival -> transfer index, the request
    std::size_t m_dispatched = 0, m_sent = 0;
    std::int64_t m_next_user_request = 0;
    serve_run m_run;
};

}  // namespace

std::int64_t accepted_drafts(std::uint64_t seed, int id, std::int64_t generated, std::int64_t k, double acceptance) {
    std::int64_t a = 0;
    const std::uint64_t base =
        mix(mix(seed) ^ (static_cast<std::uint64_t>(id) << 32) ^ static_cast<std::uint64_t>(generated));
    while (a < k) {
        const double u = static_cast<double>(mix(base + static_cast<std::uint64_t>(a)) >> 11) * 0x1.0p-53;
        if (u >= acceptance) break;
        ++a;
    }
    return a;
}

serve_run run_server(const std::vector<request>& requests, const server_config& cfg, const step_table& steps) {
    if (cfg.speculate > 0 && (!cfg.continuous || cfg.chunk > 0 || cfg.prefill_replicas > 0 || !cfg.draft))
        throw input_error(
            "speculative decoding runs with continuous batching (without chunked prefill or "
            "disaggregation) and a draft model's steps");
    if (cfg.chunk > 0 && (!cfg.continuous || cfg.prefill_replicas > 0))
        throw input_error("chunked prefill runs with continuous batching on replicas that prefill and decode");
    if (cfg.prefill_replicas > 0 && (cfg.prefill_replicas >= cfg.replicas || !cfg.transfers || !cfg.continuous))
        throw input_error("serve.prefill_replicas: " + std::to_string(cfg.prefill_replicas) + " of " +
                          std::to_string(cfg.replicas) +
                          " replicas leaves none to decode; disaggregated serving needs a system of at least two "
                          "replicas (parallel.dp) and the continuous scheduler");
    return server(requests, cfg, steps).run();
}

}  // namespace tessel::serve
