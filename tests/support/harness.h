// Test helpers: build one component from a YAML parameter map (for timing tests that call transport()
// directly, no simulation), or a whole platform with its executor (for tests that run programs).
#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "engine/exec/executor.h"
#include "engine/netlist/platform.h"
#include "models/core/registry.h"

namespace tessel::test {

/// A component of `kind` with parameters given as YAML flow text ("{width: 4, height: 4}").
template <class C>
std::unique_ptr<C> make(sim_context& sim, const std::string& kind, const std::string& name, const std::string& params,
                        const std::string& preset = {}) {
    static param_context ctx;
    ctx.set_variable("clock", "1GHz");
    const kind_info* k = kind_registry::instance().find(kind);
    if (!k) throw std::logic_error("no kind " + kind);
    component_args a;
    a.sim = &sim;
    a.kind = k;
    a.params = yaml_node::load_string(params, "test");
    a.ctx = &ctx;
    a.config_path = name;
    if (!preset.empty()) a.preset = &k->find_preset(preset)->values;
    component* c = k->make(name.c_str(), a);
    auto* typed = dynamic_cast<C*>(c);
    if (!typed) throw std::logic_error("wrong type for " + kind);
    return std::unique_ptr<C>(typed);
}

/// A transaction starting at `at` (ticks).
inline txn request(txn_kind k, tick at, std::uint64_t bytes = 0, std::uint64_t address = 0) {
    txn t;
    t.kind = k;
    t.head = t.tail = at;
    t.bytes = bytes;
    t.address = address;
    return t;
}

constexpr tick ns = 1000000;  // ticks per nanosecond
constexpr tick ps = 1000;

/// A platform and its executor, built once per test process.
struct bench {
    sim_context sim;
    param_context ctx;
    std::unique_ptr<platform> plat;
    std::unique_ptr<executor> exec;

    explicit bench(const std::string& yaml_text, const std::string& name = "test") {
        const yaml_node root = yaml_node::load_string(yaml_text, name + ".yaml");
        plat = std::make_unique<platform>(root["platform"].scalar("platform").c_str(), root, ctx, sim);
        exec = std::make_unique<executor>((name + "_exec").c_str(), *plat);
    }
    endpoint at(const std::string& path) const { return plat->resolve(path, {}); }
};

/// `count` benches of one bundled platform (`file` in the source tree, whose `platform: NAME` line is renamed
/// NAME_0, NAME_1, ...), all built at once: SystemC elaborates once per process, so every platform exists before
/// the first run, one per run so that each run's statistics are its own.
struct bench_copies {
    std::vector<std::unique_ptr<bench>> all;
    bench_copies(const std::string& file, const std::string& name, int count) {
        std::ifstream f(std::string(TESSEL_SOURCE_DIR) + "/" + file);
        std::stringstream ss;
        ss << f.rdbuf();
        const std::string text = ss.str(), line = "platform: " + name;
        const size_t at = text.find(line);
        if (at == std::string::npos) throw std::logic_error(file + " has no '" + line + "'");
        for (int i = 0; i < count; ++i) {
            const std::string copy = name + "_" + std::to_string(i);
            all.push_back(
                std::make_unique<bench>(std::string(text).replace(at, line.size(), "platform: " + copy), copy));
        }
    }
    bench& operator[](size_t i) { return *all[i]; }
};

}  // namespace tessel::test
