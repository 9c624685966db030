#include "engine/program/program_yaml.h"

#include <cmath>
#include <map>

#include "models/core/expr.h"
#include "models/core/tracer.h"

namespace tessel {

namespace {

using vars_t = std::map<std::string, double>;

/// Replaces {expr} in a scalar with the value of expr under the loop variables.
std::string expand(const std::string& text, const vars_t& vars, const source_location& where) {
    if (text.find('{') == std::string::npos) return text;
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t open = text.find('{', pos);
        if (open == std::string::npos) {
            out += text.substr(pos);
            break;
        }
        out += text.substr(pos, open - pos);
        const size_t close = text.find('}', open);
        if (close == std::string::npos) throw input_error("unterminated '{' in '" + text + "'", where);
        const std::string inner = text.substr(open + 1, close - open - 1);
        try {
            const expr_value v = expression::parse(inner).eval([&](std::string_view n) -> std::optional<expr_value> {
                const auto it = vars.find(std::string(n));
                if (it == vars.end()) return std::nullopt;
                return it->second;
            });
            out += expr_value_str(v);
        } catch (const expr_error& e) {
            throw input_error("in '{" + inner + "}': " + e.what(), where);
        }
        pos = close + 1;
    }
    return out;
}

struct reader {
    const platform& plat;
    program& prog;
    const vars_t& vars;

    std::string text(const yaml_node& n, const std::string& what) const { return expand(n.scalar(what), vars, n.where()); }

    quantity number(const yaml_node& n, const std::string& what) const {
        const std::string t = text(n, what);
        try {
            return parse_quantity(t);
        } catch (const input_error& e) {
            throw input_error(what + ": " + e.message(), n.where());
        }
    }

    double count(const yaml_node& n, const std::string& what) const {
        const quantity q = number(n, what);
        if (q.dim != dimension::scalar || q.value < 0)
            throw input_error(what + ": expected a non-negative number (e.g. 1M), got '" + text(n, what) + "'", n.where());
        return q.value;
    }

    std::uint64_t bytes(const yaml_node& n, const std::string& what) const {
        const quantity q = number(n, what);
        if (q.dim != dimension::size && !(q.dim == dimension::scalar && q.value == 0))
            throw input_error(what + ": expected a size such as 1MiB or 4096B, got '" + text(n, what) + "'", n.where());
        if (q.value < 0 || std::floor(q.value) != q.value)
            throw input_error(what + ": expected a whole number of bytes, got '" + text(n, what) + "'", n.where());
        return static_cast<std::uint64_t>(q.value);
    }

    tick time(const yaml_node& n, const std::string& what) const {
        const quantity q = number(n, what);
        if (q.dim == dimension::cycles) return plat.clock().cycles(q.value);
        if (q.dim == dimension::time) return seconds_to_ticks(q.value);
        if (q.dim == dimension::scalar && q.value == 0) return 0;
        throw input_error(what + ": expected a time such as 1us or 100cycles, got '" + text(n, what) + "'", n.where());
    }

    endpoint place(const yaml_node& n, const std::string& what) const { return plat.resolve(text(n, what), n.where()); }
};

}  // namespace

program load_program(const std::string& path, const platform& plat) {
    return parse_program(yaml_node::load_file(path), plat);
}

std::string program_platform(const std::string& path) {
    const yaml_node root = yaml_node::load_file(path);
    root.expect_map("program file");
    return root.has("platform") ? root["platform"].scalar("platform") : std::string();
}

