// A sweep specification (sweep YAML, see docs/sweeps.md): a base platform and workload, axes over any --set
// path (lists, linear ranges, log ranges), zipped axes, derived parameters and filters written as expressions,
// and the metrics to collect. expand() turns it into points: each point is one `tessel run`, identified by a key
// computed from its parameter values alone, so a re-run of the same sweep recognises finished points.
//
// Everything here is checked while parsing and expanding: a bad spec fails with file:line:column before any
// point runs. Whether a --set path exists on the platform is checked by validate_points() (validate.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "models/core/error.h"
#include "models/core/expr.h"

namespace tessel::sweep {

/// One name = value a point sets: a --set path (noc.link_bandwidth, workload.batch, mapper.NAME) or one of
/// the run's inputs (platform, workload, program).
struct param {
    std::string name, value;
};

/// An expression from the spec, with where its text starts so errors can point into it.
struct located_expr {
    expression expr;
    source_location where;  // the expression's first character (or its YAML node when not a one-line scalar)
    bool exact = false;     // where + offset is a real column (a plain or quoted one-line scalar)
    /// The location of a character of the expression text.
    source_location at(size_t offset) const;
};

/// Values an axis takes, in order.
struct axis {
    std::string name;                          // a --set path, or platform | workload | program
    std::vector<std::string> values;           // exactly as passed to --set
    std::vector<source_location> value_where;  // each value's list item (a range: the range's map)
    source_location where;                     // the axis's key
};

/// A parameter computed from others for each point: `tile.sram.banks: "max(2, tile.sram.capacity / 64KiB)"`.
struct derived_param {
    std::string name;
    located_expr expr;
    std::string unit;  // appended to the number ("KiB"); empty for plain numbers and strings
    source_location where;
};

/// A column of the results: a value from the run's summary.json, or an expression over other columns.
struct metric {
    std::string name;
    std::string path;                  // summary.json path: "sim_time_s", "resources.noc.utilisation_max"
    std::optional<located_expr> expr;  // or a formula over earlier metrics, parameters and summary paths
    source_location where;
};

/// Slurm job-array settings (spec `slurm:` section; the command line overrides each).
struct slurm_options {
    std::string partition;                 // empty: the cluster's default
    std::string time;                      // per array task, Slurm's format ("00:30:00"); empty: default
    int cpus_per_task = 1;                 // a point is one single-threaded process; more runs points in parallel
    int points_per_task = 0;               // 0: one point per task, or more when the array would be too large
    int max_parallel = 0;                  // array throttle (--array=0-N%M); 0: no limit
    std::vector<std::string> sbatch_args;  // passed to sbatch as they are ("--qos=short", "--account=arch")
};

struct spec {
    std::string file;  // as given
    std::string dir;   // the spec's folder: relative platform, workload and program files start here
    std::string name;  // `sweep:`, else the file's stem
    std::string description;
    param platform{"platform", ""}, workload{"workload", ""}, program{"program", ""};  // empty when an axis
    source_location platform_where, workload_where, program_where;
    std::vector<param> sets;                                // fixed --set values for every point
    std::vector<source_location> set_where, set_key_where;  // each fixed value, and its key
    std::vector<axis> axes;                                 // in file order
    std::vector<std::vector<size_t>> groups;  // axes that advance together (a zip, or one axis alone), in order
    std::vector<derived_param> derived;
    std::vector<located_expr> filters;  // a point runs when every filter is true
    std::vector<metric> metrics;
    double timeout_s = 0;  // per point; 0: no limit
    bool stats = true;     // each point writes stats.json and stats.csv (tessel run --no-stats otherwise)
    slurm_options slurm;
    source_location axes_where;

    /// Where a point's `key = value` comes from: the axis value's item, the derived parameter, the fixed set.
    source_location where_of(const std::string& key, const std::string& value) const;
    /// Where `key` is declared.
    source_location where_of(const std::string& key) const;
};

/// Metrics collected when the spec names none.
std::vector<std::string> default_metrics();

/// Reads a sweep YAML file; throws input_error with file:line:column.
spec load_spec(const std::string& path);
/// Parses sweep YAML text; `file` names it in messages and relative paths start at its folder.
spec parse_spec(const std::string& text, const std::string& file);

struct point {
    size_t index = 0;                         // position among the points of this expansion
    std::string key;                          // stable id from the parameter values (16 hex digits)
    std::string platform, workload, program;  // as written in the spec
    std::vector<param> params;                // axes then derived parameters: the columns of the results table
    std::vector<param> sets;                  // every --set of the run: fixed, axes and derived, in that order
};

struct expansion {
    std::vector<point> points;
    size_t combinations = 0;  // before filters
    size_t filtered_out = 0;
};

/// Expands the axes (cartesian product over groups, the first axis outermost), computes derived parameters
/// and applies the filters. Throws input_error (in the spec) when an expression fails or nothing is left.
expansion expand(const spec& s);

/// The key of a run: a hash of its platform, workload or program and every --set, independent of order.
std::string point_key(const std::string& platform, const std::string& workload, const std::string& program,
                      const std::vector<param>& sets);

/// A parameter's value for expressions: a quantity in canonical units (bytes, bytes/cycle, seconds, hertz),
/// a plain number, or the text.
expr_value param_value(const std::string& text);

/// Formats a number the way a --set value is written: whole numbers without a fraction, otherwise up to 12
/// significant digits.
std::string format_value(double v);

/// "0.5", "30s", "2min", "1h" to seconds; throws input_error for anything else.
double parse_duration(const std::string& text);

}  // namespace tessel::sweep
