#include "models/core/stats.h"

#include "models/core/text.h"
#include "models/core/yaml_node.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <ostream>
#include <stdexcept>

namespace tessel {

stat_group::stat_group(std::string path, std::string kind, const std::vector<stat_decl>* table)
    : m_path(std::move(path)), m_kind(std::move(kind)), m_table(table) {}

const stat_decl& stat_group::declared(const std::string& name, stat_shape shape) const {
    const std::string who = "component '" + m_path + "' (" + m_kind + ")";
    const stat_decl* d = nullptr;
    std::vector<std::string> names;
    if (m_table)
        for (const auto& s : *m_table) {
            if (s.name == name) d = &s;
            names.push_back(s.name);
        }
    if (!d)
        throw std::logic_error(who + " registers statistic '" + name + "', which kind '" + m_kind +
                               "' does not declare (declared: " + (names.empty() ? "none" : join(names)) +
                               "); add it to the kind's stat_table()");
    if (d->shape != shape)
        throw std::logic_error(who + " registers statistic '" + name + "' as " +
                               (shape == stat_shape::per_unit ? "per-unit values" : "a single value") + ", but kind '" +
                               m_kind + "' declares it " +
                               (d->shape == stat_shape::per_unit ? "per unit" : "as a single value"));
    for (const auto& e : m_entries)
        if (e.decl == d) throw std::logic_error(who + " registers statistic '" + name + "' twice");
    return *d;
}

double& stat_group::scalar(const std::string& name) {
    entry e;
    e.decl = &declared(name, stat_shape::single);
    m_values.push_back(0.0);
    e.value = &m_values.back();
    m_entries.push_back(std::move(e));
    return m_values.back();
}

void stat_group::formula(const std::string& name, std::function<double(double)> fn) {
    entry e;
    e.decl = &declared(name, stat_shape::single);
    e.fn = std::move(fn);
    m_entries.push_back(std::move(e));
}

void stat_group::per_unit(const std::string& name, std::function<std::vector<double>(double)> fn) {
    entry e;
    e.decl = &declared(name, stat_shape::per_unit);
    e.vec = std::move(fn);
    m_entries.push_back(std::move(e));
}

std::string exact_number(double v) {
    if (!std::isfinite(v)) return "null";
    if (v == std::floor(v) && std::fabs(v) < 1e15) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f", v);
        return buf;
    }
    char buf[40];
    for (int prec = 6; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

namespace {

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string o = "\"";
    for (char c : s) o += (c == '"') ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
}

struct json_tree {
    std::vector<std::pair<std::string, std::unique_ptr<json_tree>>> children;
    std::vector<std::pair<std::string, std::string>> leaves;  // name -> rendered JSON value
    json_tree* child(const std::string& name) {
        for (auto& [n, c] : children)
            if (n == name) return c.get();
        children.emplace_back(name, std::make_unique<json_tree>());
        return children.back().second.get();
    }
    void write(std::ostream& os, int indent) const {
        const std::string pad(static_cast<size_t>(indent + 2), ' ');
        os << "{";
        bool first = true;
        for (const auto& [n, v] : leaves) {
            os << (first ? "\n" : ",\n") << pad << '"' << json_escape(n) << "\": " << v;
            first = false;
        }
        for (const auto& [n, c] : children) {
            os << (first ? "\n" : ",\n") << pad << '"' << json_escape(n) << "\": ";
            c->write(os, indent + 2);
            first = false;
        }
        os << "\n" << std::string(static_cast<size_t>(indent), ' ') << "}";
    }
};

std::string leaf_json(double v, const std::string& unit) {
    return "{\"value\": " + exact_number(v) + ", \"unit\": \"" + json_escape(unit) + "\"}";
}

}  // namespace

void stats_registry::write_json(std::ostream& os, double sim_seconds, bool per_unit) const {
    json_tree root;
    std::vector<const stat_group*> all{&m_run};
    all.insert(all.end(), m_groups.begin(), m_groups.end());
    for (const stat_group* g : all) {
        json_tree* node = &root;
        for (const auto& part : split_path(g->path())) node = node->child(part);
        for (const auto& e : g->entries()) {
            if (e.vec) {
                if (!per_unit) continue;
                std::string arr = "{\"unit\": \"" + json_escape(e.decl->unit) + "\", \"values\": [";
                const auto vals = e.vec(sim_seconds);
                for (size_t i = 0; i < vals.size(); ++i) arr += (i ? ", " : "") + exact_number(vals[i]);
                node->leaves.emplace_back(e.decl->name, arr + "]}");
                continue;
            }
            const double v = e.fn ? e.fn(sim_seconds) : *e.value;
            node->leaves.emplace_back(e.decl->name, leaf_json(v, e.decl->unit));
        }
    }
    for (const auto& t : m_tables) {
        json_tree* table = root.child(t.name);
        for (const auto& [key, values] : t.rows) {
            json_tree* row = table->child(key);
            for (size_t c = 0; c < t.columns.size() && c < values.size(); ++c)
                row->leaves.emplace_back(t.columns[c].name, leaf_json(values[c], t.columns[c].unit));
        }
    }
    root.write(os, 0);
    os << "\n";
}

const std::vector<stat_decl>& stats_registry::run_table() {
    static const std::vector<stat_decl> table = {
        {"sim_time", "s", "simulated time of the run"},
        {"energy", "J", "energy of the run: dynamic plus static (docs/energy.md)"},
        {"energy_compute", "J", "dynamic energy of compute"},
        {"energy_sram", "J", "dynamic energy of on-chip memory"},
        {"energy_dram", "J", "dynamic energy of off-chip memory"},
        {"energy_network", "J", "dynamic energy of networks and links"},
        {"energy_sync", "J", "dynamic energy of synchronisation"},
        {"energy_static", "J", "static power over the simulated time"},
        {"average_power", "W", "energy over simulated time"},
        {"peak_power", "W", "highest power over one window of the power timeline (dynamic plus static)"},
        {"peak_window", "s", "width of the power timeline's windows"},
    };
    return table;
}

void stats_registry::write_csv(std::ostream& os, double sim_seconds) const {
    os << "path,stat,value,unit,description\n";
    std::vector<const stat_group*> all{&m_run};
    all.insert(all.end(), m_groups.begin(), m_groups.end());
    for (const stat_group* g : all)
        for (const auto& e : g->entries()) {
            if (e.vec) continue;
            const double v = e.fn ? e.fn(sim_seconds) : *e.value;
            os << csv_field(g->path()) << ',' << csv_field(e.decl->name) << ',' << exact_number(v) << ','
               << csv_field(e.decl->unit) << ',' << csv_field(e.decl->desc) << '\n';
        }
    for (const auto& t : m_tables)
        for (const auto& [key, values] : t.rows)
            for (size_t c = 0; c < t.columns.size() && c < values.size(); ++c)
                os << csv_field(t.name + ":" + key) << ',' << csv_field(t.columns[c].name) << ','
                   << exact_number(values[c]) << ',' << csv_field(t.columns[c].unit) << ','
                   << csv_field(t.columns[c].desc) << '\n';
}

}  // namespace tessel
