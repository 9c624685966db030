#include "models/core/tracer.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <queue>

#include "models/core/error.h"
#include "models/core/output_file.h"
#include "models/core/text.h"

namespace tessel {

bool tracer::glob_match(const std::string& pattern, const std::string& path) {
    size_t p = 0, s = 0, star = std::string::npos, mark = 0;
    while (s < path.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == path[s])) {
            ++p;
            ++s;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            mark = s;
        } else if (star != std::string::npos) {
            p = star + 1;
            s = ++mark;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

int tracer::track(const std::string& group, const std::string& path) {
    if (!enabled()) return -1;
    if (!m_opt.scopes.empty()) {
        bool hit = false;
        for (const auto& pat : m_opt.scopes)
            if (glob_match(pat, path) || glob_match(pat + ".*", path) || glob_match(pat + "*", path)) hit = true;
        if (!hit) return -1;
    }
    if (m_tracks.size() >= m_opt.max_tracks) return -1;
    m_tracks.push_back(track_rec{group, path, -1});
    return static_cast<int>(m_tracks.size() - 1);
}

void tracer::add(int track, tick start, tick end, std::uint32_t op, std::uint64_t step) {
    start = std::max(start, m_opt.from);
    end = std::min(end, m_opt.to);
    track_rec& t = m_tracks[static_cast<size_t>(track)];
    if (t.last >= 0) {
        slice_rec& prev = m_slices[static_cast<size_t>(t.last)];
        // Packets of one transfer arrive back to back: one slice, not thousands. With a merge gap, the work of one
        // op (any of its steps) that follows within the gap joins the slice too (it keeps its first step).
        const bool same = m_opt.merge_gap > 0 ? prev.op == op : prev.step == step;
        if (same && start >= prev.start && (start <= prev.end || start - prev.end < m_opt.merge_gap)) {
            prev.end = std::max(prev.end, end);
            return;
        }
    }
    t.last = static_cast<std::int64_t>(m_slices.size());
    m_slices.push_back(slice_rec{start, end, op, static_cast<std::uint32_t>(track), step});
}

const std::string& tracer::op_name(std::uint32_t op) const {
    static const std::string unnamed = "step";
    return op < m_op_names.size() ? m_op_names[op] : unnamed;
}

std::vector<std::uint32_t> tracer::assign_lanes() const {
    std::vector<std::uint32_t> lane(m_slices.size(), 0);
    std::vector<std::vector<size_t>> by_track(m_tracks.size());
    for (size_t i = 0; i < m_slices.size(); ++i) by_track[m_slices[i].track].push_back(i);
    for (auto& idx : by_track) {
        std::stable_sort(idx.begin(), idx.end(),
                         [&](size_t a, size_t b) { return m_slices[a].start < m_slices[b].start; });
        // (end of its last slice, lane), earliest end on top; ties to the lower lane, so runs are deterministic.
        std::priority_queue<std::pair<tick, std::uint32_t>, std::vector<std::pair<tick, std::uint32_t>>, std::greater<>>
            free_at;
        std::uint32_t lanes = 0;
        for (size_t i : idx) {
            const slice_rec& s = m_slices[i];
            std::uint32_t l;
            if (!free_at.empty() && free_at.top().first <= s.start) {
                l = free_at.top().second;
                free_at.pop();
            } else {
                l = lanes++;
            }
            lane[i] = l;
            free_at.push({s.end, l});
        }
    }
    return lane;
}

void tracer::write() const {
    if (!m_opt.vcd_path.empty()) write_vcd(m_opt.vcd_path);
    if (!m_opt.perfetto_path.empty()) write_perfetto(m_opt.perfetto_path);
}

namespace {

std::string vcd_id(size_t n) {
    // Printable identifier codes '!'..'~'.
    std::string id;
    do {
        id += static_cast<char>('!' + n % 94);
        n /= 94;
    } while (n);
    return id;
}

std::string vcd_name(const std::string& s) {
    std::string o;
    for (char c : s) o += (c == ' ' || c == '.') ? '_' : c;
    return o;
}

std::string binary(std::uint32_t v) {
    if (v == 0) return "0";
    std::string s;
    while (v) {
        s += static_cast<char>('0' + (v & 1));
        v >>= 1;
    }
    std::reverse(s.begin(), s.end());
    return s;
}

std::string json_str(const std::string& s) { return "\"" + json_escape(s) + "\""; }

// Microseconds with femtosecond precision, printed identically on every run.
std::string micros(tick t) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%llu.%09llu", static_cast<unsigned long long>(t / 1000000000ULL),
                  static_cast<unsigned long long>(t % 1000000000ULL));
    return buf;
}

}  // namespace

