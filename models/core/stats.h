// Statistics, declared per component with name, unit and meaning (gem5/SST style), named from the module
// hierarchy. Values are accumulated during the run; formulas (utilisation, bandwidth) are evaluated at the end
// from the simulated time. Output: a JSON tree mirroring the hierarchy, and a flat CSV.
#pragma once

#include <deque>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace tessel {

class stat_group {
public:
    explicit stat_group(std::string path = {}) : m_path(std::move(path)) {}
    stat_group(const stat_group&) = delete;
    stat_group& operator=(const stat_group&) = delete;

    /// An accumulator; the returned reference stays valid for the group's life.
    double& scalar(const std::string& name, const std::string& unit, const std::string& desc);
    /// A derived value computed at the end from the simulated seconds.
    void formula(const std::string& name, const std::string& unit, const std::string& desc,
                 std::function<double(double sim_seconds)> fn);
    /// Per-unit values of a data-oriented array (written only when per-unit output is asked for).
    void vector(const std::string& name, const std::string& unit, const std::string& desc,
                std::function<std::vector<double>(double sim_seconds)> fn);

    const std::string& path() const { return m_path; }
    void set_path(std::string p) { m_path = std::move(p); }

    struct entry {
        std::string name, unit, desc;
        double* value = nullptr;
        std::function<double(double)> fn;
        std::function<std::vector<double>(double)> vec;
    };
    const std::deque<entry>& entries() const { return m_entries; }

private:
    std::string m_path;
    std::deque<double> m_values;
    std::deque<entry> m_entries;
};

/// All stat groups of one simulation, in registration order (so output is deterministic).
class stats_registry {
public:
    void add(const stat_group* g) { m_groups.push_back(g); }
    void add_run_info(const std::string& name, double value, const std::string& unit, const std::string& desc);

    void write_json(std::ostream& os, double sim_seconds, bool per_unit) const;
    void write_csv(std::ostream& os, double sim_seconds) const;

private:
    std::vector<const stat_group*> m_groups;
    stat_group m_run{"run"};
};

/// A double printed the same way every time, short where possible ("%.17g" only when needed).
std::string exact_number(double v);

}  // namespace tessel
