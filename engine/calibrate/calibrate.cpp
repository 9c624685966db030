#include "engine/calibrate/calibrate.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <ostream>
#include <sstream>

#include "engine/exec/executor.h"
#include "engine/mappers/kernel_mapper.h"
#include "engine/netlist/platform.h"
#include "engine/run/session.h"
#include "engine/workload/builder.h"
#include "engine/workload/layers.h"
#include "models/baseline/gpu.h"
#include "models/core/limits.h"
#include "models/core/sim_context.h"

namespace tessel {

// ------------------------------------------------------------------------------------------------ measurements

bool measurement::memory_bound() const {
    if (kind == "copy") return row.value("bytes_read", 0.0) + row.value("bytes_written", 0.0) >= min_memory_bound_bytes;
    if (kind != "elementwise") return false;
    const auto t = parse_dtype(row.value("dtype", std::string("bf16")));
    const double eb = t ? dtype_bits(*t) / 8.0 : 2.0;
    const double operands = row.value("op", std::string()) == "add" || row.value("op", std::string()) == "mul" ? 3 : 2;
    return operands * eb * row.value("n", 0.0) >= min_memory_bound_bytes;
}

std::string measurement::kernel_class() const {
    if (kind == "gemm") {
        const std::string t = row.value("dtype", std::string());
        // A leading dimension (K of A, N of B and C) that is not a multiple of 16 bytes.
        const double eb = t == "float32" ? 4 : 2;
        const bool aligned = std::min(operand_alignment(row.value("K", std::int64_t{0}), eb),
                                      operand_alignment(row.value("N", std::int64_t{0}), eb)) >= 16;
        return std::string("gemm ") + (t == "float32" ? "fp32" : "bf16") + (aligned ? "" : " unaligned");
    }
    if (kind == "rowwise") return "rowwise " + row.value("op", std::string());
    if (kind == "sdpa") return row.contains("Sq") && row.value("Sq", 0) < row.value("S", 0) ? "sdpa decode" : "sdpa";
    return kind;
}

namespace {

std::int64_t need_int(const nlohmann::json& j, const char* key, const std::string& where) {
    if (!j.contains(key) || !j[key].is_number())
        throw input_error(where + ": a '" + j.value("kind", std::string("?")) + "' row needs a number '" + key + "'");
    const double v = j[key].get<double>();
    if (v < 1 || v != std::floor(v)) throw input_error(where + ": '" + key + "' must be a positive whole number");
    return static_cast<std::int64_t>(v);
}

dtype need_dtype(const nlohmann::json& j, const std::string& where) {
    if (!j.contains("dtype") || !j["dtype"].is_string()) throw input_error(where + ": the row needs a 'dtype'");
    const auto t = parse_dtype(j["dtype"].get<std::string>());
    if (!t) throw input_error(where + ": unknown dtype '" + j["dtype"].get<std::string>() + "' (" + dtype_list() + ")");
    return *t;
}

std::string shape_label(std::initializer_list<std::int64_t> v) {
    std::string s;
    for (auto x : v) s += (s.empty() ? "" : "x") + std::to_string(x);
    return s;
}

}  // namespace

measurement_set load_measurements(const std::string& path) {
    require_input_file(path, "measurements file");
    std::ifstream in(path);
    if (!in) throw input_error("cannot open measurements '" + path + "'");
    measurement_set set;
    set.file = path;
    std::string line;
    int n = 0;
    while (std::getline(in, line)) {
        ++n;
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const std::string where = path + ":" + std::to_string(n);
        nlohmann::json j;
        try {
            j = nlohmann::json::parse(line);
        } catch (const std::exception& e) {
            throw input_error(where + ": not a JSON object (" + std::string(e.what()) + ")");
        }
        if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string())
            throw input_error(where + ": each line must be a JSON object with a \"kind\"");
        const std::string kind = j["kind"].get<std::string>();
        if (kind == "device") {
            set.device = j;
            continue;
        }
        measurement m;
        m.kind = kind;
        m.row = j;
        m.line = n;
        m.file = path;
        if (j.contains("holdout")) {
            if (!j["holdout"].is_boolean()) throw input_error(where + ": 'holdout' must be true or false");
            m.holdout = j["holdout"].get<bool>();
        }
        if (!j.contains("sec") || !j["sec"].is_number() || !(j["sec"].get<double>() > 0))
            throw input_error(where + ": the row needs a positive 'sec' (seconds of one kernel)");
        m.seconds = j["sec"].get<double>();
        if (kind == "gemm") {
            const dtype t = need_dtype(j, where);
            m.label = std::string("gemm ") + dtype_name(t) + " " +
                      shape_label({need_int(j, "M", where), need_int(j, "N", where), need_int(j, "K", where)});
        } else if (kind == "copy") {
            const auto r = need_int(j, "bytes_read", where), w = need_int(j, "bytes_written", where);
            if (r != w) throw input_error(where + ": a copy reads and writes the same number of bytes");
            m.label = "copy " + format_bytes(static_cast<double>(r));
        } else if (kind == "elementwise") {
            const std::string op = j.value("op", std::string());
            if (op != "add" && op != "gelu" && op != "mul" && op != "relu" && op != "silu")
                throw input_error(std::string(where)
                                      .append(": elementwise op must be add, mul, relu, gelu or silu, got '")
                                      .append(op)
                                      .append("'"));
            m.label = "elementwise " + op + " " + dtype_name(need_dtype(j, where)) +
                      " n=" + std::to_string(need_int(j, "n", where));
        } else if (kind == "rowwise") {
            const std::string op = j.value("op", std::string());
            if (op != "softmax" && op != "layernorm" && op != "rmsnorm")
                throw input_error(std::string(where)
                                      .append(": rowwise op must be softmax, layernorm or rmsnorm, got '")
                                      .append(op)
                                      .append("'"));
            m.label = "rowwise " + op + " " + dtype_name(need_dtype(j, where)) + " " +
                      shape_label({need_int(j, "rows", where), need_int(j, "cols", where)});
        } else if (kind == "sdpa") {
            const std::int64_t s = need_int(j, "S", where);
            const std::int64_t sq = j.contains("Sq") ? need_int(j, "Sq", where) : s;
            if (sq > s) throw input_error(where + ": 'Sq' (queries) must not exceed 'S' (keys)");
            m.label = std::string("sdpa ") + dtype_name(need_dtype(j, where)) + " " +
                      shape_label({need_int(j, "B", where), need_int(j, "H", where), s, need_int(j, "D", where)}) +
                      (sq != s ? " q=" + std::to_string(sq) : std::string()) +
                      (j.value("causal", false) ? " causal" : "");
        } else if (kind == "conv") {
            if (j.value("layout", std::string("nhwc")) != "nhwc")
                throw input_error(where +
                                  ": conv rows must be channels-last ('layout': 'nhwc'); an NCHW convolution "
                                  "in eager PyTorch adds layout-conversion kernels the kernel model does not run");
            m.label = std::string("conv ") + dtype_name(need_dtype(j, where)) + " " +
                      shape_label({need_int(j, "N", where), need_int(j, "C", where), need_int(j, "H", where),
                                   need_int(j, "W", where)}) +
                      " k" + std::to_string(need_int(j, "K", where)) + " " + std::to_string(need_int(j, "R", where)) +
                      "x" + std::to_string(need_int(j, "S", where)) + "/" +
                      std::to_string(need_int(j, "stride", where)) + " p" + std::to_string(j.value("pad", 0));
        } else {
            throw input_error(std::string(where)
                                  .append(": unknown kind '")
                                  .append(kind)
                                  .append("' (device, gemm, copy, elementwise, rowwise, sdpa, conv)"));
        }
        set.items.push_back(std::move(m));
    }
    if (set.items.empty()) throw input_error("measurements '" + path + "' hold no kernel rows");
    return set;
}

