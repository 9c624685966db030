// Statistics are declared once, in each kind's stat_table(): after a run, every component emits exactly the
// statistics `tessel describe` lists for its kind (kind_info::stats: names, units, per-unit or not), and
// registering one the table does not declare is an error that names the kind and the statistic. The scenarios
// together build every registered kind (bundled platforms with a small workload or program, plus one small inline
// platform for the kinds no bundled platform uses); a new kind fails the coverage check until a scenario builds it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "engine/exec/executor.h"
#include "engine/mappers/mapper.h"
#include "engine/netlist/platform.h"
#include "engine/program/program_yaml.h"
#include "engine/workload/load.h"
#include "models/core/registry.h"
#include "models/core/text.h"

using namespace tessel;

namespace {

// tile_array, crossbar and switch_reducer appear in no bundled chip platform.
const char* small_platform = R"(
platform: small
clock: 1GHz
components:
  grid:
    kind: tile_array
    params: {width: 2, height: 2}
  noc:
    kind: mesh_noc
    params: {width: 2, height: 2}
  xt:
    kind: tile
    replicate: {i: 2}
  xbar:
    kind: crossbar
    params: {ports: 3}
  engine:
    kind: switch_reducer
connections:
  - grid[x,y] -> noc[x,y]
  - xt[i] -> xbar[i]
  - engine -> xbar[2]
)";

const char* small_program = R"(
program: small
steps:
  - id: compute
    compute: {on: "grid[1,1]", macs: 65536, dtype: fp16}
  - id: across_the_mesh
    transfer: {from: "grid[0,0]", to: "grid[1,1]", bytes: 4KiB}
  - id: across_the_crossbar
    transfer: {from: "xt[0]", to: "xt[1]", bytes: 4KiB}
  - id: into_the_switch
    transfer: {from: "xt[0]", to: "engine", bytes: 4KiB}
)";

/// One platform and what runs on it: a workload mapped by the platform's mapper, a program file, or (for the
/// inline platform) the inline program.
struct scenario {
    std::string file;  // a platform file, or "" for small_platform
    std::string workload;
    std::string program;
    sim_context sim;
    param_context ctx;
    std::unique_ptr<platform> plat;
    std::unique_ptr<executor> exec;
    executor::result result;
};

/// (name, unit, per unit) of a statistic: what the comparison looks at.
using stat_key = std::tuple<std::string, std::string, bool>;

std::set<stat_key> declared(const kind_info& k) {
    std::set<stat_key> s;
    for (const auto& d : k.stats) s.emplace(d.name, d.unit, d.shape == stat_shape::per_unit);
    return s;
}

/// The statistics under `path` in the stats JSON tree: leaves carry a unit, child components do not.
std::set<stat_key> emitted(const nlohmann::json& root, const std::string& path) {
    const nlohmann::json* node = &root;
    for (const auto& part : split_path(path)) {
        if (!node->contains(part)) return {};
        node = &(*node)[part];
    }
    std::set<stat_key> s;
    for (const auto& [name, v] : node->items())
        if (v.is_object() && v.contains("unit")) s.emplace(name, v["unit"].get<std::string>(), v.contains("values"));
    return s;
}

std::string text(const std::set<stat_key>& s) {
    std::string out;
    for (const auto& [n, u, per_unit] : s)
        out.append(out.empty() ? "" : ", ").append(n).append(" [").append(u).append(per_unit ? ", per unit]" : "]");
    return out.empty() ? "(none)" : out;
}

}  // namespace

