#include "engine/program/program_yaml.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>

#include "engine/program/program_emit.h"
#include "engine/program/traffic.h"
#include "models/core/checked.h"
#include "models/core/expr.h"
#include "models/core/limits.h"
#include "models/core/tracer.h"

namespace tessel {

namespace {

using vars_t = std::map<std::string, double>;
using params_t = std::map<std::string, expr_value, std::less<>>;

/// The platform's parameters as expression values: a plain number ("16", "1.5M") is a number, anything else
/// ("32B/cycle", "fp16") its text.
params_t platform_params(const platform& plat) {
    params_t out;
    for (const auto& [name, text] : plat.parameters()) {
        try {
            const quantity q = parse_quantity(text);
            if (q.dim == dimension::scalar) {
                out[name] = q.value;
                continue;
            }
        } catch (const input_error&) {
        }
        out[name] = text;
    }
    return out;
}

/// Names an expression sees: the loop variables, then the platform's parameters.
expr_scope scope_of(const vars_t& vars, const params_t& params) {
    return [&vars, &params](std::string_view n) -> std::optional<expr_value> {
        if (!vars.empty()) {
            const auto it = vars.find(std::string(n));
            if (it != vars.end()) return it->second;
        }
        const auto p = params.find(n);
        if (p != params.end()) return p->second;
        return std::nullopt;
    };
}

/// Replaces {expr} in a scalar with the value of expr under the loop variables and platform parameters.
std::string expand(const std::string& text, const vars_t& vars, const params_t& params, const source_location& where) {
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
            const expr_value v = expression::parse(inner).eval(scope_of(vars, params));
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
    const params_t& params;

    std::string text(const yaml_node& n, const std::string& what) const {
        return expand(n.scalar(what), vars, params, n.where());
    }

    quantity number(const yaml_node& n, const std::string& what) const {
        return parse_quantity(text(n, what), what, n.where());
    }

    double count(const yaml_node& n, const std::string& what) const {
        const quantity q = number(n, what);
        if (q.dim != dimension::scalar || q.value < 0)
            throw input_error(what + ": expected a non-negative number (e.g. 1M), got '" + text(n, what) + "'",
                              n.where());
        return q.value;
    }

    std::uint64_t bytes(const yaml_node& n, const std::string& what) const {
        const quantity q = number(n, what);
        if (q.dim != dimension::size && !(q.dim == dimension::scalar && q.value == 0))
            throw input_error(what + ": expected a size such as 1MiB or 4096B, got '" + text(n, what) + "'", n.where());
        if (q.value < 0 || std::floor(q.value) != q.value)
            throw input_error(what + ": expected a whole number of bytes, got '" + text(n, what) + "'", n.where());
        return static_cast<std::uint64_t>(checked_count(q.value, what, n.where()));
    }

    tick time(const yaml_node& n, const std::string& what) const {
        const quantity q = number(n, what);
        if (q.value < 0)
            throw input_error(what + ": a time must not be negative, got '" + text(n, what) + "'", n.where());
        if (q.dim == dimension::cycles) return plat.clock().cycles(q.value);
        if (q.dim == dimension::time) return seconds_to_ticks(q.value);
        if (q.dim == dimension::scalar && q.value == 0) return 0;
        throw input_error(what + ": expected a time such as 1us or 100cycles, got '" + text(n, what) + "'", n.where());
    }

    endpoint place(const yaml_node& n, const std::string& what) const { return plat.resolve(text(n, what), n.where()); }

    /// A place a transfer reads or writes: a memory, a component holding memory (a tile), or a network port.
    endpoint data_place(const yaml_node& n, const std::string& what) const {
        const endpoint e = place(n, what);
        const component& c = plat.comp(e.comp);
        using r = component::role;
        if (!c.has_role(r::memory) && !c.has_role(r::interconnect))
            throw input_error(what + ": '" + text(n, what) + "' is a " + c.kind_name() +
                                  ", which holds no data; a transfer moves "
                                  "data between memories (a tile, its sram, an hbm) or network ports",
                              n.where());
        return e;
    }

    /// A place a compute step runs on: a component that computes.
    endpoint compute_place(const yaml_node& n, const std::string& what) const {
        const endpoint e = place(n, what);
        const component& c = plat.comp(e.comp);
        if (!c.has_role(component::role::compute))
            throw input_error(what + ": '" + text(n, what) + "' is a " + c.kind_name() +
                                  ", which does not compute; a compute "
                                  "step runs on a processing element (a tile, its pe, a gpu)",
                              n.where());
        return e;
    }
};

}  // namespace

program load_program(const std::string& path, const platform& plat, param_context* ctx) {
    return parse_program_text(yaml_node::read_file(path), path, plat, ctx);
}

program parse_program_text(std::string text, const std::string& name, const platform& plat, param_context* ctx) {
    emitted_tables tables = split_emitted_tables(text);
    return parse_program(yaml_node::load_string(text, name), plat, ctx, &tables);
}

std::string program_platform(const std::string& path) {
    std::string text = yaml_node::read_file(path);
    split_emitted_tables(text);
    const yaml_node root = yaml_node::load_string(text, path);
    root.expect_map("program file");
    return root.has("platform") ? root["platform"].scalar("platform") : std::string();
}

namespace {

/// The program's own knobs (a traffic rate, a message size): numbers or text, overridable with
/// --set program.NAME=VALUE; they hide platform parameters of the same name.
void read_program_parameters(const yaml_node& ps, param_context* ctx, params_t& params) {
    ps.expect_map("parameters (a map of name: value)");
    for (const auto& e : ps.entries()) {
        std::string text = e.value.scalar("parameters." + e.key);
        const std::string path = "program." + e.key;
        if (ctx) {
            if (const auto* o = ctx->find_override(path)) text = o->text;
            ctx->record(path, text);
        }
        try {
            const quantity q = parse_quantity(text);
            if (q.dim == dimension::scalar) {
                params[e.key] = q.value;
                continue;
            }
        } catch (const input_error&) {
        }
        params[e.key] = text;
    }
}

// A step's loops: the variables' values, the last varying fastest. Each expansion is its index in that order
// (an odometer), so the loop variables of millions of steps are never held at once.
struct loop_set {
    std::vector<std::pair<std::string, std::vector<double>>> loops;
    std::uint64_t count() const {
        std::uint64_t n = 1;
        for (const auto& [_, values] : loops) n *= values.size();
        return n;
    }
    vars_t vars(std::uint64_t i) const {
        vars_t v;
        for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
            v[it->first] = it->second[i % it->second.size()];
            i /= it->second.size();
        }
        return v;
    }
};

/// The values of one loop variable of `for:`: a list (plain numbers or expressions) or an inclusive range 'a..b'.
std::vector<double> loop_values(const std::string& key, const yaml_node& value, const params_t& params) {
    const vars_t no_vars;
    const std::string what = "for." + key;
    auto number = [&](const std::string& text, const source_location& where) {
        try {
            return expression::parse(text).eval_number(scope_of(no_vars, params));
        } catch (const expr_error& e) {
            throw input_error(what + ": in '" + text + "': " + e.what(), where);
        }
    };
    std::vector<double> values;
    if (value.is_seq()) {
        for (const auto& v : value.items()) {
            // A plain number ("16", "1K") as before; else an expression ("k-1", "{k-1}").
            const std::string t = expand(v.scalar(what), no_vars, params, v.where());
            std::optional<double> plain;
            try {
                const quantity q = parse_quantity(t);
                if (q.dim == dimension::scalar) plain = q.value;
            } catch (const input_error&) {
            }
            values.push_back(plain ? *plain : number(t, v.where()));
        }
    } else {
        const std::string r = expand(value.scalar(what), no_vars, params, value.where());
        const size_t dots = r.find("..");
        if (dots == std::string::npos)
            throw input_error(what + ": expected a range 'a..b' (inclusive) or a list", value.where());
        const double a = number(r.substr(0, dots), value.where());
        const double b = number(r.substr(dots + 2), value.where());
        if (!std::isfinite(a) || !std::isfinite(b) || std::fabs(a) > 9e15 || std::fabs(b) > 9e15)
            throw input_error(what + ": range '" + r + "' needs finite bounds within +-9e15", value.where());
        if (b < a) throw input_error(what + ": empty range '" + r + "'", value.where());
        if (b - a > 1e7) throw input_error(what + ": range '" + r + "' is too long", value.where());
        for (double v = a; v <= b; v += 1) values.push_back(v);
    }
    return values;
}

/// A step's `for:` map; `steps_so_far` counts the steps already made, for the steps budget.
loop_set read_loops(const yaml_node& loops, const params_t& params, size_t steps_so_far) {
    loops.expect_map("for (a map of variable: range, e.g. {i: 0..15})");
    loop_set out;
    for (const auto& l : loops.entries()) out.loops.emplace_back(l.key, loop_values(l.key, l.value, params));
    // The loops multiply: refuse a product over the steps budget before building any of it.
    double planned = 1;
    for (const auto& [_, values] : out.loops) planned *= static_cast<double>(values.size());
    if (planned + static_cast<double>(steps_so_far) > limits().steps)
        throw input_error("for: the loops make " + format_number(planned) + " steps; the program " +
                              over_limit("steps", planned + static_cast<double>(steps_so_far), "steps"),
                          loops.where());
    return out;
}

/// A step's `transfer:`.
std::uint32_t add_transfer_step(const reader& rd, const yaml_node& t, std::uint32_t op) {
    t.expect_map("transfer");
    t.check_keys({"from", "to", "bytes", "from_address", "to_address"}, "transfer");
    for (const char* k : {"from", "to", "bytes"})
        if (!t.has(k)) throw input_error(std::string("transfer needs '") + k + "'", t.where());
    endpoint from = rd.data_place(t["from"], "from"), to = rd.data_place(t["to"], "to");
    if (t.has("from_address")) from.address = rd.bytes(t["from_address"], "from_address");
    if (t.has("to_address")) to.address = rd.bytes(t["to_address"], "to_address");
    return rd.prog.add_transfer(op, from, to, rd.bytes(t["bytes"], "bytes"), {});
}

/// A compute step's `gemm: [m, n, k]`, into w.
void read_gemm(const reader& rd, const yaml_node& gm, work& w) {
    gm.expect_seq("gemm ([m, n, k])");
    const auto dims = gm.items();
    if (dims.size() != 3) throw input_error("gemm: expected [m, n, k]", gm.where());
    const char* names[] = {"gemm.m", "gemm.n", "gemm.k"};
    std::int64_t mnk[3];
    for (int i = 0; i < 3; ++i) {
        mnk[i] = checked_count(rd.count(dims[static_cast<size_t>(i)], names[i]), names[i],
                               dims[static_cast<size_t>(i)].where());
        if (mnk[i] < 1)
            throw input_error(std::string(names[i]) + ": must be at least 1, got 0",
                              dims[static_cast<size_t>(i)].where());
    }
    w.m = mnk[0];
    w.n = mnk[1];
    w.k = mnk[2];
    (void)checked_mul(checked_mul(w.m, w.n, "gemm m x n", gm.where()), w.k, "gemm m x n x k", gm.where());
    w.batch = 1;
    w.macs = static_cast<double>(w.m) * static_cast<double>(w.n) * static_cast<double>(w.k);
    w.cls = op_class::gemm;
}

/// A step's `compute:`.
std::uint32_t add_compute_step(const reader& rd, const yaml_node& c, std::uint32_t op) {
    c.expect_map("compute");
    c.check_keys({"on", "macs", "vector_ops", "dtype", "gemm", "bytes"}, "compute");
    if (!c.has("on")) throw input_error("compute needs 'on:' (the unit that computes)", c.where());
    work w;
    if (c.has("dtype")) {
        const std::string dt = rd.text(c["dtype"], "dtype");
        const auto t = parse_dtype(dt);
        if (!t)
            throw input_error("dtype: unknown data type '" + dt + "'; expected one of: " + dtype_list(),
                              c["dtype"].where());
        w.type = *t;
    }
    if (c.has("gemm")) read_gemm(rd, c["gemm"], w);
    if (c.has("macs")) {
        if (c.has("gemm")) throw input_error("compute: give macs or gemm, not both", c["macs"].where());
        w.macs = rd.count(c["macs"], "macs");
    }
    if (c.has("vector_ops")) w.vector_ops = rd.count(c["vector_ops"], "vector_ops");
    if (c.has("bytes")) w.bytes_in = static_cast<double>(rd.bytes(c["bytes"], "bytes"));
    if (!c.has("gemm") && !c.has("macs") && !c.has("vector_ops") && !c.has("bytes"))
        throw input_error(
            "compute needs the work it does: macs, gemm: [m, n, k], vector_ops or bytes (operands "
            "it loads)",
            c.where());
    return rd.prog.add_compute(op, rd.compute_place(c["on"], "on"), rd.prog.add_work(w), {});
}

/// A step's `sync:`.
std::uint32_t add_sync_step(const reader& rd, const yaml_node& sy, std::uint32_t op) {
    sy.expect_map("sync");
    sy.check_keys({"on"}, "sync");
    if (!sy.has("on")) throw input_error("sync needs 'on:' (a barrier)", sy.where());
    const endpoint b = rd.place(sy["on"], "on");
    if (!rd.plat.comp(b.comp).has_role(component::role::sync))
        throw input_error("sync: '" + rd.text(sy["on"], "on") + "' is not a barrier", sy["on"].where());
    return rd.prog.add_sync(op, b, {});
}

/// The `steps:` list into a program. Everything here is linear in the number of steps (a wafer-scale program has
/// millions): ids and op names are hashed, labels appended, and a glob in `after:` looks only at the ids that
/// share its literal prefix.
class step_list_parser {
public:
    step_list_parser(const yaml_node& steps, const platform& plat, const params_t& params, program& prog)
        : m_steps(steps),
          m_plat(plat),
          m_params(params),
          m_prog(prog),
          m_items(steps.items()),
          m_item_loops(m_items.size()) {}

