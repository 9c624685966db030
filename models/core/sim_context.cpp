#include "models/core/sim_context.h"

#include "models/core/component.h"

#include <systemc>

#include <cstdlib>

namespace tessel {

void sim_context::init_systemc() {
    static bool done = false;
    if (done) return;
    done = true;
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
    // SystemC warnings and errors are bugs in a netlist or a model: make them exceptions, never silent.
    sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_THROW);
    sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
    sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_THROW);
    sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
}

component* sim_context::find_component(const std::string& path) const {
    for (component* c : m_components)
        if (c && c->path() == path) return c;
    return nullptr;
}

}  // namespace tessel
