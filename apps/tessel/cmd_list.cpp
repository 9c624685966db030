// tessel list: component kinds, mappers, bundled platforms and workloads.
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "apps/tessel/command.h"
#include "apps/tessel/paths.h"
#include "engine/mappers/mapper.h"
#include "engine/workload/load.h"
#include "models/core/policy.h"
#include "models/core/registry.h"

namespace tessel {
namespace cmd_list {

std::string g_what;

CLI::App* setup(CLI::App& app) {
    auto* c = app.add_subcommand("list", "list component kinds, mappers, policies, platforms and workloads");
    c->add_option("what", g_what, "kinds | mappers | policies | platforms | workloads (default: all)")
        ->check(CLI::IsMember({"kinds", "mappers", "policies", "platforms", "workloads"}));
    return c;
}

int run() {
    const bool all = g_what.empty();
    if (all || g_what == "kinds") {
        std::cout << "component kinds (tessel describe KIND):\n";
        const std::vector<std::string> names = kind_registry::instance().names();
        size_t width = 0;
        for (const auto& n : names) width = std::max(width, n.size());
        for (const auto& n : names) {
            const kind_info* k = kind_registry::instance().find(n);
            std::cout << "  " << std::left << std::setw(static_cast<int>(width + 2)) << n << std::setw(14)
                      << k->category << k->brief << "\n";
        }
    }
    if (all || g_what == "mappers") {
        std::cout << (all ? "\n" : "") << "mappers (platform `mapper: {impl: NAME}`):\n";
        const std::vector<std::string> names = mapper_registry::instance().names();
        size_t width = 0;
        for (const auto& n : names) width = std::max(width, n.size());
        for (const auto& n : names)
            std::cout << "  " << std::left << std::setw(static_cast<int>(width + 2)) << n
                      << mapper_registry::instance().find(n)->brief << "\n";
    }
    if (all || g_what == "policies") {
        std::cout << (all ? "\n" : "") << "policies (a component's `FAMILY: {impl: NAME}`, e.g. mesh_noc's routing):\n";
        size_t width = 0;
        for (const policy_info* p : policy_catalog()) width = std::max(width, p->name.size());
        for (const policy_info* p : sorted_policies())
            std::cout << "  " << std::left << std::setw(static_cast<int>(width + 2)) << p->name << std::setw(14)
                      << p->family << p->brief << "\n";
    }
    if (all || g_what == "platforms") {
        std::cout << (all ? "\n" : "") << "platforms (--platform NAME, from " << data_root() << "/platforms):\n";
        for (const auto& p : bundled_platforms()) std::cout << "  " << p << "\n";
    }
    if (all || g_what == "workloads") {
        std::cout << (all ? "\n" : "") << "workloads (--workload NAME, or a .yaml/.onnx file):\n";
        for (const auto& w : builtin_workloads()) std::cout << "  " << w << "\n";
    }
    return 0;
}

TESSEL_REGISTER_COMMAND(command{"list", 30, setup, run});

}  // namespace cmd_list

}  // namespace tessel