measurement_set load_measurements(const std::vector<std::string>& paths) {
    measurement_set all;
    for (const auto& p : paths) {
        measurement_set one = load_measurements(p);
        if (all.file.empty())
            all.file = p;
        else
            all.file += ", " + p;
        if (all.device.is_null() && !one.device.is_null()) all.device = one.device;
        for (auto& m : one.items) all.items.push_back(std::move(m));
    }
    return all;
}

double mape(const std::vector<measurement>& ms, const std::vector<double>& sim, const std::vector<size_t>& which) {
    double sum = 0;
    size_t n = 0;
    auto add = [&](size_t i) {
        sum += std::fabs(sim[i] - ms[i].seconds) / ms[i].seconds;
        ++n;
    };
    if (which.empty())
        for (size_t i = 0; i < ms.size(); ++i) add(i);
    else
        for (size_t i : which) add(i);
    return n ? 100 * sum / static_cast<double>(n) : 0;
}

// ------------------------------------------------------------------------------------------------ calibrator

struct calibrator::prepared {
    std::string label;
    program prog;  // one kernel, its descriptor as the step's payload
};

calibrator::calibrator(const std::string& platform_path, const std::vector<std::string>& sets)
    : m_platform_file(platform_path), m_sim(std::make_unique<sim_context>()), m_ctx(std::make_unique<param_context>()) {
    for (const auto& s : sets) {
        auto [k, v] = split_set(s);
        m_ctx->add_override(k, v);
    }
    m_plat = platform::load(platform_path, *m_ctx, *m_sim);
    const auto unused = m_ctx->unused_overrides();
    if (!unused.empty()) throw input_error("--set " + unused.front() + ": no such parameter");
    m_device_id = kernel_mapper::find_device(*m_plat, {});
    m_device = m_plat->comp(m_device_id).kernels();
    for (const auto& g : m_plat->groups())
        if (g.ids.front() == m_device_id) m_device_group = g.name;
    m_tunables = m_device->tunables();
    // Named after the platform, so that calibrators of several platforms can live in one process.
    m_exec = std::make_unique<executor>((m_plat->title() + "_calibration").c_str(), *m_plat);
}

