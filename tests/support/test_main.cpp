// GoogleTest main for tessel tests: SystemC is set up once (1 fs resolution, warnings and errors as exceptions)
// so a bad binding or a double stop fails the test instead of passing silently.
#include <gtest/gtest.h>
#include <systemc>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

#include "models/core/sim_context.h"

namespace {

/// Gives this test process a scratch folder of its own and points TMPDIR at it, so every file the test writes
/// (under std::filesystem::temp_directory_path(), and those of the tessel processes it starts) lands there.
/// Returns its path, or "" when it cannot be made (the test then writes to the usual temporary folder).
std::string own_scratch_folder() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base && *base ? base : "/tmp") + "/tessel-test-XXXXXX";  // mkdtemp fills in the Xs
    if (!mkdtemp(pattern.data())) return "";
    setenv("TMPDIR", pattern.c_str(), 1);
    return pattern;
}

}  // namespace

// Our main() takes precedence over libsystemc's: it silences the banner before SystemC prints it, then lets
// SystemC set up its kernel and call sc_main.
int main(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    const std::string scratch = own_scratch_folder();
    const int rc = sc_core::sc_elab_and_sim(argc, argv);
    // A passing test leaves nothing behind (a full run of the suite wrote gigabytes of plans, runs and traces
    // into /tmp); a failing one keeps its files to look at.
    if (!scratch.empty()) {
        if (rc == 0 && !std::getenv("TESSEL_KEEP_TEST_FILES")) {
            std::error_code ec;
            std::filesystem::remove_all(scratch, ec);
        } else {
            std::fprintf(stderr, "test files kept in %s\n", scratch.c_str());
        }
    }
    return rc;
}

int sc_main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    tessel::sim_context::init_systemc();
    return RUN_ALL_TESTS();
}
