#include "engine/workload/scalesim_config.h"

#include <cctype>
#include <fstream>
#include <map>
#include <utility>

#include "models/core/error.h"
#include "models/core/limits.h"

namespace tessel {

std::string scalesim_settings(const std::string& path) {
    require_input_file(path, "SCALE-Sim configuration");
    std::ifstream in(path);
    if (!in) throw input_error("cannot read SCALE-Sim configuration '" + path + "'");
    std::map<std::string, std::pair<std::string, source_location>> kv;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        const size_t sep = line.find_first_of(":=");
        if (line.empty() || line[0] == '[' || line[0] == '#' || sep == std::string::npos) continue;
        auto trim = [](std::string s) {
            s.erase(0, s.find_first_not_of(" \t\r"));
            s.erase(s.find_last_not_of(" \t\r") + 1);
            return s;
        };
        std::string key = trim(line.substr(0, sep));
        for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const size_t at = line.find_first_not_of(" \t", sep + 1);
        kv[key] = {trim(line.substr(sep + 1)), {path, n, static_cast<int>(at == std::string::npos ? sep + 2 : at + 1)}};
    }
    // Keys as SCALE-Sim spells them; configparser (and so this) ignores their case.
    auto need = [&](const std::string& key) -> const std::pair<std::string, source_location>& {
        std::string k = key;
        for (char& c : k) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        const auto it = kv.find(k);
        if (it == kv.end()) throw input_error("SCALE-Sim configuration has no " + key, {path, 0, 0});
        return it->second;
    };
    std::string flags;
    for (const auto& [key, param] : {std::pair{"ArrayHeight", "rows"}, std::pair{"ArrayWidth", "cols"}}) {
        const auto& [value, where] = need(key);
        if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos || value == "0")
            throw input_error(std::string(key) + " must be a positive whole number, not '" + value + "'", where);
        flags += std::string(" --set tile.pe.") + param + "=" + value;
    }
    const auto& [dataflow, where] = need("Dataflow");
    if (dataflow != "os" && dataflow != "ws" && dataflow != "is")
        throw input_error("Dataflow must be os, ws or is, not '" + dataflow + "'", where);
    return flags + " --set tile.pe.dataflow=" + dataflow + " --set tile.pe.scalesim=true";
}

}  // namespace tessel