std::vector<tracer::busy_series> tracer::busy_over_time(size_t windows) const {
    if (m_slices.empty()) return {};
    tick end = 0;
    for (const auto& s : m_slices) end = std::max(end, s.end);
    const tick start = std::min(m_opt.from, end);
    const tick span = std::max<tick>(end - start, 1);
    const tick width = std::max<tick>((span + windows - 1) / windows, 1);
    const size_t n = static_cast<size_t>((span + width - 1) / width);
    // Each track's slices merged into the intervals it is busy, then spread over the windows.
    std::vector<std::vector<std::pair<tick, tick>>> busy(m_tracks.size());
    for (const auto& s : m_slices) busy[s.track].push_back({s.start, s.end});
    std::map<std::string, std::pair<size_t, std::vector<double>>> groups;  // group -> (units, busy ticks per window)
    for (size_t t = 0; t < m_tracks.size(); ++t) {
        auto& g = groups[group_name(m_tracks[t].path)];
        ++g.first;
        if (g.second.empty()) g.second.assign(n, 0.0);
        auto& v = busy[t];
        std::sort(v.begin(), v.end());
        tick from = 0, to = 0;
        auto spread = [&](tick a, tick b) {
            for (tick w = (a - start) / width; a < b; ++w) {
                const tick w_end = start + (w + 1) * width;
                const tick upto = std::min(b, w_end);
                g.second[static_cast<size_t>(w)] += static_cast<double>(upto - a);
                a = upto;
            }
        };
        for (const auto& [a, b] : v) {
            if (a > to) {
                spread(from, to);
                from = a;
            }
            to = std::max(to, b);
        }
        spread(from, to);
    }
    std::vector<busy_series> out;
    for (auto& [name, g] : groups) {
        busy_series b{name, start, width, {}};
        for (size_t w = 0; w < n; ++w) {
            const tick w_width = std::min(width, end - (start + static_cast<tick>(w) * width));
            b.percent.push_back(100.0 * g.second[w] /
                                (static_cast<double>(g.first) * static_cast<double>(std::max<tick>(w_width, 1))));
        }
        out.push_back(std::move(b));
    }
    return out;
}

