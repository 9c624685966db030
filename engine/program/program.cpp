#include "engine/program/program.h"

#include <algorithm>
#include <stdexcept>

#include "models/core/error.h"
#include "models/core/limits.h"

namespace tessel {

const char* step_kind_name(step_kind k) {
    switch (k) {
        case step_kind::compute:
            return "compute";
        case step_kind::transfer:
            return "transfer";
        case step_kind::sync:
            return "sync";
        case step_kind::delay:
            return "delay";
    }
    return "?";
}

std::uint32_t program::intern_op(const std::string& op) {
    if (m_op_indexed > op_names.size()) {  // op_names was replaced: index afresh
        m_op_index.clear();
        m_op_indexed = 0;
    }
    for (; m_op_indexed < op_names.size(); ++m_op_indexed)
        m_op_index[op_names[m_op_indexed]] = static_cast<std::uint32_t>(m_op_indexed);
    if (auto it = m_op_index.find(op); it != m_op_index.end()) return it->second;
    op_names.push_back(op);
    m_op_index.emplace(op, static_cast<std::uint32_t>(op_names.size() - 1));
    m_op_indexed = op_names.size();
    return static_cast<std::uint32_t>(op_names.size() - 1);
}

std::size_t program::work_hash::operator()(const work& w) const {
    std::size_t h = static_cast<std::size_t>(w.type) * 31 + static_cast<std::size_t>(w.cls);
    for (const double v : {w.macs, w.vector_ops, w.bytes_in, w.bytes_weight, w.bytes_out})
        h = h * 0x9E3779B97F4A7C15ull + std::hash<double>{}(v);
    for (const std::int64_t v : {w.batch, w.m, w.n, w.k}) h = h * 0x9E3779B97F4A7C15ull + std::hash<std::int64_t>{}(v);
    return h;
}

std::uint32_t program::add_work(const work& w) {
    // works is public: an entry may have been replaced or the table cut since it was indexed; start again then.
    if (m_work_indexed > works.size()) m_work_index.clear(), m_work_indexed = 0;
    for (; m_work_indexed < works.size(); ++m_work_indexed)
        m_work_index.emplace(works[m_work_indexed], static_cast<std::uint32_t>(m_work_indexed));
    if (auto it = m_work_index.find(w); it != m_work_index.end()) {
        if (it->second < works.size() && works[it->second] == w) return it->second;
        m_work_index.clear();
        m_work_indexed = 0;
        return add_work(w);
    }
    works.push_back(w);
    m_work_index.emplace(w, static_cast<std::uint32_t>(works.size() - 1));
    m_work_indexed = works.size();
    return static_cast<std::uint32_t>(works.size() - 1);
}

std::uint32_t program::push(step st, const std::vector<std::uint32_t>& after) {
    if (static_cast<double>(steps.size()) >= limits().steps)
        throw steps_limit_error(
            "program '" + name + "' " + over_limit("steps", static_cast<double>(steps.size()) + 1, "steps or more"),
            static_cast<double>(steps.size()) + 1);
    st.dep_begin = static_cast<std::uint32_t>(deps.size());
    st.dep_count = static_cast<std::uint32_t>(after.size());
    deps.insert(deps.end(), after.begin(), after.end());
    steps.push_back(st);
    return static_cast<std::uint32_t>(steps.size() - 1);
}

std::uint32_t program::add_compute(std::uint32_t op, endpoint at, std::uint32_t w,
                                   const std::vector<std::uint32_t>& after) {
    step s;
    s.kind = step_kind::compute;
    s.op = op;
    s.at = at;
    s.work = w;
    return push(s, after);
}

std::uint32_t program::add_transfer(std::uint32_t op, endpoint from, endpoint to, std::uint64_t bytes,
                                    const std::vector<std::uint32_t>& after) {
    step s;
    s.kind = step_kind::transfer;
    s.op = op;
    s.at = from;
    s.to = to;
    s.bytes = bytes;
    return push(s, after);
}

std::uint32_t program::add_sync(std::uint32_t op, endpoint b, const std::vector<std::uint32_t>& after) {
    step s;
    s.kind = step_kind::sync;
    s.op = op;
    s.at = b;
    return push(s, after);
}

std::uint32_t program::add_delay(std::uint32_t op, tick length, const std::vector<std::uint32_t>& after) {
    step s;
    s.kind = step_kind::delay;
    s.op = op;
    s.length = length;
    return push(s, after);
}

void program::set_payload(std::uint32_t s, std::shared_ptr<const step_payload> p) {
    if (steps[s].kind != step_kind::compute)
        throw std::logic_error("program: a payload on " + describe(s) + ", not a compute step");
    use_payload(s, add_payload(std::move(p)));
}

std::uint32_t program::add_payload(std::shared_ptr<const step_payload> p) {
    payloads.push_back(std::move(p));
    return static_cast<std::uint32_t>(payloads.size() - 1);
}

void program::use_payload(std::uint32_t s, std::uint32_t index) {
    if (steps[s].kind != step_kind::compute)
        throw std::logic_error("program: a payload on " + describe(s) + ", not a compute step");
    if (index >= payloads.size())
        throw std::logic_error("program: payload " + std::to_string(index) + " does not exist");
    steps[s].payload = index;
}

std::uint32_t program::append(const program& other, const std::function<std::uint32_t(std::uint32_t)>& comp_of,
                              const std::vector<std::uint32_t>& after, append_memo* memo) {
    const bool anchored = other.strict_schedule && after.size() > 1 && !other.steps.empty();  // one delay more
    const double joined_steps = static_cast<double>(steps.size() + other.steps.size() + (anchored ? 1 : 0));
    if (joined_steps > limits().steps)
        throw steps_limit_error("program '" + name + "' " + over_limit("steps", joined_steps, "steps or more"),
                                joined_steps);
    if (traffic.enabled() && other.traffic.enabled())
        throw input_error("programs '" + name + "' and '" + other.name +
                          "' both have synthetic traffic and cannot be joined");
    auto rebind = [&](endpoint e) {
        if (e.valid() && comp_of) e.comp = comp_of(e.comp);
        return e;
    };
    // A static schedule placed after its inputs: its cycles count from when they are in (the anchor), and it
    // starts from the anchor alone so that the anchor's end is known when its first steps are issued.
    std::uint32_t anchor = ~0u;
    std::vector<std::uint32_t> joined;
    if (other.strict_schedule && !after.empty() && !other.steps.empty()) {
        anchor = after.size() == 1 ? after.front() : add_delay(intern_op(other.name + ".start"), 0, after);
        joined = {anchor};
    }
    const std::vector<std::uint32_t>& starts = anchor == ~0u ? after : joined;
    const auto offset = static_cast<std::uint32_t>(steps.size());
    const auto dep_offset = static_cast<std::uint32_t>(deps.size());
    // Works and op names never change once added: a memo shares them between copies. Payloads are shared too
    // unless they refer to step indices (shifted() gives a copy), which must follow each copy.
    const bool again = memo && memo->source == &other && memo->works != ~0u;
    auto work_offset = static_cast<std::uint32_t>(works.size());
    auto payload_offset = static_cast<std::uint32_t>(payloads.size());
    std::vector<std::uint32_t> local_op_of;
    std::vector<std::uint32_t>& op_of = memo ? memo->op_of : local_op_of;
    if (again) {
        work_offset = memo->works;
    } else {
        op_of.resize(other.op_names.size());
        for (size_t i = 0; i < other.op_names.size(); ++i) op_of[i] = intern_op(other.op_names[i]);
        works.insert(works.end(), other.works.begin(), other.works.end());
    }
    if (again && memo->payloads != ~0u) {
        payload_offset = memo->payloads;
    } else {
        bool moved_any = false;
        for (const auto& p : other.payloads) {
            auto moved = p ? p->shifted(offset) : nullptr;
            moved_any = moved_any || moved;
            if (moved)
                payloads.push_back(std::move(moved));
            else
                payloads.push_back(p);
        }
        if (memo) memo->payloads = moved_any ? ~0u : payload_offset;
    }
    if (memo) {
        memo->source = &other;
        memo->works = work_offset;
    }
    for (std::uint32_t d : other.deps) deps.push_back(d + offset);
    if (!step_labels.empty() || !other.step_labels.empty()) {
        step_labels.resize(offset);
        step_labels.insert(step_labels.end(), other.step_labels.begin(), other.step_labels.end());
        step_labels.resize(offset + other.steps.size());
    }
    for (step st : other.steps) {
        st.op = op_of[st.op];
        st.at = rebind(st.at);
        st.to = rebind(st.to);
        if (st.kind == step_kind::compute) st.work += work_offset;
        if (st.payload != ~0u) st.payload += payload_offset;
        st.dep_begin += dep_offset;
        if (st.dep_count == 0 && !starts.empty()) {
            st.dep_begin = static_cast<std::uint32_t>(deps.size());
            st.dep_count = static_cast<std::uint32_t>(starts.size());
            deps.insert(deps.end(), starts.begin(), starts.end());
        }
        if (st.anchor != ~0u)
            st.anchor += offset;
        else if (anchor != ~0u)
            st.anchor = anchor;
        steps.push_back(st);
    }
    for (placement pl : other.placements) {
        if (comp_of) pl.comp = comp_of(pl.comp);
        placements.push_back(std::move(pl));
    }
    strict_schedule = strict_schedule || other.strict_schedule;
    if (other.traffic.enabled()) {
        traffic = other.traffic;
        if (comp_of) traffic.network = comp_of(traffic.network);
    }
    return offset;
}

program::dependency_cycle program::find_cycle() const {
    const size_t n = steps.size();
    // Kahn's order over the successor lists: the steps it never reaches are blocked.
    std::vector<std::uint32_t> indeg(n), succ_begin(n + 1, 0), succ(deps.size());
    for (size_t s = 0; s < n; ++s) {
        indeg[s] = steps[s].dep_count;
        for (std::uint32_t i = 0; i < steps[s].dep_count; ++i)
            ++succ_begin[deps_of(static_cast<std::uint32_t>(s))[i] + 1];
    }
    for (size_t s = 0; s < n; ++s) succ_begin[s + 1] += succ_begin[s];
    {
        std::vector<std::uint32_t> fill(succ_begin.begin(), succ_begin.end() - 1);
        for (size_t s = 0; s < n; ++s)
            for (std::uint32_t i = 0; i < steps[s].dep_count; ++i)
                succ[fill[deps_of(static_cast<std::uint32_t>(s))[i]]++] = static_cast<std::uint32_t>(s);
    }
    std::vector<std::uint32_t> ready;
    for (size_t s = 0; s < n; ++s)
        if (indeg[s] == 0) ready.push_back(static_cast<std::uint32_t>(s));
    size_t done = 0;
    while (!ready.empty()) {
        const std::uint32_t s = ready.back();
        ready.pop_back();
        ++done;
        for (std::uint32_t i = succ_begin[s]; i < succ_begin[s + 1]; ++i)
            if (--indeg[succ[i]] == 0) ready.push_back(succ[i]);
    }
    dependency_cycle c;
    c.blocked = n - done;
    if (done == n) return c;
    // Every blocked step waits for a blocked step, so walking back from one along blocked dependencies must repeat
    // a step; the steps from the repeat on, read in reverse, are a cycle along the data flow. (Walking forwards
    // could end at a step downstream of the cycle that nothing waits for.)
    std::uint32_t cur = 0;
    while (indeg[cur] == 0) ++cur;
    std::vector<std::uint32_t> pos(n, ~0u), path;
    while (pos[cur] == ~0u) {
        pos[cur] = static_cast<std::uint32_t>(path.size());
        path.push_back(cur);
        const std::uint32_t* d = deps_of(cur);
        std::uint32_t i = 0;
        while (indeg[d[i]] == 0) ++i;  // a blocked step has a blocked dependency
        cur = d[i];
    }
    c.steps.assign(path.begin() + pos[cur], path.end());
    std::reverse(c.steps.begin(), c.steps.end());
    // From the step listed first, so the message is the same wherever the walk began.
    std::rotate(c.steps.begin(), std::min_element(c.steps.begin(), c.steps.end()), c.steps.end());
    return c;
}

std::string program::cycle_message(const dependency_cycle& c) const {
    std::string m = "program '" + name + "' can never finish: ";
    if (c.steps.size() == 1) {
        m += describe(c.steps.front()) + " waits for itself";
    } else {
        m += "its steps wait on each other in a cycle: ";
        for (std::uint32_t s : c.steps) m += describe(s) + " -> ";
        if (!c.steps.empty()) m += describe(c.steps.front());
    }
    return m + " (" + std::to_string(c.blocked) + (c.blocked == 1 ? " step is" : " steps are") + " blocked)";
}

std::string program::describe(std::uint32_t s) const {
    std::string d = "step " + std::to_string(s);
    if (s < step_labels.size() && !step_labels[s].empty()) return d + " '" + step_labels[s] + "'";
    const step& st = steps[s];
    d += std::string(" (") + step_kind_name(st.kind);
    if (st.op < op_names.size()) d += " of op '" + op_names[st.op] + "'";
    return d + ")";
}

}  // namespace tessel