    void parse() {
        // First pass: expand loops, create steps without dependencies (they may point forward).
        for (std::uint32_t item_index = 0; item_index < m_items.size(); ++item_index) expand_item(item_index);
        const std::vector<std::vector<std::uint32_t>> deps = resolve_after();
        store_deps(deps);
        refuse_cycles(deps);
    }

private:
    struct pending {
        std::uint32_t item;   // in `items`
        std::uint64_t combo;  // the expansion, in its loop_set's order
        std::uint32_t index;  // the step
    };

    std::uint32_t intern(const std::string& name) {
        const auto [it, fresh] = m_op_index.emplace(name, static_cast<std::uint32_t>(m_prog.op_names.size()));
        if (fresh) m_prog.op_names.push_back(name);
        return it->second;
    }

    /// One item of `steps:`: its loops, then one step per expansion.
    void expand_item(std::uint32_t item_index) {
        const yaml_node& item = m_items[item_index];
        item.expect_map("step");
        item.check_keys({"id", "op", "after", "start", "for", "transfer", "compute", "sync", "delay"}, "step");
        loop_set& loop = m_item_loops[item_index];
        if (item.has("for")) loop = read_loops(item["for"], m_params, m_prog.size());
        const bool has_after = item.has("after");
        const std::uint64_t expansions = loop.count();
        for (std::uint64_t combo = 0; combo < expansions; ++combo) {
            const vars_t vars = loop.vars(combo);
            reader rd{m_plat, m_prog, vars, m_params};
            const std::string id = item.has("id") ? rd.text(item["id"], "id") : "step" + std::to_string(m_prog.size());
            const std::uint32_t op = intern(item.has("op") ? rd.text(item["op"], "op") : id);
            int kinds = 0;
            for (const char* k : {"transfer", "compute", "sync", "delay"}) kinds += item.has(k) ? 1 : 0;
            if (kinds != 1)
                throw input_error("step '" + id + "' needs exactly one of: transfer, compute, sync, delay",
                                  item.where());
            std::uint32_t s;
            if (item.has("transfer"))
                s = add_transfer_step(rd, item["transfer"], op);
            else if (item.has("compute"))
                s = add_compute_step(rd, item["compute"], op);
            else if (item.has("sync"))
                s = add_sync_step(rd, item["sync"], op);
            else
                s = m_prog.add_delay(op, rd.time(item["delay"], "delay"), {});
            if (item.has("start")) m_prog.steps[s].not_before = rd.time(item["start"], "start");
            if (!m_ids.emplace(id, s).second)
                throw input_error("step id '" + id + "' is used twice",
                                  item.has("id") ? item["id"].where() : item.where());
            m_prog.step_labels.push_back(id);  // steps are appended in order: label s belongs to step s
            if (has_after) m_with_deps.push_back(pending{item_index, combo, s});
        }
    }

