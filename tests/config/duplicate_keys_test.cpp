// A key given twice in one map is an error in every YAML file tessel reads (platforms, workloads, programs,
// sweeps), at the second key's line and column; a directory given as a file says so.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "models/core/yaml_node.h"
#include "tests/support/cli.h"

using namespace tessel;
using tessel::test::run_tessel;

namespace {

std::string error_of(const std::string& text) {
    try {
        yaml_node::load_string(text, "f.yaml");
    } catch (const input_error& e) {
        return e.what();
    }
    return {};
}

TEST(duplicate_keys, at_any_depth_name_the_second_key) {
    EXPECT_EQ(error_of("a: 1\nb:\n  c: 2\n  c: 3\n"),
              "f.yaml:4:3: duplicate key 'c' (first given at line 3); each key may appear once in a map");
    EXPECT_EQ(error_of("steps:\n  - {id: x, id: y}\n"),
              "f.yaml:2:13: duplicate key 'id' (first given at line 2); each key may appear once in a map");
    EXPECT_EQ(error_of("a: 1\nb: 2\na: 3\n"),
              "f.yaml:3:1: duplicate key 'a' (first given at line 1); each key may appear once in a map");
    EXPECT_EQ(error_of("a: {x: 1}\nb: {x: 1}\nc: [{x: 1}, {x: 2}]\n"), "");  // the same key in different maps is fine
}

TEST(duplicate_keys, every_loader_refuses_them) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "tessel_dup";
    fs::create_directories(dir);
    // A platform: the second `clock` used to lose silently (the first won).
    std::ofstream(dir / "p.yaml") << "platform: p\nclock: 1GHz\nclock: 2GHz\ncomponents:\n  pe: {kind: pe}\n";
    auto r = run_tessel("run -p " + (dir / "p.yaml").string() + " -w mlp");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("p.yaml:3:1: duplicate key 'clock'"), std::string::npos) << r.out;
    // A workload: the last `batch` used to win.
    std::ofstream(dir / "w.yaml") << "workload: w\nparameters:\n  batch: 1\n  batch: 8\nops: []\n";
    r = run_tessel("graph info " + (dir / "w.yaml").string());
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("w.yaml:4:3: duplicate key 'batch'"), std::string::npos) << r.out;
    // A directory where a file belongs.
    r = run_tessel("run -p " + dir.string() + " -w mlp");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_NE(r.out.find("is a directory"), std::string::npos) << r.out;
    fs::remove_all(dir);
}

}  // namespace
