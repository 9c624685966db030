#include "models/core/registry.h"

#include "models/core/error.h"

namespace tessel {

const preset* kind_info::find_preset(const std::string& n) const {
    for (const auto& p : presets)
        if (p.name == n) return &p;
    return nullptr;
}

const preset& kind_info::require_preset(const std::string& n, const source_location& where) const {
    if (const preset* p = find_preset(n)) return *p;
    std::vector<std::string> names;
    for (const auto& p : presets) names.push_back(p.name);
    throw input_error("kind '" + name + "' has no preset '" + n + "'" + did_you_mean(n, names) +
                          (names.empty() ? std::string("; it has no presets") : "; presets: " + join(names)),
                      where);
}

kind_registry& kind_registry::instance() {
    static kind_registry r;
    return r;
}

bool kind_registry::add(kind_info k) {
    if (m_kinds.count(k.name)) {
        m_errors.push_back("component kind '" + k.name + "' is registered twice");
        return false;
    }
    for (size_t i = 0; i < k.stats.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (k.stats[i].name == k.stats[j].name)
                m_errors.push_back("component kind '" + k.name + "' declares statistic '" + k.stats[i].name +
                                   "' twice");
    const std::string n = k.name;
    m_kinds.emplace(n, std::move(k));
    return true;
}

const kind_info* kind_registry::find(const std::string& name) const {
    const auto it = m_kinds.find(name);
    return it == m_kinds.end() ? nullptr : &it->second;
}

const kind_info& kind_registry::require(const std::string& name, const source_location& where) const {
    if (const kind_info* k = find(name)) return *k;
    throw input_error(
        "unknown component kind '" + name + "'" + did_you_mean(name, names()) + "; known kinds: " + join(names()),
        where);
}

std::vector<std::string> kind_registry::names() const {
    std::vector<std::string> out;
    for (const auto& [n, _] : m_kinds) out.push_back(n);
    return out;
}

stat_decl energy_stat() {
    return {"energy", "J", "dynamic energy of its actions plus its leakage over the run (docs/energy.md)"};
}

}  // namespace tessel
