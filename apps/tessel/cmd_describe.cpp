// tessel describe KIND: a kind's parameters (type, default, meaning), presets and statistics, from the same
// declarations the YAML loader uses. Also describes mappers (their options).
#include <iomanip>
#include <iostream>
#include <sstream>

#include "apps/tessel/command.h"
#include "engine/mappers/mapper.h"
#include "models/core/registry.h"

namespace tessel {
namespace {

std::string g_kind;
bool g_markdown = false;

CLI::App* setup(CLI::App& app) {
    auto* c = app.add_subcommand("describe", "print a component kind's or a mapper's parameters");
    c->add_option("kind", g_kind, "component kind (tessel list) or mapper name")->required();
    c->add_flag("--markdown", g_markdown, "print as Markdown (the format of docs/components.md)");
    return c;
}

std::string type_text(const param_spec& p) {
    if (p.type == param_type::choice) return "one of " + join(p.choices, " | ");
    return param_type_name(p.type);
}

void print_params(const std::vector<param_spec>& specs, std::ostream& os, bool md) {
    if (md) {
        os << "| parameter | type | default | meaning |\n|---|---|---|---|\n";
        for (const auto& p : specs) {
            if (p.type == param_type::group) continue;
            os << "| `" << p.name << "` | " << type_text(p) << " | "
               << (p.is_required ? "**required**" : "`" + p.default_text + "`") << " | " << p.desc << " |\n";
        }
        return;
    }
    size_t w = 10;
    for (const auto& p : specs) w = std::max(w, p.name.size());
    for (const auto& p : specs) {
        if (p.type == param_type::group) {
            os << "  " << p.name << ":  (" << p.desc << ")\n";
            continue;
        }
        os << "  " << std::left << std::setw(static_cast<int>(w)) << p.name << "  " << std::setw(12) << type_text(p) << "  "
           << std::setw(14) << (p.is_required ? std::string("(required)") : p.default_text) << "  " << p.desc << "\n";
    }
}

}  // namespace

/// Markdown for one kind; docs/components.md is the concatenation of these for every kind.
std::string describe_kind_markdown(const kind_info& k) {
    std::ostringstream os;
    os << "## `" << k.name << "` (" << k.category << ")\n\n" << k.brief << "\n\n";
    print_params(k.describe(), os, true);
    if (!k.presets.empty()) {
        os << "\nPresets:\n\n";
        for (const auto& p : k.presets) {
            os << "- `" << p.name << "`: " << p.desc << ". Source: " << p.source << ".\n";
        }
    }
    if (!k.stats.empty()) {
        os << "\nStatistics:\n\n| statistic | unit | meaning |\n|---|---|---|\n";
        for (const auto& s : k.stats) os << "| `" << s[0] << "` | " << s[1] << " | " << s[2] << " |\n";
    }
    return os.str();
}

namespace {
int run() {
    if (const kind_info* k = kind_registry::instance().find(g_kind)) {
        if (g_markdown) {
            std::cout << describe_kind_markdown(*k);
            return 0;
        }
        std::cout << k->name << " (" << k->category << "): " << k->brief << "\n\nparameters:\n";
        print_params(k->describe(), std::cout, false);
        if (!k->presets.empty()) {
            std::cout << "\npresets:\n";
            for (const auto& p : k->presets) {
                std::cout << "  " << p.name << ": " << p.desc << "\n    source: " << p.source << "\n    ";
                for (size_t i = 0; i < p.values.size(); ++i)
                    std::cout << (i ? ", " : "") << p.values[i].first << "=" << p.values[i].second;
                std::cout << "\n";
            }
        }
        if (!k->stats.empty()) {
            std::cout << "\nstatistics:\n";
            for (const auto& s : k->stats) std::cout << "  " << std::left << std::setw(22) << s[0] << std::setw(8) << s[1] << s[2] << "\n";
        }
        return 0;
    }
    if (const mapper_info* m = mapper_registry::instance().find(g_kind)) {
        std::cout << "mapper " << m->name << ": " << m->brief << "\n\noptions (platform `mapper:` section, --set mapper.NAME=VALUE):\n";
        print_params(m->describe(), std::cout, g_markdown);
        return 0;
    }
    std::vector<std::string> all = kind_registry::instance().names();
    for (const auto& m : mapper_registry::instance().names()) all.push_back(m);
    throw input_error("no component kind or mapper named '" + g_kind + "'" + did_you_mean(g_kind, all) + "; known: " + join(all));
}
}  // namespace

TESSEL_REGISTER_COMMAND(command{"describe", 20, setup, run});

}  // namespace tessel
