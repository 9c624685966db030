#include "engine/program/program_emit.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string_view>
#include <unordered_map>

#include "models/baseline/kernel_device.h"
#include "models/bsp/bsp_superstep.h"
#include "models/core/grid_span.h"
#include "models/core/pe_grid.h"
#include "models/core/unit_gang.h"
#include "models/streaming/tsp.h"

namespace tessel {

namespace {

std::string quoted(const std::string& s) {
    YAML::Emitter e;
    e << YAML::DoubleQuoted << s;
    return e.c_str();
}

/// 17 significant digits: strtod gives back the same double.
std::string exact(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

std::string index_or_dash(std::uint32_t i) { return i == ~0u ? "-" : std::to_string(i); }

/// A work's 11 columns, each after a space: macs vector_ops bytes_in bytes_weight bytes_out dtype class batch m n k.
void write_work(std::ostream& out, const work& w) {
    out << ' ' << exact(w.macs) << ' ' << exact(w.vector_ops) << ' ' << exact(w.bytes_in) << ' '
        << exact(w.bytes_weight) << ' ' << exact(w.bytes_out) << ' ' << dtype_name(w.type) << ' '
        << op_class_name(w.cls) << ' ' << w.batch << ' ' << w.m << ' ' << w.n << ' ' << w.k;
}

/// "[x0,x1) x [y0,y1)": a rectangle of PEs, for messages.
std::string rect_text(const grid_rect& s) {
    return "[" + std::to_string(s.x0) + "," + std::to_string(s.x1) + ") x [" + std::to_string(s.y0) + "," +
           std::to_string(s.y1) + ")";
}

void write_stream(std::ostream& out, const tsp::stream_use& u) {
    out << ' ' << u.stream << ' ' << u.count << ' ' << (u.east ? 1 : 0) << ' ' << u.from << ' ' << u.to << ' '
        << u.offset;
}

/// The lines of a block scalar, each with its file line, read token by token.
class table_reader {
public:
    /// The block `what` ("emitted.steps") at node `n`: its text from `tables` when split_emitted_tables cut it out.
    table_reader(const yaml_node& n, std::string what, emitted_tables* tables)
        : m_what(std::move(what)), m_where(n.where()) {
        const std::string key = m_what.substr(m_what.find('.') + 1);
        if (tables && tables->body.count(key))
            m_text = std::move(tables->body[key]);
        else
            m_text = n.scalar(m_what);
        // A block scalar's text starts on the line after its key.
        m_line = m_where.line;
    }
    /// Lines in the block (an upper bound on its rows, to reserve for them).
    size_t line_count() const { return static_cast<size_t>(std::count(m_text.begin(), m_text.end(), '\n')) + 1; }
    /// Moves to the next non-empty line; false at the end.
    bool next_line() {
        for (;;) {
            if (m_pos >= m_text.size()) return false;
            const size_t end = m_text.find('\n', m_pos);
            m_cur = std::string_view(m_text).substr(m_pos, end == std::string::npos ? std::string::npos : end - m_pos);
            m_pos = end == std::string::npos ? m_text.size() : end + 1;
            ++m_line;
            m_tok = 0;
            if (m_cur.find_first_not_of(" \t\r") != std::string_view::npos) return true;
        }
    }
    bool at_end() {
        skip_space();
        return m_tok >= m_cur.size();
    }
    std::string_view token(const char* what) {
        skip_space();
        if (m_tok >= m_cur.size()) fail(std::string("missing ") + what);
        const size_t start = m_tok;
        while (m_tok < m_cur.size() && m_cur[m_tok] != ' ' && m_cur[m_tok] != '\t' && m_cur[m_tok] != '\r') ++m_tok;
        return m_cur.substr(start, m_tok - start);
    }
    /// The rest of the line (a name), trimmed; may be empty.
    std::string rest() {
        skip_space();
        std::string_view r = m_cur.substr(std::min(m_tok, m_cur.size()));
        while (!r.empty() && (r.back() == ' ' || r.back() == '\r')) r.remove_suffix(1);
        m_tok = m_cur.size();
        return std::string(r);
    }
    std::uint64_t u64(const char* what) {
        const std::string t(token(what));
        char* end = nullptr;
        errno = 0;
        const unsigned long long v = std::strtoull(t.c_str(), &end, 10);
        if (t.empty() || t[0] == '-' || *end != '\0')
            fail(std::string(what) + ": expected a whole number, got '" + t + "'");
        if (errno == ERANGE) fail(std::string(what) + " " + t + " is out of range");
        return v;
    }
    /// A whole number that fits 32 bits (a unit, slice, tile or packet count): no silent wrap.
    std::uint32_t u32(const char* what) {
        const std::uint64_t v = u64(what);
        if (v > 0xffffffffULL) fail(std::string(what) + " " + std::to_string(v) + " is out of range");
        return static_cast<std::uint32_t>(v);
    }
    /// A signed whole number within [lo, hi].
    std::int64_t ranged(const char* what, std::int64_t lo, std::int64_t hi) {
        const std::int64_t v = i64(what);
        if (v < lo || v > hi) fail(std::string(what) + " " + std::to_string(v) + " is out of range");
        return v;
    }
    /// An amount of work or bytes: a finite number, not negative.
    double amount(const char* what) {
        const double v = real(what);
        if (v < 0) fail(std::string(what) + ": expected a number not below 0, got '" + format_number(v, 6) + "'");
        return v;
    }
    /// A coordinate on a grid (a whole number that fits an int).
    int coord(const char* what) {
        const std::int64_t v = i64(what);
        if (v < -0x7fffffffLL || v > 0x7fffffffLL)
            fail(std::string(what) + " " + std::to_string(v) + " is out of range");
        return static_cast<int>(v);
    }
    std::int64_t i64(const char* what) {
        const std::string t(token(what));
        char* end = nullptr;
        errno = 0;
        const long long v = std::strtoll(t.c_str(), &end, 10);
        if (t.empty() || *end != '\0') fail(std::string(what) + ": expected a whole number, got '" + t + "'");
        if (errno == ERANGE) fail(std::string(what) + " " + t + " is out of range");
        return v;
    }
    double real(const char* what) {
        const std::string t(token(what));
        char* end = nullptr;
        const double v = std::strtod(t.c_str(), &end);
        if (t.empty() || *end != '\0') fail(std::string(what) + ": expected a number, got '" + t + "'");
        if (!std::isfinite(v)) fail(std::string(what) + ": expected a finite number, got '" + t + "'");
        return v;
    }
    /// An index below `limit`, or ~0u for "-" when `dash` is allowed.
    std::uint32_t index(const char* what, size_t limit, bool dash = false) {
        if (dash) {
            skip_space();
            if (m_tok < m_cur.size() && m_cur[m_tok] == '-' && (m_tok + 1 == m_cur.size() || m_cur[m_tok + 1] == ' ')) {
                token(what);
                return ~0u;
            }
        }
        const std::uint64_t v = u64(what);
        if (v >= limit)
            fail(std::string(what) + " " + std::to_string(v) + " is out of range (" + std::to_string(limit) +
                 " entries)");
        return static_cast<std::uint32_t>(v);
    }
    [[noreturn]] void fail(const std::string& msg) const {
        source_location at = m_where;
        at.line = m_line;
        at.column = 1;
        throw input_error(m_what + ": " + msg, at);
    }

private:
    void skip_space() {
        while (m_tok < m_cur.size() && (m_cur[m_tok] == ' ' || m_cur[m_tok] == '\t' || m_cur[m_tok] == '\r')) ++m_tok;
    }
    std::string m_what;
    source_location m_where;
    std::string m_text;
    std::string_view m_cur;
    size_t m_pos = 0, m_tok = 0;
    int m_line = 0;
};

const char* kind_word(step_kind k) { return step_kind_name(k); }

std::optional<op_class> parse_op_class(std::string_view s) {
    for (int c = 0; c <= static_cast<int>(op_class::other); ++c)
        if (s == op_class_name(static_cast<op_class>(c))) return static_cast<op_class>(c);
    return std::nullopt;
}

/// An instruction kind as one word ("install weights" -> install_weights).
std::string tsp_kind_word(tsp::op_kind k) {
    std::string w = tsp::op_kind_name(k);
    for (char& c : w)
        if (c == ' ') c = '_';
    return w;
}

std::optional<tsp::op_kind> parse_tsp_kind(std::string_view s) {
    for (int k = 0; k <= static_cast<int>(tsp::op_kind::sxm); ++k)
        if (s == tsp_kind_word(static_cast<tsp::op_kind>(k))) return static_cast<tsp::op_kind>(k);
    return std::nullopt;
}

tsp::stream_use read_stream(table_reader& r) {
    tsp::stream_use u;
    u.stream = static_cast<std::int16_t>(
        r.ranged("stream", std::numeric_limits<std::int16_t>::min(), std::numeric_limits<std::int16_t>::max()));
    u.count = static_cast<std::int16_t>(
        r.ranged("stream count", std::numeric_limits<std::int16_t>::min(), std::numeric_limits<std::int16_t>::max()));
    u.east = r.i64("stream direction") != 0;
    u.from = static_cast<std::int32_t>(
        r.ranged("stream from", std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
    u.to = static_cast<std::int32_t>(
        r.ranged("stream to", std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
    u.offset = r.i64("stream offset");
    return u;
}

/// A work's 11 columns (write_work).
work read_work(table_reader& r) {
    work w;
    w.macs = r.amount("macs");
    w.vector_ops = r.amount("vector_ops");
    w.bytes_in = r.amount("bytes_in");
    w.bytes_weight = r.amount("bytes_weight");
    w.bytes_out = r.amount("bytes_out");
    const std::string_view dt = r.token("dtype");
    const auto t = parse_dtype(dt);
    if (!t) r.fail("unknown data type '" + std::string(dt) + "'; expected one of: " + dtype_list());
    w.type = *t;
    const std::string_view cl = r.token("class");
    const auto c = parse_op_class(cl);
    if (!c) r.fail("unknown op class '" + std::string(cl) + "'");
    w.cls = *c;
    w.batch = r.ranged("batch", 0, std::numeric_limits<std::int64_t>::max());
    w.m = r.ranged("m", 0, std::numeric_limits<std::int64_t>::max());
    w.n = r.ranged("n", 0, std::numeric_limits<std::int64_t>::max());
    w.k = r.ranged("k", 0, std::numeric_limits<std::int64_t>::max());
    return w;
}

}  // namespace

void write_emitted_program(const program& p, const platform& plat, const emit_header& h, std::ostream& out) {
    if (p.traffic.enabled())
        throw input_error("program '" + p.name +
                          "' has synthetic traffic: its program file (with `traffic:`) is the form to replay");
    // Places: every component a step names, by a path that resolves back to it.
    std::unordered_map<std::uint32_t, std::uint32_t> place_of;
    std::vector<std::string> places;
    auto place = [&](const endpoint& e) {
        const auto [it, fresh] = place_of.emplace(e.comp, static_cast<std::uint32_t>(places.size()));
        if (fresh) {
            // A component with several units is named by its first; the step's unit column picks the unit.
            const std::string name = plat.name_of(endpoint{e.comp, 0, 0});
            if (plat.resolve(name, source_location{}).comp != e.comp)
                throw std::logic_error("emit: component " + std::to_string(e.comp) + " is named '" + name +
                                       "', which names another");
            places.push_back(name);
        }
        return it->second;
    };
    std::ostringstream steps;
    for (size_t s = 0; s < p.steps.size(); ++s) {
        const step& st = p.steps[s];
        steps << "    " << kind_word(st.kind) << ' ' << st.op;
        switch (st.kind) {
            case step_kind::compute:
                steps << ' ' << place(st.at) << ' ' << st.at.unit << ' ' << st.at.address << ' ' << st.work << ' '
                      << st.not_before << ' ' << index_or_dash(st.payload);
                break;
            case step_kind::transfer:
                steps << ' ' << place(st.at) << ' ' << st.at.unit << ' ' << st.at.address << ' ' << place(st.to) << ' '
                      << st.to.unit << ' ' << st.to.address << ' ' << st.bytes << ' ' << st.not_before;
                break;
            case step_kind::sync:
                steps << ' ' << place(st.at) << ' ' << st.at.unit << ' ' << st.at.address << ' ' << st.not_before;
                break;
            case step_kind::delay:
                steps << ' ' << st.length << ' ' << st.not_before;
                break;
        }
        if (st.anchor != ~0u) steps << " from " << st.anchor;
        if (st.dep_count > 0) {
            steps << " after";
            const std::uint32_t* d = p.deps_of(static_cast<std::uint32_t>(s));
            for (std::uint32_t i = 0; i < st.dep_count; ++i) steps << ' ' << d[i];
        }
        steps << '\n';
    }

    std::ostringstream placed;
    for (const placement& pl : p.placements) {
        const grid_rect& r = pl.data.rect;
        placed << "    " << place(endpoint{pl.comp, 0, 0}) << ' ' << r.x0 << ' ' << r.y0 << ' ' << r.x1 << ' ' << r.y1
               << ' ' << exact(pl.data.bytes_per_pe) << ' ' << pl.data.what << "\n";
    }

    out << "# Emitted by tessel" << (h.command.empty() ? std::string() : ": " + h.command) << "\n"
        << "# Replay: tessel run -p " << (h.platform.empty() ? std::string("PLATFORM") : h.platform)
        << " -g THIS_FILE (with the same --set platform and mapper overrides). Format: docs/program-yaml.md, \"Emitted "
           "programs\".\n";
    out << "program: " << quoted(p.name) << "\n";
    if (!h.platform.empty()) out << "platform: " << quoted(h.platform) << "\n";
    if (p.strict_schedule) out << "strict: true\n";
    out << "emitted:\n";
    out << "  scale: {samples: " << exact(h.scale.samples) << ", traffic_scale: " << exact(h.scale.traffic_scale)
        << ", represented: [";
    for (size_t i = 0; i < h.scale.represented.size(); ++i)
        out << (i ? ", " : "") << "[" << h.scale.represented[i].first << ", " << h.scale.represented[i].second << "]";
    out << "]}  # what the run's summary weighs: samples per run; chips a representative ran for (component ids)\n";
    if (p.quantum > 0)
        out << "  quantum: " << p.quantum
            << "  # ticks (fs) a request may be served ahead of queued ones (set by the mapper)\n";
    if (p.packet_bytes > 0)
        out << "  packet_bytes: " << p.packet_bytes
            << "  # fewest bytes of a packet on any network (set by the mapper: a coarse form)\n";
    out << "  ops: [";
    for (size_t i = 0; i < p.op_names.size(); ++i) out << (i ? ", " : "") << quoted(p.op_names[i]);
    out << "]\n  places: [";
    for (size_t i = 0; i < places.size(); ++i) out << (i ? ", " : "") << quoted(places[i]);
    out << "]\n";
    out << "  # macs vector_ops bytes_in bytes_weight bytes_out dtype class batch m n k\n  works: |\n";
    for (const work& w : p.works) {
        out << "   ";
        write_work(out, w);
        out << "\n";
    }
    if (!p.payloads.empty()) {
        out << "  # kernel rows cols passes rereads row_kernel split_k special_ops flags (1 causal, 2 host) operands "
               "(address bytes "
               "r|w)... name\n"
               "  # instruction kind slice cycle vectors spacing ops rows out(stream count east from to offset) in0(6) "
               "in1(6)"
               " producer0 producer1 after name\n"
               "  # span x0 y0 x1 y1\n"
               "  # gang members offsets... (each other member's component id minus the step unit's, in the platform's "
               "order)\n"
               "  # superstep tiles works (tile work recv_bytes send_bytes sender_bytes recv_packets send_packets "
               "sender_packets)..."
               " (the works' 11 columns)...\n  payloads: |\n";
        for (const auto& pl : p.payloads) {
            out << "    ";
            if (const auto* k = payload_as<kernel_desc>(pl.get())) {
                out << "kernel " << k->rows << ' ' << k->cols << ' ' << k->passes << ' ' << k->rereads << ' '
                    << row_kernel_word(k->row_kind) << ' ' << (k->split_k ? 1 : 0) << ' ' << exact(k->special_ops)
                    << ' ' << (k->causal ? 1 : 0) + (k->host ? 2 : 0) << ' ' << k->operands.size();
                for (const auto& o : k->operands)
                    out << ' ' << o.address << ' ' << exact(o.bytes) << ' ' << (o.write ? 'w' : 'r');
                out << ' ' << k->name << "\n";
            } else if (const auto* in = payload_as<tsp::instruction>(pl.get())) {
                out << "instruction " << tsp_kind_word(in->kind) << ' ' << in->unit << ' ' << in->cycle << ' '
                    << in->vectors << ' ' << in->spacing << ' ' << in->ops << ' ' << in->rows;
                write_stream(out, in->out);
                for (const auto& u : in->in) write_stream(out, u);
                out << ' ' << index_or_dash(in->producer[0]) << ' ' << index_or_dash(in->producer[1]) << ' '
                    << index_or_dash(in->after) << ' ' << in->name << "\n";
            } else if (const auto* sp = payload_as<grid_span>(pl.get())) {
                out << "span " << sp->rect.x0 << ' ' << sp->rect.y0 << ' ' << sp->rect.x1 << ' ' << sp->rect.y1 << "\n";
            } else if (const auto* g = payload_as<unit_gang>(pl.get())) {
                out << "gang " << g->size();
                for (std::int32_t o : g->others) out << ' ' << o;
                out << "\n";
            } else if (const auto* ss = payload_as<bsp_superstep>(pl.get())) {
                out << "superstep " << ss->tiles.size() << ' ' << ss->works.size();
                for (const auto& t : ss->tiles)
                    out << ' ' << t.tile << ' ' << index_or_dash(t.work) << ' ' << exact(t.recv_bytes) << ' '
                        << exact(t.send_bytes) << ' ' << exact(t.sender_bytes) << ' ' << t.recv_packets << ' '
                        << t.send_packets << ' ' << t.sender_packets;
                for (const work& w : ss->works) write_work(out, w);
                out << "\n";
            } else {
                throw std::logic_error("emit: a payload of an unknown type");
            }
        }
    }
    if (!p.placements.empty())
        out << "  # place x0 y0 x1 y1 bytes_per_pe what: SRAM kept on every PE of [x0, x1) x [y0, y1) all run\n"
               "  placements: |\n"
            << placed.str();
    if (p.step_labels.size() == p.steps.size() && !p.steps.empty()) {
        out << "  labels: |\n";
        for (const auto& l : p.step_labels) out << "    " << l << "\n";
    }
    out << "  # kind op place unit address [to_place to_unit to_address bytes | work] start [payload] [after STEP...]\n"
           "  # (delay: kind op length start); places, ops, works, payloads and steps count from 0; times in ticks\n"
           "  steps: |\n"
        << steps.str();
}

namespace {

/// The scalars of `emitted:` (quantum, packet_bytes).
void read_emitted_scalars(const yaml_node& em, program& prog) {
    if (em.has("quantum")) {
        const std::int64_t q = em["quantum"].as_int("emitted.quantum (ticks)");
        if (q < 0)
            throw input_error("emitted.quantum must not be negative, got " + std::to_string(q), em["quantum"].where());
        prog.quantum = static_cast<tick>(q);
    }
    if (em.has("packet_bytes")) {
        const std::int64_t b = em["packet_bytes"].as_int("emitted.packet_bytes");
        if (b < 0)
            throw input_error("emitted.packet_bytes must not be negative, got " + std::to_string(b),
                              em["packet_bytes"].where());
        prog.packet_bytes = static_cast<std::uint64_t>(b);
    }
}

std::shared_ptr<kernel_desc> read_kernel_payload(table_reader& r) {
    auto k = std::make_shared<kernel_desc>();
    k->rows = r.ranged("rows", 0, std::numeric_limits<std::int64_t>::max());
    k->cols = r.ranged("cols", 0, std::numeric_limits<std::int64_t>::max());
    k->passes = static_cast<int>(r.ranged("passes", 0, std::numeric_limits<int>::max()));
    k->rereads = static_cast<int>(r.ranged("rereads", 0, std::numeric_limits<int>::max()));
    const std::string_view rk = r.token("row kernel");
    const auto kind = parse_row_kernel(rk);
    if (!kind)
        r.fail("unknown row kernel '" + std::string(rk) +
               "' (vector, welford, norm, warp, registers, shared, blocked)");
    k->row_kind = *kind;
    k->split_k = r.i64("split_k") != 0;
    k->special_ops = r.amount("special_ops");
    const std::int64_t flags = r.ranged("flags", 0, 3);  // 1: causal, 2: runs on the host (mapper.host_ops)
    k->causal = (flags & 1) != 0;
    k->host = (flags & 2) != 0;
    const std::uint64_t n = r.u64("operand count");
    for (std::uint64_t i = 0; i < n; ++i) {
        kernel_operand o;
        o.address = r.u64("operand address");
        o.bytes = r.amount("operand bytes");
        const std::string_view rw = r.token("operand r|w");
        if (rw != "r" && rw != "w") r.fail("operand access: expected r or w, got '" + std::string(rw) + "'");
        o.write = rw == "w";
        k->operands.push_back(o);
    }
    k->name = r.rest();
    return k;
}

std::shared_ptr<tsp::instruction> read_instruction_payload(table_reader& r) {
    auto in = std::make_shared<tsp::instruction>();
    const std::string_view ok = r.token("instruction kind");
    const auto kk = parse_tsp_kind(ok);
    if (!kk) r.fail("unknown instruction kind '" + std::string(ok) + "'");
    in->kind = *kk;
    in->unit = r.u32("slice");
    in->cycle = r.i64("cycle");
    in->vectors = r.i64("vectors");
    in->spacing = r.i64("spacing");
    in->ops = r.i64("ops");
    in->rows = r.i64("rows");
    in->out = read_stream(r);
    for (auto& u : in->in) u = read_stream(r);
    const size_t any = ~std::uint32_t{0};
    in->producer[0] = r.index("producer", any, true);
    in->producer[1] = r.index("producer", any, true);
    in->after = r.index("after", any, true);
    in->name = r.rest();
    return in;
}

std::shared_ptr<grid_span> read_span_payload(table_reader& r) {
    grid_rect s;
    s.x0 = r.coord("x0");
    s.y0 = r.coord("y0");
    s.x1 = r.coord("x1");
    s.y1 = r.coord("y1");
    if (!r.at_end()) r.fail("more values than a span's x0 y0 x1 y1");
    if (s.empty() || s.x0 < 0 || s.y0 < 0) r.fail("span " + rect_text(s) + " is empty or has a negative corner");
    return std::make_shared<grid_span>(s);
}

std::shared_ptr<unit_gang> read_gang_payload(table_reader& r) {
    const std::int64_t n = r.ranged("gang members", 1, 1 << 20);
    std::vector<std::int32_t> others;
    for (std::int64_t i = 1; i < n; ++i) {
        const int o = r.coord("gang member");
        if (o == 0) r.fail("a gang member at distance 0 is the step's own unit");
        others.push_back(o);
    }
    if (!r.at_end()) r.fail("more values than the gang's " + std::to_string(n) + " members");
    std::vector<std::int32_t> sorted = others;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) r.fail("a gang names a member twice");
    return std::make_shared<unit_gang>(std::move(others));
}

std::shared_ptr<bsp_superstep> read_superstep_payload(table_reader& r) {
    auto ss = std::make_shared<bsp_superstep>();
    const std::uint64_t tiles = r.u64("tile count"), works_n = r.u64("work count");
    for (std::uint64_t i = 0; i < tiles; ++i) {
        bsp_superstep::tile_share t;
        t.tile = r.u32("tile");
        t.work = r.index("work", works_n, true);
        t.recv_bytes = r.amount("recv_bytes");
        t.send_bytes = r.amount("send_bytes");
        t.sender_bytes = r.amount("sender_bytes");
        t.recv_packets = r.u32("recv_packets");
        t.send_packets = r.u32("send_packets");
        t.sender_packets = r.u32("sender_packets");
        ss->tiles.push_back(t);
    }
    for (std::uint64_t i = 0; i < works_n; ++i) ss->works.push_back(read_work(r));
    if (!r.at_end()) r.fail("more values than the superstep's tiles and works");
    return ss;
}

/// `emitted.payloads`: one kernel, instruction, span, gang or superstep a line.
void read_payloads(const yaml_node& node, program& prog, emitted_tables* tables) {
    table_reader r(node, "emitted.payloads", tables);
    while (r.next_line()) {
        const std::string_view kind = r.token("payload kind");
        if (kind == "kernel")
            prog.payloads.push_back(read_kernel_payload(r));
        else if (kind == "instruction")
            prog.payloads.push_back(read_instruction_payload(r));
        else if (kind == "span")
            prog.payloads.push_back(read_span_payload(r));
        else if (kind == "gang")
            prog.payloads.push_back(read_gang_payload(r));
        else if (kind == "superstep")
            prog.payloads.push_back(read_superstep_payload(r));
        else
            r.fail("unknown payload kind '" + std::string(kind) + "' (kernel, instruction, span, gang or superstep)");
    }
}

/// `emitted.placements`.
void read_placements(const yaml_node& node, const platform& plat, const std::vector<std::uint32_t>& comp_of,
                     program& prog, emitted_tables* tables) {
    // Checked as the run will check them (inside the array, within each PE's SRAM), so a bad line is named.
    table_reader r(node, "emitted.placements", tables);
    std::unordered_map<std::uint32_t, sram_tally> tally;
    while (r.next_line()) {
        placement pl;
        pl.comp = comp_of[r.index("place", comp_of.size())];
        grid_rect& s = pl.data.rect;
        s.x0 = r.coord("x0");
        s.y0 = r.coord("y0");
        s.x1 = r.coord("x1");
        s.y1 = r.coord("y1");
        pl.data.bytes_per_pe = r.amount("bytes_per_pe");
        pl.data.what = r.rest();
        const component& c = plat.comp(pl.comp);
        const pe_grid* g = c.grid();
        if (!g) r.fail(c.path() + " is not an array of PEs held as data; only those take placements");
        if (!g->holds(s))
            r.fail(rect_text(s) + " is empty or leaves the " + std::to_string(g->width()) + " x " +
                   std::to_string(g->height()) + " PEs of " + c.path());
        auto it = tally.find(pl.comp);
        if (it == tally.end())
            it = tally.emplace(pl.comp, sram_tally(g->width(), g->height(), c.capacity_bytes(), c.path())).first;
        try {
            it->second.add(pl.data);
        } catch (const input_error& e) {
            r.fail(e.message());
        }
        prog.placements.push_back(std::move(pl));
    }
}

/// A compute step's payload: a span may be shared (every chunk of an op runs on its lines); it must fit the step's
/// PE array and hold the step's PE. Any other payload belongs to one step.
void check_compute_payload(table_reader& r, const platform& plat, const program& prog, const step& st,
                           std::vector<bool>& payload_used) {
    if (const auto* sp = payload_as<grid_span>(prog.payloads[st.payload].get())) {
        const component& c = plat.comp(st.at.comp);
        const pe_grid* g = c.grid();
        if (!g) r.fail("a span of PEs on " + c.path() + ", which is not an array of PEs held as data");
        if (!g->holds(sp->rect))
            r.fail("span " + std::to_string(st.payload) + " (" + rect_text(sp->rect) + ") leaves the " +
                   std::to_string(g->width()) + " x " + std::to_string(g->height()) + " PEs of " + c.path());
        const grid_rect pe = g->rect_of(st.at.unit);
        if (pe.empty() || !sp->rect.contains(pe))
            r.fail("unit " + std::to_string(st.at.unit) + " is not a PE of its span " + rect_text(sp->rect));
    } else if (const auto* gang = payload_as<unit_gang>(prog.payloads[st.payload].get())) {
        const auto& all = plat.sim().components();
        for (std::int32_t off : gang->others) {
            const std::int64_t id = static_cast<std::int64_t>(st.at.comp) + off;
            if (id < 0 || id >= static_cast<std::int64_t>(all.size()) || !all[static_cast<size_t>(id)] ||
                all[static_cast<size_t>(id)]->kind_name() != plat.comp(st.at.comp).kind_name())
                r.fail("gang " + std::to_string(st.payload) + ": the member " + std::to_string(off) +
                       " components from " + plat.comp(st.at.comp).path() + " is not a unit of its kind");
        }
    } else if (!payload_as<kernel_desc>(prog.payloads[st.payload].get())) {
        // A kernel's operands may serve many steps (a system's chips run the same kernels); an instruction or a
        // superstep belongs to one; a span or a gang of units may serve many.
        if (payload_used[st.payload]) r.fail("payload " + std::to_string(st.payload) + " is used by two steps");
        payload_used[st.payload] = true;
    }
}

/// `emitted.steps`, with their dependencies.
void read_steps(const yaml_node& node, const std::vector<std::uint32_t>& comp_of, const platform& plat, program& prog,
                emitted_tables* tables) {
    table_reader r(node, "emitted.steps", tables);
    prog.steps.reserve(r.line_count());
    std::vector<std::uint32_t> deps;
    std::vector<bool> payload_used(prog.payloads.size(), false);
    while (r.next_line()) {
        const std::string_view kind = r.token("step kind");
        step st;
        st.op = r.index("op", prog.op_names.size());
        auto place = [&](endpoint& e) {
            e.comp = comp_of[r.index("place", comp_of.size())];
            e.unit = static_cast<std::int32_t>(r.ranged("unit", -1, std::numeric_limits<std::int32_t>::max()));
            e.address = r.u64("address");
        };
        if (kind == "compute") {
            st.kind = step_kind::compute;
            place(st.at);
            st.work = r.index("work", prog.works.size());
            st.not_before = r.u64("start");
            st.payload = r.index("payload", prog.payloads.size(), true);
            if (st.payload != ~0u) check_compute_payload(r, plat, prog, st, payload_used);
        } else if (kind == "transfer") {
            st.kind = step_kind::transfer;
            place(st.at);
            place(st.to);
            st.bytes = r.u64("bytes");
            st.not_before = r.u64("start");
        } else if (kind == "sync") {
            st.kind = step_kind::sync;
            place(st.at);
            st.not_before = r.u64("start");
        } else if (kind == "delay") {
            st.kind = step_kind::delay;
            st.length = r.u64("length");
            st.not_before = r.u64("start");
        } else {
            r.fail("unknown step kind '" + std::string(kind) + "' (compute, transfer, sync or delay)");
        }
        st.dep_begin = static_cast<std::uint32_t>(deps.size());
        if (!r.at_end()) {
            std::string_view word = r.token("from or after");
            if (word == "from") {
                st.anchor = static_cast<std::uint32_t>(r.u64("step"));
                word = r.at_end() ? std::string_view("after") : r.token("after");
            }
            if (word != "after") r.fail("expected 'from' or 'after' and the steps this one waits for");
            while (!r.at_end()) deps.push_back(static_cast<std::uint32_t>(r.u64("step")));
        }
        st.dep_count = static_cast<std::uint32_t>(deps.size()) - st.dep_begin;
        prog.steps.push_back(st);
    }
    prog.deps = std::move(deps);
}

/// Dependencies may point forward; the executor names any that point past the end (and cycles). An instruction's
/// producers are checked here.
void check_instruction_steps(const yaml_node& payloads, const program& prog) {
    for (const auto& pl : prog.payloads)
        if (const auto* in = payload_as<tsp::instruction>(pl.get()))
            for (std::uint32_t s : {in->producer[0], in->producer[1], in->after})
                if (s != ~0u && s >= prog.steps.size())
                    throw input_error("emitted.payloads: instruction '" + in->name + "' names step " +
                                          std::to_string(s) + " of " + std::to_string(prog.steps.size()),
                                      payloads.where());
}

/// `emitted.labels`: one a step.
void read_labels(const yaml_node& node, program& prog, emitted_tables* tables) {
    table_reader l(node, "emitted.labels", tables);
    while (l.next_line()) prog.step_labels.push_back(l.rest());
    if (prog.step_labels.size() != prog.steps.size())
        throw input_error("emitted.labels: " + std::to_string(prog.step_labels.size()) + " labels for " +
                              std::to_string(prog.steps.size()) + " steps",
                          node.where());
}

}  // namespace

emitted_tables split_emitted_tables(std::string& text) {
    emitted_tables out;
    static const std::set<std::string, std::less<>> keys = {"works", "payloads", "placements", "labels", "steps"};
    std::string yaml;  // the text with each table's lines left empty
    bool in_emitted = false, cut = false;
    std::string_view rest(text);
    auto next_line = [&]() {
        const size_t e = std::min(rest.find('\n'), rest.size());
        const std::string_view line = rest.substr(0, e);
        rest.remove_prefix(std::min(e + 1, rest.size()));
        return line;
    };
    auto indent = [](std::string_view l) { return std::min(l.find_first_not_of(' '), l.size()); };
    auto blank = [](std::string_view l) { return l.find_first_not_of(" \t\r") == std::string_view::npos; };
    while (!rest.empty()) {
        const std::string_view line = next_line();
        yaml.append(line).append("\n");
        if (!blank(line) && line[0] != ' ' && line[0] != '#') in_emitted = line.rfind("emitted:", 0) == 0;
        // `  KEY: |`, with nothing after the bar but spaces or a comment.
        const size_t colon = line.find(": |");
        if (!in_emitted || indent(line) != 2 || colon == std::string_view::npos ||
            !keys.count(line.substr(2, colon - 2)))
            continue;
        const std::string_view after = line.substr(colon + 3);
        const size_t more = after.find_first_not_of(" \r");
        if (more != std::string_view::npos && after[more] != '#') continue;
        // The body: the lines after, up to a non-blank one indented two spaces or less, or less than the first
        // non-blank line (whose indentation YAML takes for the block's).
        std::string body;
        body.reserve(rest.size());  // most of what is left, in an emitted program (released when it is read)
        size_t body_indent = 0;
        while (!rest.empty()) {
            const std::string_view saved = rest;
            const std::string_view l = next_line();
            if (!blank(l)) {
                const size_t in = indent(l);
                if (in <= 2 || (body_indent && in < body_indent)) {
                    rest = saved;
                    break;
                }
                if (!body_indent) body_indent = in;
                body.append(l.substr(body_indent));
            }
            body += '\n';
            yaml += '\n';
        }
        out.body[std::string(line.substr(2, colon - 2))] = std::move(body);
        cut = true;
    }
    if (cut) {
        if (text.empty() || text.back() != '\n') yaml.pop_back();
        text = std::move(yaml);
    }
    return out;
}

void read_emitted_program(const yaml_node& em, const platform& plat, program& prog, emitted_tables* tables) {
    em.expect_map("emitted");
    em.check_keys(
        {"ops", "places", "works", "payloads", "placements", "labels", "steps", "quantum", "packet_bytes", "scale"},
        "emitted");
    read_emitted_scalars(em, prog);
    for (const char* k : {"ops", "places", "works", "steps"})
        if (!em.has(k)) throw input_error(std::string("emitted: needs '") + k + "'", em.where());
    for (const auto& o : em["ops"].items()) prog.op_names.push_back(o.scalar("emitted.ops"));
    std::vector<std::uint32_t> comp_of;
    for (const auto& pl : em["places"].items())
        comp_of.push_back(plat.resolve(pl.scalar("emitted.places"), pl.where()).comp);

    table_reader works(em["works"], "emitted.works", tables);
    while (works.next_line()) {
        prog.works.push_back(read_work(works));
        if (!works.at_end()) works.fail("more values than the 11 columns");
    }
    // Payloads name steps (TSP producers): checked against the step count once the steps are read.
    if (em.has("payloads")) read_payloads(em["payloads"], prog, tables);
    if (em.has("placements")) read_placements(em["placements"], plat, comp_of, prog, tables);
    read_steps(em["steps"], comp_of, plat, prog, tables);
    check_instruction_steps(em["payloads"], prog);
    if (em.has("labels")) read_labels(em["labels"], prog, tables);
}

emitted_scale read_emitted_scale(const yaml_node& emitted, const platform& plat) {
    emitted_scale sc;
    const yaml_node s = emitted["scale"];
    if (!s.defined()) return sc;
    s.check_keys({"samples", "traffic_scale", "represented"}, "emitted.scale");
    auto number = [&](const char* key, double lo) {
        const yaml_node n = s[key];
        const double v = parse_quantity(n.scalar(key), key, n.where()).value;
        if (!std::isfinite(v) || v < lo)
            throw input_error(std::string("emitted.scale.") + key + ": expected a number not below " +
                                  format_number(lo, 3) + ", got '" + n.scalar(key) + "'",
                              n.where());
        return v;
    };
    if (s.has("samples")) sc.samples = number("samples", 0);
    if (s.has("traffic_scale")) sc.traffic_scale = number("traffic_scale", 1);
    if (s.has("represented"))
        for (const auto& r : s["represented"].items()) {
            const auto ends = r.items();
            if (ends.size() != 2)
                throw input_error("emitted.scale.represented: expected [first, end] pairs", r.where());
            const double first = parse_quantity(ends[0].scalar("first"), "first", ends[0].where()).value;
            const double end = parse_quantity(ends[1].scalar("end"), "end", ends[1].where()).value;
            if (!(first >= 0 && end >= first && end <= static_cast<double>(plat.component_count())) ||
                std::floor(first) != first || std::floor(end) != end)
                throw input_error("emitted.scale.represented: [" + ends[0].scalar("first") + ", " +
                                      ends[1].scalar("end") + "] is not a range of the platform's " +
                                      std::to_string(plat.component_count()) + " component ids",
                                  r.where());
            sc.represented.emplace_back(static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(end));
        }
    return sc;
}

}  // namespace tessel
