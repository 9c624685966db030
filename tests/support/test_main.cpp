// GoogleTest main for tessel tests: SystemC is set up once (1 fs resolution, warnings and errors as exceptions)
// so a bad binding or a double stop fails the test instead of passing silently.
#include <gtest/gtest.h>
#include <systemc>

#include <cstdlib>

#include "models/core/sim_context.h"

// Our main() takes precedence over libsystemc's: it silences the banner before SystemC prints it, then lets
// SystemC set up its kernel and call sc_main.
int main(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    tessel::sim_context::init_systemc();
    return RUN_ALL_TESTS();
}
