// Shared by the libFuzzer harnesses (fuzz/*.cpp): SystemC set up once, the input as text, and the one rule
// every harness checks: bad input may only ever surface as an input_error. Any other exception escapes, and
// libFuzzer reports it (with the input) as a crash; so do signals, sanitizer reports, hangs (-timeout) and
// memory beyond -rss_limit_mb / -malloc_limit_mb.
#pragma once

#include <systemc>

#include <unistd.h>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "models/core/error.h"
#include "models/core/limits.h"
#include "models/core/sim_context.h"

namespace tessel::fuzz {

/// The ops budget the harnesses run under: a tenth of the default. A graph at the default 5e5 ops takes about 6 s
/// to build in a release build and several times that under the sanitizers, past libFuzzer's -timeout, so a
/// mutation that lands just under the limit read as a hang. The code paths are the same at a tenth.
constexpr double k_fuzz_ops_limit = 5e4;

/// SystemC's kernel, once per process (1 fs resolution, warnings and errors as exceptions), and the budgets.
inline void init_once() {
    static const bool done = [] {
        setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
        limits().ops = k_fuzz_ops_limit;
        sim_context::init_systemc();
        return true;
    }();
    (void)done;
}

inline std::string text_of(const std::uint8_t* data, std::size_t size) {
    return std::string(reinterpret_cast<const char*>(data), size);
}

/// Writes the input to a per-process scratch file (for loaders that take a path) and returns its path.
inline std::string scratch_file(const std::uint8_t* data, std::size_t size, const char* suffix) {
    static const std::string dir = [] {
        const char* t = std::getenv("TMPDIR");
        return std::string(t && *t ? t : "/tmp");
    }();
    const std::string path = dir + "/tessel-fuzz-" + std::to_string(getpid()) + suffix;
    // Removed when the run ends (libFuzzer exits through exit(), which runs static destructors), unless a crash
    // ends it first: then the crashing input is in libFuzzer's own crash file anyway.
    struct removed_at_exit {
        std::string path;
        ~removed_at_exit() { std::remove(path.c_str()); }
    };
    static removed_at_exit last{path};
    last.path = path;
    std::ofstream os(path, std::ios::binary | std::ios::trunc);
    os.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    return path;
}

}  // namespace tessel::fuzz

// SystemC's library defines main() (it calls sc_main); libFuzzer brings its own main, so sc_main is never
// called, but the symbol must exist.
#define TESSEL_FUZZ_SC_MAIN \
    int sc_main(int, char**) { return 0; }
