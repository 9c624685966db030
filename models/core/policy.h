// Policies: how a component decides something it does many times (a mesh's routing), chosen in the YAML by name
// in a child map `{impl: NAME, ...that implementation's parameters}` (the conventions' `routing: {impl: xy}`).
// A family is the interface its implementations share (routing_policy); each implementation is one file pair
// that registers itself, as component kinds do:
//   TESSEL_REGISTER_POLICY(make_policy<xy_routing>("xy", "dimension order: all of x first, then y"));
// so a new one needs no edit to the component that uses it. The component declares the child with
// declare_policy and only ever calls the family's interface. A name registered twice in one family is an error
// that tessel refuses to run with (policy_registry_errors).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "models/core/param.h"

namespace tessel {

/// What `tessel describe` and `tessel list` need of one implementation, whatever its family.
struct policy_info {
    std::string family;  // "routing"
    std::string name;    // "west_first"
    std::string brief;   // the rule it follows and what it leaves out
    std::function<std::vector<param_spec>()> describe;
};

/// An implementation of the family F: its description and how to build it from its child map.
template <class F>
struct policy_entry : policy_info {
    std::function<void(param_decl&)> declare;                   // its parameters, for describing its owner
    std::function<std::unique_ptr<const F>(param_decl&)> make;  // reads its parameters, then builds it
};

/// Every registered implementation of every family, in registration order (the registries own them).
std::vector<const policy_info*>& policy_catalog();
/// The catalog by family, then name: what describe and list print.
std::vector<const policy_info*> sorted_policies();
/// Names registered twice; tessel refuses to run while any exist.
std::vector<std::string>& policy_registry_errors();

/// The implementations of one family F (F names itself with `static constexpr const char* family_name`).
template <class F>
class policy_registry {
public:
    static policy_registry& instance() {
        static policy_registry r;
        return r;
    }
    bool add(policy_entry<F> e) {
        if (m_entries.count(e.name)) {
            policy_registry_errors().push_back(std::string(F::family_name) + " policy '" + e.name +
                                               "' is registered twice");
            return false;
        }
        const std::string n = e.name;
        policy_catalog().push_back(&m_entries.emplace(n, std::move(e)).first->second);  // map nodes never move
        return true;
    }
    const policy_entry<F>* find(const std::string& name) const {
        const auto it = m_entries.find(name);
        return it == m_entries.end() ? nullptr : &it->second;
    }
    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const auto& [n, _] : m_entries) out.push_back(n);
        return out;
    }

private:
    std::map<std::string, policy_entry<F>> m_entries;
};

/// Adds `e` to its family's registry (TESSEL_REGISTER_POLICY).
template <class F>
bool register_policy(policy_entry<F> e) {
    return policy_registry<F>::instance().add(std::move(e));
}

/// The parameters of an implementation without any.
struct no_policy_params {
    void declare(param_decl&) {}
};

namespace detail {
template <class P, class = void>
struct policy_params {
    using type = no_policy_params;
};
template <class P>
struct policy_params<P, std::void_t<typename P::params>> {
    using type = typename P::params;
};
}  // namespace detail

/// The registry entry of implementation P of family `P::family`. P either has a nested `params` struct (with
/// `declare(param_decl&)`) and a constructor from it, or no parameters and a default constructor.
template <class P>
policy_entry<typename P::family> make_policy(std::string name, std::string brief) {
    using F = typename P::family;
    using params = typename detail::policy_params<P>::type;
    policy_entry<F> e;
    e.family = F::family_name;
    e.name = std::move(name);
    e.brief = std::move(brief);
    e.describe = [] { return describe_params<params>(); };
    e.declare = [](param_decl& d) {
        params p;
        p.declare(d);
    };
    e.make = [](param_decl& d) -> std::unique_ptr<const F> {
        params p;
        p.declare(d);
        if constexpr (std::is_same_v<params, no_policy_params>)
            return std::make_unique<const P>();
        else
            return std::make_unique<const P>(std::move(p));  // a policy may own a child policy
    };
    return e;
}

/// Declares a policy child's `impl` (one of family F's names, `def` by default) inside the child's group and,
/// when loading, builds the chosen implementation from the rest of the map into `out`. Describing, it lists the
/// default implementation's parameters.
template <class F>
void declare_policy(param_decl& d, std::string& impl, std::unique_ptr<const F>& out, const std::string& def,
                    std::string_view desc) {
    const policy_registry<F>& r = policy_registry<F>::instance();
    d.choice(impl, "impl", def, r.names(), desc);
    const policy_entry<F>* e = r.find(d.describing() ? def : impl);
    if (!e) throw std::logic_error(std::string(F::family_name) + " policy '" + def + "' is not registered");
    if (d.describing())
        e->declare(d);
    else
        out = e->make(d);
}

}  // namespace tessel

#ifndef TESSEL_CONCAT  // as registry.h defines them
#define TESSEL_CONCAT_(a, b) a##b
#define TESSEL_CONCAT(a, b) TESSEL_CONCAT_(a, b)
#endif
/// Registers a policy implementation at static initialisation; the argument yields a policy_entry.
#define TESSEL_REGISTER_POLICY(...) \
    static const bool TESSEL_CONCAT(tessel_policy_registered_, __COUNTER__) = ::tessel::register_policy(__VA_ARGS__)
