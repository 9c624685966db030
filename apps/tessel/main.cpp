// tessel: discrete-event architecture exploration for AI accelerators.
#include <systemc>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>

#include <unistd.h>

#include "apps/tessel/command.h"
#include "engine/mappers/mapper.h"
#include "engine/report/explain/explainer.h"
#include "models/core/error.h"
#include "models/core/policy.h"
#include "models/core/registry.h"
#include "models/core/sim_context.h"
#include "models/core/yaml_node.h"

namespace tessel {

std::vector<command>& commands() {
    static std::vector<command> c;
    return c;
}

bool register_command(command c) {
    commands().push_back(std::move(c));
    return true;
}

}  // namespace tessel

namespace {

// Prints the run's one error line on stderr and, when a sweep runs us (TESSEL_ERROR_FD names a pipe), there too:
// the sweep keeps it in the point's row even if stderr's file could not be written (engine/sweep/runner.cpp).
int report(const std::string& line, int code) {
    std::cerr << line << "\n";
    if (const char* fd_text = std::getenv("TESSEL_ERROR_FD")) {
        const int fd = std::atoi(fd_text);
        const std::string text = line + "\n";
        if (fd > 2 && ::write(fd, text.data(), text.size()) < 0) {
            // Nobody is listening: stderr already has it.
        }
    }
    return code;
}

/// A command's exit status once what it printed has reached standard output: a write that failed (a full disk,
/// a closed file) is an error, never a silent success with the results lost.
int flushed(int code) {
    std::cout.flush();
    if (!std::cout.fail()) return code;
    return report("tessel: error: standard output could not be written (a full disk?): what it shows is incomplete",
                  code != 0 ? code : 2);
}

}  // namespace

// Our main() takes precedence over libsystemc's: it silences the banner before SystemC prints it, then lets
// SystemC set up its kernel and call sc_main.
int main(int argc, char** argv) {
    setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
    return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char** argv) {
    using namespace tessel;
    // A kind, mapper or policy registered twice is a build mistake: refuse to run rather than drop one silently.
    std::vector<std::string> registry_errors = kind_registry::instance().errors();
    for (const auto& e : mapper_registry::instance().errors()) registry_errors.push_back(e);
    for (const auto& e : explainer_registry::instance().errors()) registry_errors.push_back(e);
    for (const auto& e : policy_registry_errors()) registry_errors.push_back(e);
    for (const auto& e : registry_errors) {
        std::cerr << "tessel: internal error: " << e << "\n";
        return 1;
    }
    CLI::App app{"tessel: discrete-event architecture exploration for AI accelerators (SystemC/TLM-2.0)"};
    app.set_version_flag("--version", std::string("tessel ") + TESSEL_VERSION);
    app.require_subcommand(1);
    auto& cmds = commands();
    // Ties by name: registration order is the order of static initialisation, which the link decides.
    std::sort(cmds.begin(), cmds.end(), [](const command& a, const command& b) {
        return a.order != b.order ? a.order < b.order : a.name < b.name;
    });
    std::vector<std::pair<CLI::App*, const command*>> subs;
    subs.reserve(cmds.size());
    for (const auto& c : cmds) subs.emplace_back(c.setup(app), &c);
    // A mistyped command would otherwise read as a missing one ("A subcommand is required").
    if (argc > 1 && argv[1][0] != '-') {
        std::vector<std::string> names;
        names.reserve(subs.size());
        for (const auto& [sub, c] : subs) names.push_back(sub->get_name());
        if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
            std::cerr << "tessel: error: unknown command '" << argv[1] << "'" << did_you_mean(argv[1], names)
                      << "; commands: " << join(names) << "\n";
            return 2;
        }
    }
    // An unknown option before any command would otherwise read as a missing command.
    if (argc > 1 && argv[1][0] == '-') {
        const std::string a = argv[1];
        if (a != "-h" && a != "--help" && a != "--version") {
            std::cerr << "tessel: error: unknown option '" << a
                      << "' (tessel COMMAND [OPTIONS]; tessel --help lists the commands)\n";
            return 2;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int rc = app.exit(e);
        return rc == 0 ? 0 : 2;
    }
    try {
        sim_context::init_systemc();
        for (const auto& [sub, c] : subs)
            if (sub->parsed()) return flushed(c->run());
        return 2;
    } catch (const input_error& e) {
        return report("tessel: error: " + std::string(e.what()), 2);
    } catch (const std::bad_alloc&) {
        // A last line of defence: the budgets (models/core/limits.h) should refuse such an input first.
        return report(
            "tessel: error: out of memory: the input needs more memory than this machine gives tessel; make "
            "it smaller (docs/reliability.md)",
            2);
    } catch (const std::filesystem::filesystem_error& e) {
        // A path the run reads or writes that the machine refuses: a file where a folder is wanted (-o), a full
        // disk, no permission. The environment's doing, not tessel's: name the path and exit as for bad input.
        const std::string path = e.path1().empty() ? std::string() : " '" + e.path1().string() + "'";
        return report("tessel: error: cannot use" + path + ": " + e.code().message() +
                          " (check the path, its permissions and the free space)",
                      2);
    } catch (const std::exception& e) {
        return report("tessel: internal error: " + std::string(e.what()), 1);
    } catch (...) {
        return report("tessel: internal error: unknown exception", 1);
    }
}
