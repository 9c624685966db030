// The kind registry: every component kind registers itself under the name the YAML uses
// (`TESSEL_REGISTER_KIND(make_kind<mesh_noc>("mesh_noc", ...))`), with its parameter declarations, statistics,
// presets and factory. A duplicate name is a hard error. Models are linked as a CMake OBJECT library so no
// registration is dropped by the linker.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <typeinfo>
#include <vector>

#include "models/core/component.h"
#include "models/core/param.h"

namespace tessel {

/// A named set of parameter values for a common part (an HBM3 stack, a DDR4 channel), with its source.
struct preset {
    std::string name;
    std::string desc;
    std::string source;
    std::vector<std::pair<std::string, std::string>> values;
};

struct kind_info {
    std::string name;
    std::string category;  // compute, memory, interconnect, sync, composite
    std::string brief;     // what it models and what it deliberately leaves out
    std::function<std::vector<param_spec>()> describe;
    std::function<component*(sc_core::sc_module_name, const component_args&)> make;
    const std::type_info* type = nullptr;  // the class `make` builds (see as_kind)
    std::vector<preset> presets;
    /// Statistics it reports (C::stat_table()): `tessel describe` prints them, and its components may register
    /// only these (stat_group takes unit and meaning from here).
    std::vector<stat_decl> stats;

    const preset* find_preset(const std::string& n) const;
    /// The preset `n`, or an input_error at `where` listing the kind's presets.
    const preset& require_preset(const std::string& n, const source_location& where) const;
};

class kind_registry {
public:
    static kind_registry& instance();
    /// Registers a kind; a second kind with the same name, or a statistic declared twice, is recorded as an error
    /// (see errors()).
    bool add(kind_info k);
    const kind_info* find(const std::string& name) const;
    /// The kind `name`, or an input_error at `where` suggesting the nearest known kind.
    const kind_info& require(const std::string& name, const source_location& where) const;
    std::vector<std::string> names() const;
    /// Problems found while registering (duplicates); tessel refuses to run while any exist.
    const std::vector<std::string>& errors() const { return m_errors; }

private:
    std::map<std::string, kind_info> m_kinds;
    std::vector<std::string> m_errors;
};

/// The statistic every kind with a stat table reports: its resources' dynamic energy plus their leakage over the
/// run, as its usage() charges them (a stand-in chip of a symmetric system reports its own, unweighted).
stat_decl energy_stat();

/// Builds the kind_info of a component class C with a nested `params` struct (its parameters) and a static
/// `std::vector<stat_decl> stat_table()` (its statistics, empty for a composite whose parts report theirs).
template <class C>
kind_info make_kind(std::string name, std::string category, std::string brief) {
    kind_info k;
    k.name = std::move(name);
    k.category = std::move(category);
    k.brief = std::move(brief);
    k.describe = [] { return describe_params<typename C::params>(); };
    k.stats = C::stat_table();
    // Every kind that reports statistics reports its energy too (component::component registers it).
    if (!k.stats.empty()) k.stats.push_back(energy_stat());
    k.make = [](sc_core::sc_module_name n, const component_args& a) -> component* { return new C(n, a); };
    k.type = &typeid(C);
    return k;
}

/// The component as the class C its kind was registered with (make_kind<C>), or nullptr for any other kind: a
/// downcast the kind registry checks, not a search of the class hierarchy. Only for code that drives one kind's
/// own interface (the tsp mapper writes a static schedule in the tsp kind's instructions and timing rules);
/// everything else asks the capability queries on component.
template <class C>
C* as_kind(component& c) {
    const kind_info* k = c.kind_entry();
    return k && k->type && *k->type == typeid(C) ? static_cast<C*>(&c) : nullptr;
}
template <class C>
const C* as_kind(const component& c) {
    return as_kind<C>(const_cast<component&>(c));
}

}  // namespace tessel

#define TESSEL_CONCAT_(a, b) a##b
#define TESSEL_CONCAT(a, b) TESSEL_CONCAT_(a, b)
/// Registers a kind at static initialisation; `expr` yields a kind_info.
#define TESSEL_REGISTER_KIND(...)                                           \
    static const bool TESSEL_CONCAT(tessel_kind_registered_, __COUNTER__) = \
        ::tessel::kind_registry::instance().add(__VA_ARGS__)
