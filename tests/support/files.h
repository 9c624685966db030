// Reading a file a test's run wrote, whole and byte for byte; an empty folder for a run to write into.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tessel::test {

/// The file's bytes (empty when it cannot be opened: the caller's expectations then say what is missing).
inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

/// A path `name` under this process's own temporary folder `<tmp>/<prefix><pid>`, emptied: a test's runs write
/// there without meeting another process's (CTest runs tests side by side). The folder is
/// `fresh_temp(prefix, "").parent_path()`.
inline std::filesystem::path fresh_temp(const std::string& prefix, const std::string& name) {
    std::filesystem::path p = std::filesystem::temp_directory_path() / (prefix + std::to_string(getpid())) / name;
    std::filesystem::remove_all(p);
    return p;
}

}  // namespace tessel::test
