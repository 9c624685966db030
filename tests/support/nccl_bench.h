// nccl-tests in tessel: one collective on a system platform file, timed by the executor, reported as nccl-tests'
// bus bandwidth (docs/collectives.md). Used by the calibration tests against NCCL's published figures.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/exec/executor.h"
#include "engine/netlist/platform.h"
#include "engine/system/collectives.h"

namespace tessel::test {

class nccl_bench {
public:
    /// Loads a platform file with --set style overrides ({"nodes", "2"}). SystemC elaborates once per process,
    /// so a test process holds one.
    nccl_bench(const std::string& path, const std::vector<std::pair<std::string, std::string>>& sets) {
        for (const auto& [k, v] : sets) m_ctx.add_override(k, v);
        m_plat = platform::load(path, m_ctx, m_sim);
        m_exec = std::make_unique<executor>("nccl_exec", *m_plat);
    }

    /// Each rank's buffer: the HBM of gpu[first] .. gpu[first + n - 1].
    std::vector<endpoint> gpus(int first, int n) const {
        std::vector<endpoint> out;
        for (int i = first; i < first + n; ++i)
            out.push_back(m_plat->resolve("gpu[" + std::to_string(i) + "].gpu.hbm", {}));
        return out;
    }

    /// Components `group[first]` .. `group[first + n - 1]` of the system (a switch's engines: "nvls").
    std::vector<endpoint> components(const std::string& group, int first, int n) const {
        std::vector<endpoint> out;
        for (int i = first; i < first + n; ++i)
            out.push_back(m_plat->resolve(group + "[" + std::to_string(i) + "]", {}));
        return out;
    }

    /// Runs the calls at once (NCCL's channels are concurrent rings) and returns the bus bandwidth of a
    /// collective of `bytes` over `ranks` ranks that took as long as the slowest call.
    double bus_bandwidth(std::vector<collective_call> calls, collective_kind kind, std::uint64_t bytes, int ranks) {
        program p;
        p.name = "nccl";
        const auto op = p.intern_op(name(kind));
        std::vector<collective_steps> steps;
        for (auto& c : calls) {
            c.op = op;
            steps.push_back(lower_collective(p, c));
        }
        const auto r = m_exec->run(p);
        const double seconds = static_cast<double>(r.duration()) * 1e-15;
        return static_cast<double>(bytes) / seconds * bus_bandwidth_factor(kind, ranks);
    }

    /// One all-reduce of `bytes` over gpu[first] .. gpu[first + n - 1] reduced in the switch engines
    /// `engines[first..]`, streamed in `slices`: its bus bandwidth.
    double in_network_all_reduce(int first, int n, std::uint64_t bytes, const std::string& engines,
                                 std::uint32_t slices) {
        collective_call c;
        c.kind = collective_kind::all_reduce;
        c.algorithm = collective_algorithm::in_network;
        c.ranks = gpus(first, n);
        c.engines = components(engines, first, n);
        c.bytes = bytes;
        c.chunks = slices;
        return bus_bandwidth({c}, c.kind, bytes, n);
    }

    /// One ring all-reduce of `bytes` over gpu[first] .. gpu[first + n - 1]: its bus bandwidth.
    double ring_all_reduce(int first, int n, std::uint64_t bytes) {
        collective_call c;
        c.kind = collective_kind::all_reduce;
        c.algorithm = collective_algorithm::ring;
        c.ranks = gpus(first, n);
        c.bytes = bytes;
        return bus_bandwidth({c}, c.kind, bytes, n);
    }

private:
    sim_context m_sim;
    param_context m_ctx;
    std::unique_ptr<platform> m_plat;
    std::unique_ptr<executor> m_exec;
};

}  // namespace tessel::test
