// `barrier`: a global synchronisation (the IPU's sync, a GPU grid barrier, an all-chip handshake). A sync
// step is issued once its last participant has arrived (its dependencies), and releases everyone after the
// sync latency: a fixed part plus a per-level part of a log2 tree over the participants.
// Leaves out: partial (group) syncs with separate latencies, sync-network contention.
#pragma once

#include "models/core/component.h"
#include "models/core/energy.h"

namespace tessel {

class barrier : public component {
public:
    struct params {
        frequency clock;
        duration latency;
        duration level_latency;
        sync_energy energy;
        void declare(param_decl& d);
    };
    /// Statistics it reports: the one declaration, read by `tessel describe` and by stats().
    static std::vector<stat_decl> stat_table();

    barrier(sc_core::sc_module_name name, const component_args& args);

    bool has_role(role r) const override { return r == role::sync; }
    void transport(txn& t) override;
    void usage(std::vector<resource_usage>& out) const override;
    /// Latency of one sync over `participants`.
    tick sync_ticks(std::uint32_t participants) const override;

private:
    params m_p;
    int m_track = -1;
    double& m_syncs;
    double& m_sync_time;
    tick m_busy = 0;
};

}  // namespace tessel
