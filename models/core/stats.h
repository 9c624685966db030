// Statistics, declared once per component kind with name, unit and meaning (gem5/SST style), named from the
// module hierarchy. The kind's table (`C::stat_table()`, read by make_kind in registry.h) feeds both
// `tessel describe` and the component's stat_group: a component can only register a statistic its table declares,
// and takes the unit and meaning from there. Values are accumulated during the run; formulas (utilisation,
// bandwidth) are evaluated at the end from the simulated time. Output: a JSON tree mirroring the hierarchy, and a
// flat CSV.
#pragma once

#include <deque>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace tessel {

/// One value for the whole component, or one value per unit (a data-oriented array's PEs, a mesh's links),
/// written only when per-unit output is asked for (--stats-per-unit).
enum class stat_shape { single, per_unit };

/// A statistic a component kind reports: the one declaration, in the kind's stat_table().
struct stat_decl {
    std::string name;
    std::string unit;  // "B", "s", "1" for a ratio, a counted thing ("packet", "MAC")
    std::string desc;  // what it counts, in a few words
    stat_shape shape = stat_shape::single;
};

class stat_group {
public:
    /// A group that holds only statistics declared in `table`, the table of kind `kind` (null: declares none).
    /// The table must outlive the group (a kind's table lives in the kind registry).
    stat_group(std::string path, std::string kind, const std::vector<stat_decl>* table);
    stat_group(const stat_group&) = delete;
    stat_group& operator=(const stat_group&) = delete;

    /// An accumulator; the returned reference stays valid for the group's life.
    double& scalar(const std::string& name);
    /// A derived value computed at the end from the simulated seconds.
    void formula(const std::string& name, std::function<double(double sim_seconds)> fn);
    /// Per-unit values of a data-oriented array (declared with stat_shape::per_unit).
    void per_unit(const std::string& name, std::function<std::vector<double>(double sim_seconds)> fn);

    const std::string& path() const { return m_path; }

    struct entry {
        const stat_decl* decl = nullptr;
        double* value = nullptr;
        std::function<double(double)> fn;
        std::function<std::vector<double>(double)> vec;
    };
    const std::deque<entry>& entries() const { return m_entries; }

private:
    /// The declaration of `name`; a logic_error naming the kind and the statistic when it is undeclared, declared
    /// with the other shape, or registered twice.
    const stat_decl& declared(const std::string& name, stat_shape shape) const;

    std::string m_path;
    std::string m_kind;
    const std::vector<stat_decl>* m_table;
    std::deque<double> m_values;
    std::deque<entry> m_entries;
};

/// A table of rows with the same declared columns, one row per key (an op), written after the component tree:
/// in JSON as `name: {key: {column: {value, unit}}}` with the key whole (an op's dots do not nest), in CSV with
/// the path `name:key`.
struct stat_table_rows {
    std::string name;
    std::vector<stat_decl> columns;
    std::vector<std::pair<std::string, std::vector<double>>> rows;
};

/// All stat groups of one simulation, in registration order (so output is deterministic).
class stats_registry {
public:
    void add(const stat_group* g) { m_groups.push_back(g); }
    /// The run's own statistics (run_table()): set once the run is summarised.
    stat_group& run() { return m_run; }
    static const std::vector<stat_decl>& run_table();
    void add_table(stat_table_rows t) { m_tables.push_back(std::move(t)); }

    void write_json(std::ostream& os, double sim_seconds, bool per_unit) const;
    void write_csv(std::ostream& os, double sim_seconds) const;

private:
    std::vector<const stat_group*> m_groups;
    stat_group m_run{"run", "run", &run_table()};
    std::vector<stat_table_rows> m_tables;
};

/// A double printed the same way every time, short where possible ("%.17g" only when needed).
std::string exact_number(double v);

}  // namespace tessel