program parse_program(const yaml_node& root, const platform& plat) {
    root.expect_map("program file");
    root.check_keys({"program", "description", "platform", "strict", "steps"}, "program file");
    program prog;
    if (!root.has("program")) throw input_error("program file needs a 'program:' key with its name", root.where());
    prog.name = root["program"].scalar("program");
    if (root.has("strict")) prog.strict_schedule = root["strict"].as_bool("strict");
    const yaml_node steps = root["steps"];
    if (!steps.defined()) throw input_error("program file needs a 'steps:' list", root.where());
    steps.expect_seq("steps");

    struct pending {
        std::string id;
        yaml_node node;
        vars_t vars;
        std::uint32_t index;
    };
    std::vector<pending> all;
    std::map<std::string, std::uint32_t> ids;

    // First pass: expand loops, create steps without dependencies (they may point forward).
    for (const auto& item : steps.items()) {
        item.expect_map("step");
        item.check_keys({"id", "op", "after", "start", "for", "transfer", "compute", "sync", "delay"}, "step");
        std::vector<vars_t> combos{vars_t{}};
        if (item.has("for")) {
            const yaml_node loops = item["for"];
            loops.expect_map("for (a map of variable: range, e.g. {i: 0..15})");
            for (const auto& l : loops.entries()) {
                std::vector<double> values;
                if (l.value.is_seq()) {
                    for (const auto& v : l.value.items()) values.push_back(v.as_number("for." + l.key));
                } else {
                    const std::string r = l.value.scalar("for." + l.key);
                    const size_t dots = r.find("..");
                    if (dots == std::string::npos)
                        throw input_error("for." + l.key + ": expected a range 'a..b' (inclusive) or a list", l.value.where());
                    double a = 0, b = 0;
                    try {
                        a = expression::parse(r.substr(0, dots)).eval_number(nullptr);
                        b = expression::parse(r.substr(dots + 2)).eval_number(nullptr);
                    } catch (const expr_error& e) {
                        throw input_error("for." + l.key + ": " + e.what(), l.value.where());
                    }
                    if (b < a) throw input_error("for." + l.key + ": empty range '" + r + "'", l.value.where());
                    if (b - a > 1e7) throw input_error("for." + l.key + ": range '" + r + "' is too long", l.value.where());
                    for (double v = a; v <= b; v += 1) values.push_back(v);
                }
                std::vector<vars_t> next;
                for (const auto& c : combos)
                    for (double v : values) {
                        vars_t m = c;
                        m[l.key] = v;
                        next.push_back(m);
                    }
                combos.swap(next);
            }
        }
        for (const vars_t& vars : combos) {
            reader rd{plat, prog, vars};
            const std::string id = item.has("id") ? rd.text(item["id"], "id") : "step" + std::to_string(prog.size());
            if (ids.count(id)) throw input_error("step id '" + id + "' is used twice", item.has("id") ? item["id"].where() : item.where());
            const std::string opname = item.has("op") ? rd.text(item["op"], "op") : id;
            const std::uint32_t op = prog.intern_op(opname);
            int kinds = 0;
            for (const char* k : {"transfer", "compute", "sync", "delay"}) kinds += item.has(k) ? 1 : 0;
            if (kinds != 1)
                throw input_error("step '" + id + "' needs exactly one of: transfer, compute, sync, delay", item.where());
            std::uint32_t s;
            if (item.has("transfer")) {
                const yaml_node t = item["transfer"];
                t.expect_map("transfer");
                t.check_keys({"from", "to", "bytes", "from_address", "to_address"}, "transfer");
                for (const char* k : {"from", "to", "bytes"})
                    if (!t.has(k)) throw input_error(std::string("transfer needs '") + k + "'", t.where());
                endpoint from = rd.place(t["from"], "from"), to = rd.place(t["to"], "to");
                if (t.has("from_address")) from.address = rd.bytes(t["from_address"], "from_address");
                if (t.has("to_address")) to.address = rd.bytes(t["to_address"], "to_address");
                s = prog.add_transfer(op, from, to, rd.bytes(t["bytes"], "bytes"), {});
            } else if (item.has("compute")) {
                const yaml_node c = item["compute"];
                c.expect_map("compute");
                c.check_keys({"on", "macs", "vector_ops", "dtype", "gemm", "bytes"}, "compute");
                if (!c.has("on")) throw input_error("compute needs 'on:' (the unit that computes)", c.where());
                work w;
                if (c.has("dtype")) {
                    const std::string dt = rd.text(c["dtype"], "dtype");
                    const auto t = parse_dtype(dt);
                    if (!t) throw input_error("dtype: unknown data type '" + dt + "'; expected one of: " + dtype_list(), c["dtype"].where());
                    w.type = *t;
                }
                if (c.has("gemm")) {
                    const yaml_node gm = c["gemm"];
                    gm.expect_seq("gemm ([m, n, k])");
                    const auto dims = gm.items();
                    if (dims.size() != 3) throw input_error("gemm: expected [m, n, k]", gm.where());
                    w.m = static_cast<std::int64_t>(rd.count(dims[0], "gemm.m"));
                    w.n = static_cast<std::int64_t>(rd.count(dims[1], "gemm.n"));
                    w.k = static_cast<std::int64_t>(rd.count(dims[2], "gemm.k"));
                    w.batch = 1;
                    w.macs = static_cast<double>(w.m) * static_cast<double>(w.n) * static_cast<double>(w.k);
                    w.cls = op_class::gemm;
                }
                if (c.has("macs")) {
                    if (c.has("gemm")) throw input_error("compute: give macs or gemm, not both", c["macs"].where());
                    w.macs = rd.count(c["macs"], "macs");
                }
                if (c.has("vector_ops")) w.vector_ops = rd.count(c["vector_ops"], "vector_ops");
                if (c.has("bytes")) w.bytes_in = static_cast<double>(rd.bytes(c["bytes"], "bytes"));
                s = prog.add_compute(op, rd.place(c["on"], "on"), prog.add_work(w), {});
            } else if (item.has("sync")) {
                const yaml_node sy = item["sync"];
                sy.expect_map("sync");
                sy.check_keys({"on"}, "sync");
                if (!sy.has("on")) throw input_error("sync needs 'on:' (a barrier)", sy.where());
                const endpoint b = rd.place(sy["on"], "on");
                if (!plat.comp(b.comp).has_role(component::role::sync))
                    throw input_error("sync: '" + rd.text(sy["on"], "on") + "' is not a barrier", sy["on"].where());
                s = prog.add_sync(op, b, {});
            } else {
                s = prog.add_delay(op, rd.time(item["delay"], "delay"), {});
            }
            if (item.has("start")) prog.steps[s].not_before = rd.time(item["start"], "start");
            prog.step_labels.resize(prog.size());
            prog.step_labels[s] = id;
            ids[id] = s;
            all.push_back(pending{id, item, vars, s});
        }
    }
    // Second pass: dependencies (ids or glob patterns over ids).
    std::vector<std::string> id_list;
    for (const auto& [k, _] : ids) id_list.push_back(k);
    std::vector<std::vector<std::uint32_t>> deps(prog.size());
    for (const pending& p : all) {
        if (!p.node.has("after")) continue;
        reader rd{plat, prog, p.vars};
        const yaml_node after = p.node["after"];
        std::vector<yaml_node> refs = after.is_seq() ? after.items() : std::vector<yaml_node>{after};
        for (const auto& r : refs) {
            const std::string name = rd.text(r, "after");
            if (name.find_first_of("*?") != std::string::npos) {
                bool any = false;
                for (const auto& [k, v] : ids)
                    if (tracer::glob_match(name, k) && v != p.index) {
                        deps[p.index].push_back(v);
                        any = true;
                    }
                if (!any) throw input_error("after: no step id matches '" + name + "'", r.where());
                continue;
            }
            const auto it = ids.find(name);
            if (it == ids.end())
                throw input_error("after: no step with id '" + name + "'" + did_you_mean(name, id_list) +
                                      " (a missing dependency)",
                                  r.where());
            deps[p.index].push_back(it->second);
        }
    }
    // Rebuild the dependency arrays in step order.
    prog.deps.clear();
    for (size_t s = 0; s < prog.size(); ++s) {
        prog.steps[s].dep_begin = static_cast<std::uint32_t>(prog.deps.size());
        prog.steps[s].dep_count = static_cast<std::uint32_t>(deps[s].size());
        prog.deps.insert(prog.deps.end(), deps[s].begin(), deps[s].end());
    }
    return prog;
}

}  // namespace tessel