calibrator::~calibrator() = default;

const calibrator::prepared& calibrator::prepare(const measurement& m) {
    for (const auto& p : m_prepared)
        if (p->label == m.label) return *p;
    const nlohmann::json& j = m.row;
    const std::string where = m.file + ":" + std::to_string(m.line);
    dtype type = m.kind == "copy" ? dtype::int8 : need_dtype(j, where);
    graph_builder b("calibration", type);
    int x = -1;
    if (m.kind == "gemm") {
        const int a = b.input("a", {need_int(j, "M", where), need_int(j, "K", where)});
        const int w = b.input("b", {need_int(j, "K", where), need_int(j, "N", where)});
        x = b.add1("matmul", "gemm", {a, w});
    } else if (m.kind == "copy") {
        x = b.add1("copy", "copy", {b.input("x", {need_int(j, "bytes_read", where)}, dtype::int8)});
    } else if (m.kind == "elementwise") {
        const std::int64_t n = need_int(j, "n", where);
        const std::string op = j["op"].get<std::string>();
        const bool binary = op == "add" || op == "mul";
        std::vector<int> ins = {b.input("x", {n})};
        if (binary) ins.push_back(b.input("y", {n}));
        x = b.add1(op, op, ins);
    } else if (m.kind == "rowwise") {
        const int in = b.input("x", {need_int(j, "rows", where), need_int(j, "cols", where)});
        const std::string op = j["op"].get<std::string>();
        if (op == "softmax")
            x = b.add1("softmax", "softmax", {in}, op_attrs().i("axis", -1));
        else if (op == "layernorm")
            x = layer_norm(b, "layernorm", in);
        else
            x = rms_norm(b, "rmsnorm", in);
    } else if (m.kind == "conv") {
        const std::int64_t stride = need_int(j, "stride", where);
        const int in = b.input(
            "x", {need_int(j, "N", where), need_int(j, "C", where), need_int(j, "H", where), need_int(j, "W", where)});
        const int w = b.input(
            "w", {need_int(j, "K", where), need_int(j, "C", where), need_int(j, "R", where), need_int(j, "S", where)});
        x = b.add1("conv2d", "conv", {in, w},
                   op_attrs().is("stride", {stride}).is("padding", {j.value("pad", std::int64_t{0})}));
    } else {
        const std::int64_t bb = need_int(j, "B", where), h = need_int(j, "H", where), d = need_int(j, "D", where);
        const std::int64_t s = need_int(j, "S", where), sq = j.contains("Sq") ? need_int(j, "Sq", where) : s;
        const shape_t kv = {bb, h, s, d};
        x = b.add1("attention", "sdpa", {b.input("q", {bb, h, sq, d}), b.input("k", kv), b.input("v", kv)},
                   op_attrs().i("causal", j.value("causal", false) ? 1 : 0));
    }
    (void)x;
    const workload_graph g = b.finish();
    int op = -1;
    for (size_t i = 0; i < g.ops().size(); ++i)
        if (g.ops()[i].kind != op_kind::reshape && g.ops()[i].kind != op_kind::shape_only) op = static_cast<int>(i);
    // Each tensor in its own 2 MiB-aligned range, as a caching allocator would place fresh tensors.
    std::vector<std::uint64_t> addr(g.tensors().size());
    std::uint64_t next = 0;
    for (size_t t = 0; t < g.tensors().size(); ++t) {
        addr[t] = next;
        const std::uint64_t align = 2u << 20;
        next += (g.tensors()[t].bytes() + align - 1) / align * align;
    }
    const lowered_kernel k = lower_op(g, op, [&](int t) { return addr[static_cast<size_t>(t)]; });
    auto p = std::make_unique<prepared>();
    p->label = m.label;
    p->prog.name = m.label;
    const std::uint32_t opi = p->prog.intern_op(m.label);
    const std::uint32_t wi = p->prog.add_work(k.w);
    const std::uint32_t s = p->prog.add_compute(opi, endpoint{m_device_id, 0, 0}, wi, {});
    p->prog.set_payload(s, std::make_shared<kernel_desc>(k.desc));
    m_prepared.push_back(std::move(p));
    return *m_prepared.back();
}

