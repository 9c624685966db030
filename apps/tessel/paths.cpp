#include "apps/tessel/paths.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "models/core/error.h"
#include "models/core/yaml_node.h"

namespace fs = std::filesystem;

namespace tessel {

std::string data_root() {
    if (const char* h = std::getenv("TESSEL_HOME"); h && *h) return h;
    return TESSEL_SOURCE_DIR;
}

std::vector<std::string> bundled_platforms() {
    std::vector<std::string> out;
    const fs::path root = fs::path(data_root()) / "platforms";
    std::error_code ec;
    if (!fs::exists(root, ec)) return out;
    for (auto it = fs::recursive_directory_iterator(root, ec); it != fs::recursive_directory_iterator(); ++it) {
        if (it->path().extension() != ".yaml") continue;
        fs::path rel = fs::relative(it->path(), root, ec);
        rel.replace_extension();
        out.push_back(rel.generic_string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string find_platform(const std::string& arg) {
    std::error_code ec;
    if (fs::exists(arg, ec)) return arg;
    const fs::path root = fs::path(data_root()) / "platforms";
    for (const fs::path& p : {root / (arg + ".yaml"), root / arg})
        if (fs::is_regular_file(p, ec)) return p.string();
    std::vector<std::string> names, stems;
    for (const auto& n : bundled_platforms()) {
        names.push_back(n);
        const fs::path p(n);
        if (p.filename().string() == arg) return (root / (n + ".yaml")).string();
        stems.push_back(p.filename().string());
    }
    throw input_error("cannot open platform '" + arg + "': no such file, and no bundled platform by that name" +
                      did_you_mean(arg, stems) + " (bundled: " + join(names) + ")");
}

}  // namespace tessel
