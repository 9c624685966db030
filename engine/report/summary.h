// The run summary: what a user reads first. Simulated time, throughput, achieved against peak FLOP/s, the
// physical lower bound (the largest work / peak rate over all resources) and how close the run came to it,
// the busiest resources with their utilisation, and whether the run was bound by compute, memory, network or
// sync. Printed as a table and written as summary.json (the metrics sweeps collect).
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <iosfwd>
#include <string>
#include <vector>

#include "engine/exec/executor.h"
#include "engine/netlist/platform.h"
#include "models/core/reservation.h"
#include "models/core/text.h"

namespace tessel {

struct run_summary {
    std::string platform, workload;
    std::string validation;  // the platform's validation status (calibrated, checked or uncalibrated: on what)
    double sim_seconds = 0;
    double samples = 1;
    double flops = 0;            // useful work of the workload (or of the program's compute steps)
    double peak_flops = 0;       // sum of the compute resources' peaks
    double bound_seconds = 0;    // physical lower bound
    std::string bound_resource;  // the resource that sets it
    std::string bound_by;        // compute | memory | network | sync: class of the busiest resource
    std::uint64_t steps = 0, packets = 0, activations = 0;
    std::uint64_t events = 0;  // events the executor queued: the simulation's own cost (a quantum cuts them)
    /// Packet latency: with synthetic traffic, the packets created in the measurement window from creation to
    /// delivery; otherwise every packet from injection to its last byte written. Cycles of `latency_cycle`.
    struct latency_report {
        std::uint64_t packets = 0;
        double mean = 0, p50 = 0, p99 = 0, max = 0;  // seconds
        double cycle = 0;                            // seconds per cycle (the traffic network's, else the platform's)
    } latency;
    /// Synthetic traffic: offered and accepted load in flits per node per cycle (0 without traffic).
    std::string traffic_pattern;
    double offered_load = 0, accepted_load = 0;
    /// Samples/s once a pipeline is full, where the mapper measures one (the wafer's layer pipeline): the headline
    /// then, with this run's own rate (fill and drain included) beside it. 0: the run is the steady state.
    double steady_throughput = 0;
    /// Energy of the run (models/core/energy.h): dynamic joules by where they were spent, plus leakage over the
    /// simulated time; by op and over time from the run's energy ledger (models/core/energy_ledger.h).
    struct energy_report {
        energy_ledger::parts dynamic_joules{};
        double static_watts = 0;
        /// The highest power over one bin of the ledger's timeline (`peak_window_s` wide): dynamic plus static.
        double peak_watts = 0, peak_window_s = 0;
        struct op_energy {
            std::string name;
            energy_ledger::parts joules{};
            double total() const;
        };
        std::vector<op_energy> by_op;  // every op that spent energy, in program order
        /// A system's energy by chip group (every chip of a group together, stand-ins included) and what its own
        /// links, switches and NICs spent outside every chip (the last entry, named "outside chips", chips 0).
        struct chip_group_energy {
            std::string name;
            std::int64_t chips = 0;
            energy_ledger::parts dynamic_joules{};
            double static_watts = 0;
        };
        std::vector<chip_group_energy> by_chip_group;
        double dynamic() const;
        double total(double seconds) const { return dynamic() + static_watts * seconds; }
    } energy;
    double tdp_watts = 0;    // the platform's thermal design power (0: not declared)
    std::int64_t chips = 0;  // chips of a system (0: a single-chip platform)
    /// How far average power may exceed the TDP before the summary says so: tessel does not model power capping
    /// (a real chip lowers its clock), so a run above it is drawing more than the chip could sustain.
    static constexpr double tdp_margin = 0.15;
    double joules() const { return energy.total(sim_seconds); }
    double average_watts() const { return sim_seconds > 0 ? joules() / sim_seconds : 0; }
    /// Samples per joule with the pipeline full (steady_throughput > 0): every sample's actions cost what they cost
    /// in this run, and the leakage is paid over 1 / steady_throughput per sample instead of fill and drain.
    double steady_samples_per_joule() const;
    std::vector<resource_usage> resources;  // grouped over replicas, busiest first
    std::vector<std::string> notes;
    nlohmann::json details;

    double throughput() const { return sim_seconds > 0 ? samples / sim_seconds : 0; }
    /// Sets steady_throughput; a rate above samples over the physical bound is a modelling bug (std::logic_error):
    /// a full pipeline still does every sample's work at no more than peak rate.
    void set_steady_throughput(double samples_per_s);
    double achieved_flops() const { return sim_seconds > 0 ? flops / sim_seconds : 0; }
    nlohmann::json to_json() const;
    void print(std::ostream& os, size_t top = 8) const;
};

/// Collects usage from every component, groups replicas ("tile[*].pe"), and checks the physical bound:
/// a run shorter than any resource's work at peak rate is a modelling bug and throws std::logic_error.
/// Components in `represented` ([first, end) id ranges, mapping::represented) are left out of the table; energy is
/// weighted by energy_weights (the session gives the components the same weights before the run, so the energy
/// ledger's by-op table and timeline are the system's). Throws std::logic_error when the ledger and the components'
/// usage() disagree on any part's energy (an action charged one way and not the other).
run_summary summarise(const platform& plat, const executor::result& r, const program& p, double flops, double samples,
                      const std::vector<std::pair<std::uint32_t, std::uint32_t>>& represented = {},
                      double traffic_scale = 1);

/// A throughput as the summary prints it: whole samples/s from 1000 up, four significant digits below.
std::string format_throughput(double per_second);

/// Writes the run's statistics into `st`: the run's time, energy by part and power (stats_registry::run_table)
/// and the energy_by_op table (every op's dynamic energy by part), for stats.json and stats.csv.
void record_stats(const run_summary& s, stats_registry& st);

/// How many joules of the whole system one joule a component spends stands for, by energy part, indexed by
/// component id. 1 on a fully simulated platform. In a symmetric system every chip of a group spends the same, but a
/// representative's writes into a peer land on a stand-in: a group's total is everything its members did (stand-ins
/// included) per simulated member, times all of them. The system's own links and switches (outside every chip)
/// carried the simulated ranks' traffic only: their network energy is scaled by `traffic_scale`.
std::vector<energy_ledger::parts> energy_weights(
    const platform& plat, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& represented,
    double traffic_scale);

}  // namespace tessel