void tracer::write_vcd(const std::string& path) const {
    output_file out(path, "VCD trace");
    std::ostream& os = out.stream();
    os << "$comment tessel activity trace: per track, busy = 1 while a step is served, op = index of its op, active = "
          "how many are served at once $end\n";
    if (!m_op_names.empty()) {
        os << "$comment op indices:";
        for (size_t i = 0; i < m_op_names.size(); ++i) os << " " << i << "=" << m_op_names[i];
        os << " $end\n";
    }
    os << "$timescale 1fs $end\n";

    // Scopes follow the dotted path; the last element holds the track's two variables.
    struct var_ids {
        std::string busy, op, active;
    };
    std::vector<var_ids> ids(m_tracks.size());
    std::vector<std::string> open;
    std::vector<size_t> order(m_tracks.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return m_tracks[a].path < m_tracks[b].path; });
    size_t next_id = 0;
    for (size_t i : order) {
        const std::vector<std::string> parts = split_path(m_tracks[i].path);
        size_t common = 0;
        while (common < open.size() && common < parts.size() && open[common] == parts[common]) ++common;
        while (open.size() > common) {
            os << "$upscope $end\n";
            open.pop_back();
        }
        for (size_t k = common; k < parts.size(); ++k) {
            os << "$scope module " << vcd_name(parts[k]) << " $end\n";
            open.push_back(parts[k]);
        }
        ids[i].busy = vcd_id(next_id++);
        ids[i].op = vcd_id(next_id++);
        ids[i].active = vcd_id(next_id++);
        os << "$var wire 1 " << ids[i].busy << " busy $end\n";
        os << "$var wire 32 " << ids[i].op << " op $end\n";
        os << "$var integer 32 " << ids[i].active << " active $end\n";
    }
    while (!open.empty()) {
        os << "$upscope $end\n";
        open.pop_back();
    }
    os << "$enddefinitions $end\n";

    struct change {
        tick t;
        std::uint32_t track;
        int kind;  // 0 = end, 1 = start (ends first at equal times so back-to-back slices stay busy)
        std::uint32_t op;
    };
    std::vector<change> changes;
    changes.reserve(m_slices.size() * 2);
    for (const auto& s : m_slices) {
        changes.push_back({s.start, s.track, 1, s.op});
        changes.push_back({s.end, s.track, 0, s.op});
    }
    std::stable_sort(changes.begin(), changes.end(), [](const change& a, const change& b) {
        if (a.t != b.t) return a.t < b.t;
        if (a.track != b.track) return a.track < b.track;
        return a.kind < b.kind;
    });
    os << "#0\n$dumpvars\n";
    for (size_t i = 0; i < m_tracks.size(); ++i)
        os << "0" << ids[i].busy << "\nb0 " << ids[i].op << "\nb0 " << ids[i].active << "\n";
    os << "$end\n";
    std::vector<int> active(m_tracks.size(), 0);
    tick last_t = 0;
    for (size_t i = 0; i < changes.size();) {
        const tick t = changes[i].t;
        if (t != last_t) os << "#" << t << "\n";
        last_t = t;
        // Apply all changes at time t, then print the final state of each touched track.
        std::map<std::uint32_t, std::uint32_t> touched;  // track -> op
        for (; i < changes.size() && changes[i].t == t; ++i) {
            const change& c = changes[i];
            active[c.track] += c.kind ? 1 : -1;
            if (c.kind)
                touched[c.track] = c.op;
            else
                touched.emplace(c.track, c.op);
        }
        for (const auto& [tr, op] : touched) {
            os << (active[tr] > 0 ? "1" : "0") << ids[tr].busy << "\n";
            if (active[tr] > 0) os << "b" << binary(op) << " " << ids[tr].op << "\n";
            os << "b" << binary(static_cast<std::uint32_t>(active[tr])) << " " << ids[tr].active << "\n";
        }
    }
    out.commit();
}

std::string tracer::process_of(const std::string& group) const {
    // The nearest listed ancestor of the group (or the group itself), cutting its path at dots from the end.
    for (size_t end = group.size(); end != std::string::npos && end > 0; end = group.rfind('.', end - 1)) {
        std::string head = group.substr(0, end);
        if (m_processes.count(head)) return head;
    }
    return group;
}