TEST(stats_declared, every_kind_emits_exactly_what_describe_lists) {
    std::vector<std::unique_ptr<scenario>> runs;
    auto add = [&](std::string plat, std::string workload, std::string program = {}) {
        auto s = std::make_unique<scenario>();
        s->file = std::move(plat);
        s->workload = std::move(workload);
        s->program = std::move(program);
        runs.push_back(std::move(s));
    };
    add("platforms/gpu/a100_sxm.yaml", "mlp");         // gpu (and its nested hbm)
    add("platforms/tpu/tpu_v4.yaml", "mlp");           // tpu
    add("platforms/gaudi/gaudi2.yaml", "mlp");         // gaudi
    add("platforms/neuron/trn1.yaml", "mlp");          // neuron
    add("platforms/tsp/groqchip1.yaml", "mlp");        // tsp
    add("platforms/ipu/gc2.yaml", "mlp");              // ipu_tiles, ipu_exchange, chip_link, barrier
    add("platforms/rdu/plasticine.yaml", "mlp");       // rdu_pcu, rdu_pmu, rdu_agcu, mesh_noc, hbm
    add("platforms/wafer/wafer16.yaml", "mlp");        // wafer_pe_array, wafer_memoryx
    add("platforms/teaching/ring8_ddr4.yaml", "mlp");  // ring, tile (pe, sram_bank)
    // A hand-written program on tiles, a mesh, HBM and a barrier; then the inline platform: tile_array, crossbar,
    // switch_reducer.
    add("platforms/teaching/mesh4x4.yaml", "", "workloads/programs/superstep.yaml");
    add("", "");

    // SystemC elaborates once per process: every platform is built before the first run.
    for (auto& s : runs) {
        if (s->file.empty()) {
            const yaml_node root = yaml_node::load_string(small_platform, "small.yaml");
            s->plat = std::make_unique<platform>("small", root, s->ctx, s->sim);
        } else {
            s->plat = platform::load(s->file, s->ctx, s->sim);
        }
        s->exec = std::make_unique<executor>((s->plat->title() + "_exec").c_str(), *s->plat);
    }
    for (auto& s : runs) {
        program p;
        if (!s->workload.empty())
            p = create_mapper(*s->plat, s->ctx)->map(load_workload(s->workload, {}), *s->plat).prog;
        else if (!s->program.empty())
            p = load_program(s->program, *s->plat, &s->ctx);
        else
            p = parse_program(yaml_node::load_string(small_program, "small_program.yaml"), *s->plat, &s->ctx);
        s->result = s->exec->run(p);
        ASSERT_GT(s->result.duration(), 0u) << s->plat->title() << ": the program ran nothing";
    }

    std::set<std::string> covered;
    for (auto& s : runs) {
        std::ostringstream os;
        s->sim.stats.write_json(os, ticks_to_seconds(s->result.duration()), /*per_unit=*/true);
        const nlohmann::json j = nlohmann::json::parse(os.str());
        for (const component* c : s->sim.components()) {
            if (!c) continue;
            const kind_info* k = kind_registry::instance().find(c->kind_name());
            ASSERT_NE(k, nullptr) << c->path();
            covered.insert(k->name);
            const auto want = declared(*k), got = emitted(j, c->path());
            EXPECT_EQ(got, want) << c->path() << " (" << k->name << ") emits " << text(got) << "\n`tessel describe "
                                 << k->name << "` lists " << text(want);
        }
    }
    std::vector<std::string> missing;
    for (const auto& n : kind_registry::instance().names())
        if (!covered.count(n)) missing.push_back(n);
    EXPECT_TRUE(missing.empty()) << "no scenario builds kind(s) " << join(missing) << "; add one above";
}

TEST(stats_declared, undeclared_statistic_is_an_error) {
    // A pe's statistics, held as a component's are: against its kind's table in the registry.
    const kind_info* k = kind_registry::instance().find("pe");
    ASSERT_NE(k, nullptr);
    stat_group g("chip.tile[0,0].pe", k->name, &k->stats);
    g.scalar("macs") = 3;
    g.formula("busy", [](double) { return 1.0; });
    try {
        g.scalar("flops");
        FAIL() << "an undeclared statistic was accepted";
    } catch (const std::logic_error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "component 'chip.tile[0,0].pe' (pe) registers statistic 'flops', which kind 'pe' does not declare "
                  "(declared: macs, vector_ops, steps, busy, utilisation, efficiency, energy); add it to the kind's "
                  "stat_table()");
    }
    try {
        g.per_unit("utilisation", [](double) { return std::vector<double>{}; });
        FAIL() << "a single-valued statistic was accepted as per-unit values";
    } catch (const std::logic_error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "component 'chip.tile[0,0].pe' (pe) registers statistic 'utilisation' as per-unit values, but kind "
                  "'pe' declares it as a single value");
    }
    try {
        g.scalar("macs");
        FAIL() << "a statistic was registered twice";
    } catch (const std::logic_error& e) {
        EXPECT_EQ(std::string(e.what()), "component 'chip.tile[0,0].pe' (pe) registers statistic 'macs' twice");
    }
    // What was registered before the errors is intact.
    ASSERT_EQ(g.entries().size(), 2u);
    EXPECT_EQ(*g.entries()[0].value, 3);
    EXPECT_EQ(g.entries()[0].decl->unit, "MAC");

    // A kind whose table names a statistic twice is refused at registration.
    kind_registry r;  // a private registry: the global one stays as the models registered it
    kind_info info;
    info.name = "twice";
    info.stats = {{"bytes", "B", "bytes sent"}, {"bytes", "B", "bytes received"}};
    r.add(info);
    ASSERT_EQ(r.errors().size(), 1u);
    EXPECT_EQ(r.errors()[0], "component kind 'twice' declares statistic 'bytes' twice");
}