    /// Second pass: dependencies (ids or glob patterns over ids), per step. A glob's matches are found once per
    /// pattern text among the ids that start with its literal prefix (the ids map is sorted).
    std::vector<std::vector<std::uint32_t>> resolve_after() const {
        std::vector<std::vector<std::uint32_t>> deps(m_prog.size());
        std::unordered_map<std::string, std::vector<std::uint32_t>> glob_matches;
        for (const pending& p : m_with_deps) {
            const vars_t vars = m_item_loops[p.item].vars(p.combo);
            reader rd{m_plat, m_prog, vars, m_params};
            const yaml_node after = m_items[p.item]["after"];
            std::vector<yaml_node> refs = after.is_seq() ? after.items() : std::vector<yaml_node>{after};
            for (const auto& r : refs) {
                const std::string name = rd.text(r, "after");
                const size_t wild = name.find_first_of("*?");
                if (wild != std::string::npos) {
                    auto cached = glob_matches.find(name);
                    if (cached == glob_matches.end()) {
                        std::vector<std::uint32_t> hits;
                        const std::string prefix = name.substr(0, wild);
                        for (auto it = m_ids.lower_bound(prefix);
                             it != m_ids.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
                            if (tracer::glob_match(name, it->first)) hits.push_back(it->second);
                        cached = glob_matches.emplace(name, std::move(hits)).first;
                    }
                    bool any = false;
                    for (std::uint32_t v : cached->second)
                        if (v != p.index) {
                            deps[p.index].push_back(v);
                            any = true;
                        }
                    if (!any) throw input_error("after: no step id matches '" + name + "'", r.where());
                    continue;
                }
                const auto it = m_ids.find(name);
                if (it == m_ids.end()) {
                    std::vector<std::string> id_list;
                    id_list.reserve(m_ids.size());
                    for (const auto& [k, _] : m_ids) id_list.push_back(k);
                    throw input_error("after: no step with id '" + name + "'" + did_you_mean(name, id_list) +
                                          " (a missing dependency)",
                                      r.where());
                }
                deps[p.index].push_back(it->second);
            }
        }
        return deps;
    }

    /// Rebuilds the dependency arrays in step order.
    void store_deps(const std::vector<std::vector<std::uint32_t>>& deps) {
        m_prog.deps.clear();
        for (size_t s = 0; s < m_prog.size(); ++s) {
            m_prog.steps[s].dep_begin = static_cast<std::uint32_t>(m_prog.deps.size());
            m_prog.steps[s].dep_count = static_cast<std::uint32_t>(deps[s].size());
            m_prog.deps.insert(m_prog.deps.end(), deps[s].begin(), deps[s].end());
        }
    }

    /// A cycle among the `after:` lists is refused here, at its step listed first (the executor's own check is for
    /// programs built by mappers). Only a dependency on a later-listed step, or on the step itself, can close one.
    void refuse_cycles(const std::vector<std::vector<std::uint32_t>>& deps) const {
        bool forward = true;
        for (size_t s = 0; s < m_prog.size() && forward; ++s)
            for (std::uint32_t d : deps[s]) forward = forward && d < s;
        if (forward) return;
        const program::dependency_cycle c = m_prog.find_cycle();
        if (c.steps.empty()) return;
        // Every step of a cycle has `after:`, so it is among with_deps (in step order).
        const auto it = std::lower_bound(m_with_deps.begin(), m_with_deps.end(), c.steps.front(),
                                         [](const pending& p, std::uint32_t s) { return p.index < s; });
        throw input_error(m_prog.cycle_message(c),
                          it != m_with_deps.end() ? m_items[it->item].where() : m_steps.where());
    }

    const yaml_node& m_steps;
    const platform& m_plat;
    const params_t& m_params;
    program& m_prog;
    const std::vector<yaml_node> m_items;
    std::vector<loop_set> m_item_loops;
    std::vector<pending> m_with_deps;  // steps that have `after:`
    std::map<std::string, std::uint32_t> m_ids;
    std::unordered_map<std::string, std::uint32_t> m_op_index;
};

}  // namespace

program parse_program(const yaml_node& root, const platform& plat, param_context* ctx, emitted_tables* tables) {
    root.expect_map("program file");
    root.check_keys({"program", "description", "platform", "parameters", "strict", "steps", "traffic", "emitted"},
                    "program file");
    program prog;
    if (!root.has("program")) throw input_error("program file needs a 'program:' key with its name", root.where());
    prog.name = root["program"].scalar("program");
    if (root.has("strict")) prog.strict_schedule = root["strict"].as_bool("strict");
    if (root.has("emitted")) {
        // A program written by --emit-program: exact tables, no loops or expressions.
        for (const char* k : {"steps", "traffic", "parameters"})
            if (root.has(k))
                throw input_error(std::string("an emitted program has its steps in 'emitted:'; remove '") + k + "'",
                                  root[k].where());
        read_emitted_program(root["emitted"], plat, prog, tables);
        return prog;
    }
    const yaml_node steps = root["steps"];
    if (!steps.defined() && !root.has("traffic"))
        throw input_error("program file needs a 'steps:' list or a 'traffic:' block", root.where());
    if (steps.defined()) steps.expect_seq("steps");
    params_t params = platform_params(plat);
    if (root.has("parameters")) read_program_parameters(root["parameters"], ctx, params);
    step_list_parser(steps, plat, params, prog).parse();
    // Synthetic traffic: packets after the steps, with no dependencies either way.
    if (root.has("traffic")) {
        const vars_t no_vars;
        expand_traffic(
            root["traffic"], plat,
            [&](const yaml_node& n, const std::string& what) {
                return expand(n.scalar(what), no_vars, params, n.where());
            },
            prog);
    }
    return prog;
}

}  // namespace tessel