double calibrator::simulate(const measurement& m) {
    const prepared& p = prepare(m);
    // The benchmark replays the kernel back to back: its caches hold what the replay before left there.
    m_device->reset_caches();
    m_device->warm(*payload_as<kernel_desc>(p.prog.payload_of(0)));
    m_device->clear_records();
    const executor::result r = m_exec->run(p.prog);
    m_last = m_device->records().empty() ? kernel_record{} : m_device->records().back();
    return ticks_to_seconds(r.step_end[0] - r.step_start[0]);
}

std::vector<double> calibrator::simulate_all(const std::vector<measurement>& ms) {
    std::vector<double> out;
    out.reserve(ms.size());
    for (const auto& m : ms) out.push_back(simulate(m));
    return out;
}

namespace {

/// The shift of the launch overhead that minimises the mean absolute percentage error when every kernel i
/// moves by slope[i] per second of overhead: a weighted median of the per-kernel ideal shifts.
double best_shift(const std::vector<double>& sim, const std::vector<double>& meas, const std::vector<double>& slope,
                  double lo, double hi) {
    std::vector<std::pair<double, double>> pts;  // (shift, weight)
    double total = 0;
    for (size_t i = 0; i < sim.size(); ++i) {
        if (slope[i] <= 0) continue;
        const double w = slope[i] / meas[i];
        pts.emplace_back((meas[i] - sim[i]) / slope[i], w);
        total += w;
    }
    if (pts.empty()) return 0;
    std::sort(pts.begin(), pts.end());
    double acc = 0, shift = pts.back().first;
    for (const auto& [x, w] : pts) {
        acc += w;
        if (acc >= total / 2) {
            shift = x;
            break;
        }
    }
    return std::clamp(shift, lo, hi);
}

/// The x in [a0, b0] where f is least, from start_x: the first sweep scans a coarse grid for the basin; every sweep
/// refines by golden sections.
double minimise_1d(const std::function<double(double)>& f, double a0, double b0, double start_x, int sweep) {
    const int grid = 6;
    double best_x = std::clamp(start_x, a0, b0), best_e = f(best_x);
    if (sweep == 0)
        for (int gi = 0; gi <= grid; ++gi) {
            const double x = a0 + (b0 - a0) * gi / grid;
            const double e = f(x);
            if (e < best_e) {
                best_e = e;
                best_x = x;
            }
        }
    const double half = (b0 - a0) / (sweep == 0 ? grid : 4 * grid);
    double lo = std::max(a0, best_x - half), hi = std::min(b0, best_x + half);
    const double phi = (std::sqrt(5.0) - 1) / 2;
    double c = hi - phi * (hi - lo), d = lo + phi * (hi - lo);
    double fc = f(c), fd = f(d);
    while (hi - lo > 4e-3 * (b0 - a0)) {
        if (fc < fd) {
            hi = d;
            d = c;
            fd = fc;
            c = hi - phi * (hi - lo);
            fc = f(c);
        } else {
            lo = c;
            c = d;
            fc = fd;
            d = lo + phi * (hi - lo);
            fd = f(d);
        }
    }
    for (auto [x, e] : {std::pair<double, double>{c, fc}, {d, fd}})
        if (e < best_e) {
            best_e = e;
            best_x = x;
        }
    return best_x;
}

}  // namespace

