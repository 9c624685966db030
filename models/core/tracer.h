// Activity traces: every unit that does work (a compute pipe, a memory channel, a link) is a track; every
// piece of work is a slice [start, end) on it, named by the op of the workload it belongs to.
// Written as VCD (GTKWave: a `busy` wire and an `op` number per track) and as Chrome trace-event JSON
// (Perfetto: a process per component, a thread per unit, lanes where a unit serves several requests at once, and
// a busy-over-time counter per group of units). A scope filter (glob patterns on track paths), a time window and
// a merge gap keep files small; back-to-back slices of one step on one track are merged as they arrive.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "models/core/units.h"

namespace tessel {

struct trace_options {
    std::string vcd_path;
    std::string perfetto_path;
    std::vector<std::string> scopes;  // glob patterns ("*.tile[0,*].pe"); empty = everything
    tick from = 0;
    tick to = max_tick;
    size_t max_tracks = 20000;  // a guard against tracing a whole wafer by accident
    tick merge_gap = 0;         // slices of one op on one track less than this apart become one (--trace-merge)
};

class tracer {
public:
    void configure(const trace_options& o) {
        m_opt = o;
        m_enabled = !m_opt.vcd_path.empty() || !m_opt.perfetto_path.empty();
    }
    bool enabled() const { return m_enabled; }

    /// Registers a track; returns -1 when tracing is off or the path is outside the scope filter.
    /// `group` is the component that owns the track (one Perfetto process per group).
    int track(const std::string& group, const std::string& path);

    void slice(int track, tick start, tick end, std::uint32_t op, std::uint64_t step) {
        if (track < 0 || end <= m_opt.from || start >= m_opt.to) return;
        add(track, start, end, op, step);
    }

    void set_op_names(std::vector<std::string> names) { m_op_names = std::move(names); }
    /// A counter track of the Perfetto trace ("power (W)"), in a process of its own: `values[i]` holds from
    /// i * step until the next sample. Samples outside the time window are left out.
    void counter(std::string name, tick step, std::vector<double> values) {
        m_counters.push_back({std::move(name), step, std::move(values)});
    }
    /// Components under one of these paths (the chips of a system: "dgx_a100.gpu[3]") share one Perfetto process,
    /// their tracks named by the rest of their path; other components keep a process each.
    void set_processes(const std::vector<std::string>& prefixes) { m_processes = {prefixes.begin(), prefixes.end()}; }
    /// Writes the files asked for; throws input_error if a file cannot be written.
    void write() const;
    size_t slice_count() const { return m_slices.size(); }
    size_t track_count() const { return m_tracks.size(); }

    /// True when `path` matches glob `pattern` (* any run of characters, ? one character).
    static bool glob_match(const std::string& pattern, const std::string& path);

private:
    struct slice_rec {
        tick start, end;
        std::uint32_t op;
        std::uint32_t track;
        std::uint64_t step;
    };
    struct track_rec {
        std::string group, path;
        std::int64_t last = -1;  // index of the last slice, for merging
    };
    void add(int track, tick start, tick end, std::uint32_t op, std::uint64_t step);
    void write_vcd(const std::string& path) const;
    void write_perfetto(const std::string& path) const;
    /// Per slice, its lane within its track: lanes never hold overlapping slices (see write_perfetto).
    std::vector<std::uint32_t> assign_lanes() const;
    /// Per group of tracks ("chip.tile[*].pe"), the percentage of its units with work in service in each window.
    struct busy_series {
        std::string group;
        tick start, width;
        std::vector<double> percent;
    };
    std::vector<busy_series> busy_over_time(size_t windows) const;
    const std::string& op_name(std::uint32_t op) const;
    /// The Perfetto process a track group belongs to (a chip, or the group itself).
    std::string process_of(const std::string& group) const;

    trace_options m_opt;
    std::set<std::string> m_processes;
    bool m_enabled = false;  // a file is asked for (checked on hot paths)
    std::vector<track_rec> m_tracks;
    std::vector<slice_rec> m_slices;
    std::vector<std::string> m_op_names;
    struct counter_rec {
        std::string name;
        tick step;
        std::vector<double> values;
    };
    std::vector<counter_rec> m_counters;
};

}  // namespace tessel
