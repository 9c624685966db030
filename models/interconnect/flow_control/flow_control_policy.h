// Flow control of a mesh_noc, as a policy (models/core/policy.h): `flow_control: {impl: NAME, ...}` picks how
// links and buffers hold packets. Each implementation is one file pair in this folder that registers itself.
// An implementation either leaves the packets to mesh_noc's own busy-until links (make_engine returns null:
// `ideal`) or builds an engine that takes every packet at its source's interface and hands it back when its tail
// leaves (`credit`: credit_flow.h). The buffer geometry (buffer_flits, vcs, switching) is declared once by
// mesh_noc's flow_control group for every implementation with finite buffers; an implementation's own
// parameters (credit's `arbitration`) sit beside `impl`.
// Leaves out: an engine for the modules representation (engines run on the flat link arrays).
#pragma once

#include <memory>

#include "models/core/policy.h"
#include "models/core/units.h"

namespace tessel {

class mesh_noc;
struct component_args;
struct txn;

/// A flow-control model that runs the mesh's packets itself, woken by the executor's event loop.
class noc_flow_engine {
public:
    virtual ~noc_flow_engine() = default;
    /// A packet whose head reaches its source's network interface (txn::hop == 0).
    virtual void accept(txn& t) = 0;
    /// Called through component::wake at a time the engine asked for.
    virtual void wake(tick now) = 0;
};

class flow_control_policy {
public:
    using family = flow_control_policy;
    static constexpr const char* family_name = "flow_control";
    virtual ~flow_control_policy() = default;

    /// The engine that runs `noc`'s packets, or null for the mesh's own busy-until links. Called once, after the
    /// mesh has read its parameters; a setting the engine cannot simulate is an input_error located in `a`.
    virtual std::unique_ptr<noc_flow_engine> make_engine(mesh_noc& noc, const component_args& a) const = 0;
};

}  // namespace tessel
