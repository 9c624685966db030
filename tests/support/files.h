// Reading a file a test's run wrote, whole and byte for byte.
#pragma once

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

}  // namespace tessel::test
