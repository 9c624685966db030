// `flow_control: {impl: credit, arbitration: {impl: round_robin}}`: finite input buffers (the group's
// buffer_flits, vcs, switching), virtual channels and credit flow control, simulated cycle by cycle by
// credit_flow on the flat link arrays; `arbitration` picks each output's switch allocator
// (models/interconnect/arbitration/). This file checks that the mesh's timing fits whole cycles and builds the
// engine. Leaves out: the modules representation.
#pragma once

#include <memory>
#include <string>

#include "models/interconnect/arbitration/arbitration_policy.h"
#include "models/interconnect/flow_control/flow_control_policy.h"

namespace tessel {

class credit_flow_control final : public flow_control_policy {
public:
    struct params {
        struct arbitration_params {
            std::string impl;
            std::unique_ptr<const arbitration_policy> policy;
            void declare(param_decl& d);
        } arbitration;
        void declare(param_decl& d);
    };
    explicit credit_flow_control(params p) : m_arbiter(std::move(p.arbitration.policy)) {}
    std::unique_ptr<noc_flow_engine> make_engine(mesh_noc& noc, const component_args& a) const override;

private:
    std::unique_ptr<const arbitration_policy> m_arbiter;
};

}  // namespace tessel