void tracer::write_perfetto(const std::string& path) const {
    output_file out(path, "trace");
    std::ostream& os = out.stream();
    std::vector<std::string> process(m_tracks.size());
    std::map<std::string, int> pids;
    for (size_t i = 0; i < m_tracks.size(); ++i) pids.emplace(process[i] = process_of(m_tracks[i].group), 0);
    int next = 1;
    for (auto& [g, pid] : pids) pid = next++;
    os << "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n";
    bool first = true;
    auto sep = [&]() -> std::ostream& {
        os << (first ? "" : ",\n");
        first = false;
        return os;
    };
    for (const auto& [g, pid] : pids)
        sep() << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << pid
              << ", \"args\": {\"name\": " << json_str(g) << "}}";
    // Counters (the power timeline) in one process after the components'.
    const int counter_pid = next;
    if (!m_counters.empty() || !m_slices.empty())
        sep() << "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": " << counter_pid
              << ", \"args\": {\"name\": \"counters\"}}";
    for (const auto& c : m_counters)
        for (size_t i = 0; i < c.values.size(); ++i) {
            const tick at = static_cast<tick>(i) * c.step;
            if (at + c.step <= m_opt.from || at >= m_opt.to) continue;
            sep() << "{\"ph\": \"C\", \"name\": " << json_str(c.name) << ", \"pid\": " << counter_pid
                  << ", \"ts\": " << micros(at) << ", \"args\": {\"value\": " << c.values[i] << "}}";
        }
    // Busy over time per group of units, as the summary groups them: a unit counts while it serves anything.
    for (const auto& b : busy_over_time(500)) {
        const std::string name = "busy % " + b.group;
        double last = -1;
        for (size_t i = 0; i < b.percent.size(); ++i) {
            if (b.percent[i] == last) continue;  // a counter holds its value until the next sample
            last = b.percent[i];
            sep() << "{\"ph\": \"C\", \"name\": " << json_str(name) << ", \"pid\": " << counter_pid
                  << ", \"ts\": " << micros(b.start + static_cast<tick>(i) * b.width)
                  << ", \"args\": {\"value\": " << last << "}}";
        }
        sep() << "{\"ph\": \"C\", \"name\": " << json_str(name) << ", \"pid\": " << counter_pid
              << ", \"ts\": " << micros(b.start + static_cast<tick>(b.percent.size()) * b.width)
              << ", \"args\": {\"value\": 0}}";
    }
    // A unit that serves several requests at once (a memory's banks behind one port, a link's packets in
    // flight) holds overlapping slices; Perfetto nests or hides those. Each track is split into lanes that never
    // overlap: a slice takes the lane that freed earliest, or a new one (interval partitioning: as few lanes as
    // the most slices in flight at once). Lane k > 0 of "hbm" is the thread "hbm (k+1)".
    const std::vector<std::uint32_t> lane = assign_lanes();
    std::vector<std::uint32_t> lanes(m_tracks.size(), 1), first_tid(m_tracks.size(), 1);
    for (size_t i = 0; i < m_slices.size(); ++i)
        lanes[m_slices[i].track] = std::max(lanes[m_slices[i].track], lane[i] + 1);
    for (size_t i = 1; i < m_tracks.size(); ++i) first_tid[i] = first_tid[i - 1] + lanes[i - 1];
    std::vector<int> track_pid(m_tracks.size());
    for (size_t i = 0; i < m_tracks.size(); ++i) {
        const int pid = track_pid[i] = pids[process[i]];
        std::string name = m_tracks[i].path;
        if (name.rfind(process[i] + ".", 0) == 0) name = name.substr(process[i].size() + 1);
        for (std::uint32_t k = 0; k < lanes[i]; ++k) {
            const std::uint32_t tid = first_tid[i] + k;
            sep() << "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": " << pid << ", \"tid\": " << tid
                  << ", \"args\": {\"name\": " << json_str(k == 0 ? name : name + " (" + std::to_string(k + 1) + ")")
                  << "}}";
            sep() << "{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": " << pid << ", \"tid\": " << tid
                  << ", \"args\": {\"sort_index\": " << tid << "}}";
        }
    }
    for (size_t i = 0; i < m_slices.size(); ++i) {
        const slice_rec& s = m_slices[i];
        const int pid = track_pid[s.track];
        sep() << "{\"ph\": \"X\", \"name\": " << json_str(op_name(s.op)) << ", \"pid\": " << pid
              << ", \"tid\": " << first_tid[s.track] + lane[i] << ", \"ts\": " << micros(s.start)
              << ", \"dur\": " << micros(s.end - s.start) << ", \"args\": {\"step\": " << s.step << "}}";
    }
    os << "\n]}\n";
    out.commit();
}

}  // namespace tessel
