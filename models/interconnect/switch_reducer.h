// `switch_reducer`: the reduction engine inside a switch that reduces in the network (NVLink SHARP in a third-
// generation NVSwitch, InfiniBand SHARP, Cerebras SwarmX). A collective lowered with the `in_network` algorithm
// writes each rank's contribution into its engine, which reduces at `bandwidth` (bytes in per second), and reads
// the result back out to the ranks: the switch replicates it (multicast), so a read costs only the latency.
// One engine per rank it serves (a switch port's share of the switch's reduction throughput): the engines of one
// switch together reduce `ranks x bandwidth`. Leaves out: the engine's buffer capacity (collectives stream
// through it in slices), arithmetic precision, reductions other than sum.
#pragma once

#include "models/core/component.h"
#include "models/core/energy.h"

namespace tessel {

class switch_reducer : public component {
public:
    struct params {
        frequency clock;
        bandwidth reduce_bandwidth;
        duration latency;
        link_energy energy;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    switch_reducer(sc_core::sc_module_name name, const component_args& args);

    /// A transfer's endpoint: contributions are written into it and the result read out of it.
    bool has_role(role r) const override { return r == role::memory; }
    double peak_bytes_per_second() const override { return m_bps; }
    bool reduces_in_network() const override { return true; }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;

private:
    params m_p;
    double m_bps = 0;
    tick m_latency = 0;
    reservation m_engine;
    int m_track = -1;
    double& m_reduced;
    double& m_multicast;
};

}  // namespace tessel