void calibrator::fit(const std::vector<measurement>& ms, const std::vector<size_t>& use, std::ostream* log,
                     const std::vector<std::string>& only) {
    const size_t n = use.size();
    if (n == 0) throw input_error("calibrate: no measurements to fit");
    for (const auto& name : only)
        if (std::none_of(m_tunables.begin(), m_tunables.end(), [&](const tunable& t) { return t.name == name; })) {
            std::string known;
            for (const auto& t : m_tunables) known += (known.empty() ? "" : ", ") + t.name;
            throw input_error(std::string("calibrate: '")
                                  .append(name)
                                  .append("' is not a parameter the fit may change (")
                                  .append(known)
                                  .append(")"));
        }
    auto fitted = [&](const tunable& t) {
        return only.empty() || std::find(only.begin(), only.end(), t.name) != only.end();
    };
    std::vector<double> meas(n), cur(n);
    for (size_t i = 0; i < n; ++i) meas[i] = ms[use[i]].seconds;
    auto sim_all = [&](std::vector<double>& out) {
        for (size_t i = 0; i < n; ++i) out[i] = simulate(ms[use[i]]);
    };
    auto err = [&](const std::vector<double>& s) {
        double e = 0;
        for (size_t i = 0; i < n; ++i) e += std::fabs(s[i] - meas[i]) / meas[i];
        return 100 * e / static_cast<double>(n);
    };
    int launch = -1;
    for (size_t p = 0; p < m_tunables.size(); ++p)
        if (m_tunables[p].affects == "all" && m_tunables[p].unit == "s" && fitted(m_tunables[p]))
            launch = static_cast<int>(p);
    sim_all(cur);
    // Which measurements each tunable moves (so a search re-simulates only those), and how the launch
    // overhead moves each kernel (1 per launch).
    std::vector<std::vector<size_t>> deps(m_tunables.size());
    std::vector<double> slope(n, 0);
    for (size_t p = 0; p < m_tunables.size(); ++p) {
        tunable& t = m_tunables[p];
        if (!fitted(t)) continue;
        const double v0 = t.get();
        const double mid = t.log_scale ? std::sqrt(t.lower * t.upper) : (t.lower + t.upper) / 2;
        const double probe = static_cast<int>(p) == launch  ? v0 + 1e-7
                             : v0 < t.lower || v0 > t.upper ? mid
                             : v0 * 1.3 <= t.upper          ? v0 * 1.3
                                                            : std::max(t.lower, v0 / 1.3);
        // A bound (a rate limit, a latency) moves only the kernels it binds, and which those are depends on
        // its value: probe the ends of its range too, so a kernel it binds anywhere is re-simulated.
        std::vector<double> probes = {probe};
        if (static_cast<int>(p) != launch) probes.insert(probes.end(), {t.lower, t.upper});
        std::vector<bool> moved(n, false);
        for (double v : probes) {
            t.set(v);
            for (size_t i = 0; i < n; ++i) {
                const double s = simulate(ms[use[i]]);
                // A change below 0.01 % is not a dependence: the DRAM model's refresh phase alone moves a
                // kernel by that much from one run to the next.
                if (std::fabs(s - cur[i]) > 1e-4 * cur[i]) moved[i] = true;
                if (static_cast<int>(p) == launch) slope[i] = std::round((s - cur[i]) / (probe - v0));
            }
        }
        for (size_t i = 0; i < n; ++i)
            if (moved[i]) deps[p].push_back(i);
        t.set(v0);
    }
    auto place_launch = [&](std::vector<double>& s) {
        if (launch < 0) return;
        tunable& t = m_tunables[static_cast<size_t>(launch)];
        const double v0 = t.get();
        const double shift = best_shift(s, meas, slope, t.lower - v0, t.upper - v0);
        t.set(v0 + shift);
        for (size_t i = 0; i < n; ++i) s[i] += slope[i] * shift;
    };
    place_launch(cur);
    double best = err(cur);
    if (log) *log << "start: MAPE " << format_number(best, 4) << "% over " << n << " kernels\n";
    auto values = [&] {
        std::vector<double> v;
        for (const auto& t : m_tunables) v.push_back(t.get());
        return v;
    };
    for (int sweep = 0; sweep < 3; ++sweep) {
        const double before = best;
        const std::vector<double> start = values();
        for (size_t p = 0; p < m_tunables.size(); ++p) {
            if (static_cast<int>(p) == launch || deps[p].empty()) continue;
            tunable& t = m_tunables[p];
            const double launch_v = launch >= 0 ? m_tunables[static_cast<size_t>(launch)].get() : 0;
            auto to_x = [&](double v) { return t.log_scale ? std::log(v) : v; };
            auto from_x = [&](double x) { return t.log_scale ? std::exp(x) : x; };
            // Evaluates the error with p at v and the launch overhead placed best for it.
            auto eval = [&](double x, std::vector<double>* keep) {
                if (launch >= 0) m_tunables[static_cast<size_t>(launch)].set(launch_v);
                t.set(from_x(x));
                std::vector<double> s = cur;
                // cur holds values at launch_v; re-simulated ones are too.
                for (size_t i : deps[p]) s[i] = simulate(ms[use[i]]);
                place_launch(s);
                const double e = err(s);
                if (keep) *keep = s;
                return e;
            };
            const double a0 = to_x(t.lower), b0 = to_x(t.upper);
            const double best_x = minimise_1d([&](double x) { return eval(x, nullptr); }, a0, b0, to_x(t.get()), sweep);
            std::vector<double> s;
            best = eval(best_x, &s);
            cur = s;
            if (log)
                *log << "  " << t.name << " = " << format_tunable(t, t.get()) << "  (launch "
                     << (launch >= 0 ? format_tunable(m_tunables[static_cast<size_t>(launch)],
                                                      m_tunables[static_cast<size_t>(launch)].get())
                                     : "-")
                     << ")  MAPE " << format_number(best, 4) << "%\n";
        }
        // The estimates assumed launch moves every kernel exactly by its slope: re-simulate to stay exact.
        sim_all(cur);
        best = err(cur);
        if (log) *log << "sweep " << sweep + 1 << ": MAPE " << format_number(best, 4) << "%\n";
        if (best > before) {
            // The estimates misled the sweep: keep the parameters it started from.
            for (size_t p = 0; p < m_tunables.size(); ++p) m_tunables[p].set(start[p]);
            sim_all(cur);
            best = err(cur);
            if (log)
                *log << "kept the parameters before sweep " << sweep + 1 << ": MAPE " << format_number(best, 4)
                     << "%\n";
            break;
        }
        if (before - best < 0.05) break;
    }
}

