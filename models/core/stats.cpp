#include "models/core/stats.h"

#include "models/core/text.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <ostream>

namespace tessel {

double& stat_group::scalar(const std::string& name, const std::string& unit, const std::string& desc) {
    m_values.push_back(0.0);
    entry e;
    e.name = name;
    e.unit = unit;
    e.desc = desc;
    e.value = &m_values.back();
    m_entries.push_back(std::move(e));
    return m_values.back();
}

void stat_group::formula(const std::string& name, const std::string& unit, const std::string& desc,
                         std::function<double(double)> fn) {
    entry e;
    e.name = name;
    e.unit = unit;
    e.desc = desc;
    e.fn = std::move(fn);
    m_entries.push_back(std::move(e));
}

void stat_group::vector(const std::string& name, const std::string& unit, const std::string& desc,
                        std::function<std::vector<double>(double)> fn) {
    entry e;
    e.name = name;
    e.unit = unit;
    e.desc = desc;
    e.vec = std::move(fn);
    m_entries.push_back(std::move(e));
}

void stats_registry::add_run_info(const std::string& name, double value, const std::string& unit,
                                  const std::string& desc) {
    m_run.scalar(name, unit, desc) = value;
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
                std::string arr = "{\"unit\": \"" + json_escape(e.unit) + "\", \"values\": [";
                const auto vals = e.vec(sim_seconds);
                for (size_t i = 0; i < vals.size(); ++i) arr += (i ? ", " : "") + exact_number(vals[i]);
                node->leaves.emplace_back(e.name, arr + "]}");
                continue;
            }
            const double v = e.fn ? e.fn(sim_seconds) : *e.value;
            node->leaves.emplace_back(e.name, leaf_json(v, e.unit));
        }
    }
    root.write(os, 0);
    os << "\n";
}

void stats_registry::write_csv(std::ostream& os, double sim_seconds) const {
    os << "path,stat,value,unit,description\n";
    std::vector<const stat_group*> all{&m_run};
    all.insert(all.end(), m_groups.begin(), m_groups.end());
    for (const stat_group* g : all)
        for (const auto& e : g->entries()) {
            if (e.vec) continue;
            const double v = e.fn ? e.fn(sim_seconds) : *e.value;
            os << csv_field(g->path()) << ',' << csv_field(e.name) << ',' << exact_number(v) << ',' << csv_field(e.unit)
               << ',' << csv_field(e.desc) << '\n';
        }
}

}  // namespace tessel
