#include "engine/serve/kv_transfer.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/sweep/generated_spec.h"
#include "engine/sweep/results.h"
#include "models/core/error.h"
#include "models/core/output_file.h"

namespace tessel::serve {

namespace {

std::string program_file(const kv_transfer_plan& p, std::int64_t tokens) {
    return p.dir + "/transfer_" + std::to_string(tokens) + ".yaml";
}

}  // namespace

std::string kv_transfer_program(const kv_transfer_plan& p, std::int64_t tokens) {
    const auto bytes = static_cast<std::uint64_t>(std::llround(p.bytes_per_token * static_cast<double>(tokens)));
    std::ostringstream y;
    y << "# written by tessel serve: the KV cache of one " << tokens
      << "-token request, each chip's shard sent to its counterpart in a decode replica\n"
      << "program: kv_transfer_" << tokens << "\nsteps:\n";
    for (std::size_t i = 0; i < p.routes.size(); ++i)
        y << "  - id: chip" << i << "\n    transfer: {from: " << sweep::yaml_quote(p.routes[i].first)
          << ", to: " << sweep::yaml_quote(p.routes[i].second) << ", bytes: " << bytes << "B}\n";
    return y.str();
}

bool simulate_kv_transfers(const kv_transfer_plan& p, sweep::sweep_options sw, std::ostream& err, transfer_table& out,
                           int& status) {
    std::filesystem::create_directories(p.dir);
    sweep::generated_spec g;
    g.comment = "written by tessel serve: KV-cache transfers from a prefill replica to a decode replica";
    g.name = "serve_kv_transfers";
    g.stats = false;  // each transfer's summary is what serving reads
    g.platform = p.platform_file;
    g.platform_sets = p.platform_sets;
    std::vector<std::string> programs;
    for (const std::int64_t n : p.lengths) {
        programs.push_back(std::filesystem::absolute(program_file(p, n)).string());
        write_file_atomic(program_file(p, n), kv_transfer_program(p, n), "KV transfer program", true);
    }
    g.axes = {{"program", programs}};
    const std::string spec = p.dir + "/serve_kv_transfers.yaml";
    write_file_atomic(spec, g.yaml(), "KV transfer sweep", true);
    sw.spec_file = spec;
    sw.out_dir = p.dir + "/runs";
    std::ostringstream quiet;
    status = sweep::run_sweep(sw, quiet, err);
    if (status >= 128) return false;

    std::map<std::string, sweep::row> rows;
    const sweep::results_store store(sw.out_dir, false);
    for (const std::string& key : store.written_order()) {  // the newest run of each program last
        const sweep::row& row = store.latest().at(key);
        rows[row["params"].value("program", "")] = row;
    }
    for (std::size_t i = 0; i < p.lengths.size(); ++i) {
        const std::string what = "the KV transfer of a " + std::to_string(p.lengths[i]) + "-token cache";
        const auto it = rows.find(programs[i]);
        if (it == rows.end()) throw input_error("tessel serve: " + what + " has no result");
        double seconds = 0;
        try {
            seconds = sweep::read_point_summary(sw.out_dir, it->second,
                                                [](const nlohmann::json& sum) { return sum.value("sim_time_s", 0.0); });
        } catch (const input_error& e) {
            throw input_error("tessel serve: " + what + " " + e.message());
        }
        if (!(seconds > 0)) throw input_error("tessel serve: " + what + " took no time");
        out.add(p.lengths[i], seconds);
    }
    return true;
}

}  // namespace tessel::serve