// ------------------------------------------------------------------------------------------------ platform writer

namespace {

struct yaml_line {
    int indent = -1;  // -1: blank, comment or list item
    std::string key;
    std::string rest;  // after "key:"
};

yaml_line parse_line(const std::string& l) {
    yaml_line y;
    size_t i = 0;
    while (i < l.size() && l[i] == ' ') ++i;
    if (i >= l.size() || l[i] == '#' || l[i] == '-') return y;
    size_t k = i;
    while (k < l.size() && (std::isalnum(static_cast<unsigned char>(l[k])) || l[k] == '_')) ++k;
    if (k == i || k >= l.size() || l[k] != ':') return y;
    y.indent = static_cast<int>(i);
    y.key = l.substr(i, k - i);
    y.rest = l.substr(k + 1);
    return y;
}

/// Index of the line holding `path` (each level deeper than the one before), or -1.
int find_path(const std::vector<std::string>& lines, const std::vector<std::string>& path) {
    std::vector<std::pair<int, std::string>> stack;
    for (size_t i = 0; i < lines.size(); ++i) {
        const yaml_line y = parse_line(lines[i]);
        if (y.indent < 0) continue;
        while (!stack.empty() && stack.back().first >= y.indent) stack.pop_back();
        stack.emplace_back(y.indent, y.key);
        if (stack.size() == path.size()) {
            bool same = true;
            for (size_t j = 0; j < path.size(); ++j) same = same && stack[j].second == path[j];
            if (same) return static_cast<int>(i);
        }
    }
    return -1;
}

/// Makes sure `path` exists (creating the missing maps) and returns its line.
int ensure_path(std::vector<std::string>& lines, const std::vector<std::string>& path) {
    const int at = find_path(lines, path);
    if (at >= 0) return at;
    if (path.size() == 1) {
        lines.push_back(path[0] + ":");
        return static_cast<int>(lines.size() - 1);
    }
    const std::vector<std::string> parent(path.begin(), path.end() - 1);
    const int p = ensure_path(lines, parent);
    const yaml_line py = parse_line(lines[static_cast<size_t>(p)]);
    const std::string rest = py.rest.substr(0, py.rest.find('#'));
    if (rest.find_first_not_of(" \t") != std::string::npos)
        throw input_error("cannot write the fitted value of '" + path.back() + "': '" + py.key +
                          "' is written inline; write it as a block map (one key per line)");
    int indent = py.indent + 2;
    for (size_t i = static_cast<size_t>(p) + 1; i < lines.size(); ++i) {
        const yaml_line y = parse_line(lines[i]);
        if (y.indent < 0) continue;
        if (y.indent > py.indent) indent = y.indent;
        break;
    }
    lines.insert(lines.begin() + p + 1, std::string(static_cast<size_t>(indent), ' ') + path.back() + ":");
    return p + 1;
}

}  // namespace

