#include "engine/program/program.h"

namespace tessel {

const char* step_kind_name(step_kind k) {
    switch (k) {
        case step_kind::compute: return "compute";
        case step_kind::transfer: return "transfer";
        case step_kind::sync: return "sync";
        case step_kind::delay: return "delay";
    }
    return "?";
}

std::uint32_t program::intern_op(const std::string& op) {
    for (size_t i = op_names.size(); i-- > 0;)
        if (op_names[i] == op) return static_cast<std::uint32_t>(i);
    op_names.push_back(op);
    return static_cast<std::uint32_t>(op_names.size() - 1);
}

std::uint32_t program::add_work(const work& w) {
    works.push_back(w);
    return static_cast<std::uint32_t>(works.size() - 1);
}

std::uint32_t program::push(step st, const std::vector<std::uint32_t>& after) {
    st.dep_begin = static_cast<std::uint32_t>(deps.size());
    st.dep_count = static_cast<std::uint32_t>(after.size());
    deps.insert(deps.end(), after.begin(), after.end());
    steps.push_back(st);
    return static_cast<std::uint32_t>(steps.size() - 1);
}

std::uint32_t program::add_compute(std::uint32_t op, endpoint at, std::uint32_t w, const std::vector<std::uint32_t>& after) {
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

std::string program::describe(std::uint32_t s) const {
    std::string d = "step " + std::to_string(s);
    if (s < step_labels.size() && !step_labels[s].empty()) return d + " '" + step_labels[s] + "'";
    const step& st = steps[s];
    d += std::string(" (") + step_kind_name(st.kind);
    if (st.op < op_names.size()) d += " of op '" + op_names[st.op] + "'";
    return d + ")";
}

}  // namespace tessel
