#include "models/core/limits.h"

#include <cmath>
#include <filesystem>

#include "models/core/error.h"
#include "models/core/units.h"
#include "models/core/yaml_node.h"

namespace tessel {

namespace {
constexpr double k_max_sim_seconds = 18000;
}  // namespace

std::vector<limit_info> resource_limits::all() const {
    return {{"modules", modules, "components plus their units (replicas, channels, banks, ports) of one platform"},
            {"ops", ops, "ops, and tensors, of one workload graph"},
            {"steps", steps, "steps of one program"},
            {"packets", packets, "network packets of one run (estimated before the run from the transfers)"},
            {"sim_seconds", sim_seconds, "simulated seconds of one run (estimated before the run; at most 18000)"}};
}

void resource_limits::set(const std::string& arg) {
    const size_t eq = arg.find('=');
    std::vector<std::string> names;
    for (const auto& l : all()) names.emplace_back(l.name);
    if (eq == std::string::npos || eq == 0)
        fail("--limit '" + arg + "': expected NAME=VALUE, e.g. --limit steps=2e8; limits: " + join(names));
    const std::string name = arg.substr(0, eq), text = arg.substr(eq + 1);
    double v = 0;
    try {
        const quantity q = parse_quantity(text);
        if (q.dim != dimension::scalar && !(name == "sim_seconds" && q.dim == dimension::time)) throw input_error("");
        v = q.value;
    } catch (const input_error&) {
        fail("--limit " + arg + ": expected a number, got '" + text + "'");
    }
    if (!(v > 0) || !std::isfinite(v)) fail("--limit " + arg + ": must be a number above 0");
    if (name == "modules")
        modules = v;
    else if (name == "ops")
        ops = v;
    else if (name == "steps")
        steps = v;
    else if (name == "packets")
        packets = v;
    else if (name == "sim_seconds") {
        // A run's end must stay representable (picosecond ticks in 64 bits: about 5.1 h).
        if (v > k_max_sim_seconds)
            fail("--limit " + arg + ": at most " + std::to_string(static_cast<long long>(k_max_sim_seconds)) +
                 " (simulated time ends at about 5.1 hours, picosecond ticks in 64 bits)");
        sim_seconds = v;
    } else
        fail("--limit " + arg + ": no such limit" + did_you_mean(name, names) + "; limits: " + join(names));
}

resource_limits& limits() {
    static resource_limits l;
    return l;
}

std::string clock_out_of_range(double hz) {
    if (hz > k_max_clock_hz)
        return format_quantity({hz, dimension::frequency}) + " is above " +
               format_quantity({k_max_clock_hz, dimension::frequency}) +
               ", the fastest clock tessel simulates (a cycle must span at least 100 fs)";
    if (hz < k_min_clock_hz)
        return format_quantity({hz, dimension::frequency}) + " is below 1 Hz, the slowest clock tessel simulates";
    return {};
}

void require_units(double units, const std::string& what) {
    if (units > limits().modules) fail(what + " " + over_limit("modules", units, "units"));
}

void require_input_file(const std::string& path, const std::string& what, double max_bytes) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) fail("cannot open '" + path + "': no such file or not readable");
    if (fs::is_directory(st)) fail(what + " '" + path + "' is a directory, not a file");
    if (!fs::is_regular_file(st)) fail(what + " '" + path + "' is not a plain file (a device, pipe or socket)");
    const auto size = fs::file_size(path, ec);
    if (!ec && static_cast<double>(size) > max_bytes)
        fail(what + " '" + path + "' is " + format_bytes(static_cast<double>(size)) + ", more than the " +
             format_bytes(max_bytes) + " tessel reads");
}

std::string over_limit(const std::string& name, double needed, const std::string& noun) {
    double lim = 0;
    for (const auto& l : limits().all())
        if (name == l.name) lim = l.value;
    return "needs " + format_number(needed) + " " + noun + ", over the limit of " + format_number(lim) + " (--limit " +
           name + "=N raises it)";
}

}  // namespace tessel