std::string write_fitted_platform(const std::string& text, const std::string& device_group,
                                  const std::vector<std::pair<std::string, std::string>>& values,
                                  const std::vector<std::string>& provenance) {
    std::vector<std::string> lines;
    {
        std::stringstream ss(text);
        std::string l;
        bool in_block = false;
        while (std::getline(ss, l)) {
            if (l.rfind("# >>> tessel calibrate", 0) == 0) in_block = true;
            if (!in_block) lines.push_back(l);
            if (l.rfind("# <<< tessel calibrate", 0) == 0) in_block = false;
        }
    }
    for (const auto& [name, value] : values) {
        std::vector<std::string> path = {"components", device_group, "params"};
        std::stringstream ns(name);
        std::string seg;
        while (std::getline(ns, seg, '.')) path.push_back(seg);
        const int at = ensure_path(lines, path);
        std::string& l = lines[static_cast<size_t>(at)];
        const yaml_line y = parse_line(l);
        const size_t hash = y.rest.find(" #");
        const std::string comment = hash == std::string::npos ? "" : y.rest.substr(hash);
        l = std::string(static_cast<size_t>(y.indent), ' ').append(y.key).append(": ").append(value).append(comment);
    }
    std::string out = "# >>> tessel calibrate (this block and the values it names are rewritten by every fit)\n";
    for (const auto& p : provenance) out += "#   " + p + "\n";
    out += "# <<< tessel calibrate\n";
    for (const auto& l : lines) out += l + "\n";
    return out;
}

}  // namespace tessel
