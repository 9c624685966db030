// Outputs are written completely or not at all (models/core/output_file.h): a failed write leaves no partial file
// and no temporary, keeps the previous file, and is an input_error naming the path and the system's reason.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "models/core/output_file.h"
#include "tests/support/errors.h"
#include "tests/support/files.h"

namespace fs = std::filesystem;
using tessel::output_file;
using tessel::write_file_atomic;
using tessel::test::error_of;

namespace {

using tessel::test::slurp;

fs::path fresh_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

size_t entries(const fs::path& d) {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(d)) ++n;
    return n;
}

TEST(output_file, a_committed_file_has_every_byte_and_no_temporary_is_left) {
    const fs::path d = fresh_dir("tessel-out-ok");
    const std::string big(3 << 20, 'x');  // larger than any stream buffer
    write_file_atomic((d / "a.json").string(), big);
    EXPECT_EQ(slurp(d / "a.json"), big);
    EXPECT_EQ(entries(d), 1u);
}

TEST(output_file, an_abandoned_write_keeps_the_previous_file_and_leaves_no_temporary) {
    const fs::path d = fresh_dir("tessel-out-abandon");
    write_file_atomic((d / "trace.json").string(), "old");
    try {
        output_file f((d / "trace.json").string(), "trace");
        f.stream() << "half of a new trace";
        throw std::runtime_error("the run failed half way");
    } catch (const std::runtime_error&) {
    }
    EXPECT_EQ(slurp(d / "trace.json"), "old");
    EXPECT_EQ(entries(d), 1u);
}

TEST(output_file, a_full_disk_is_an_input_error_with_the_path_and_reason) {
    // /dev/full exists and is not a regular file, so it is written in place; every write fails with ENOSPC.
    EXPECT_EQ(error_of([] { write_file_atomic("/dev/full", std::string(1 << 20, 'x'), "VCD trace"); }),
              "cannot write VCD trace '/dev/full': No space left on device");
    // Devices that accept data are written in place, not replaced.
    write_file_atomic("/dev/null", "discarded");
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST(output_file, a_missing_folder_or_a_folder_as_the_path_is_an_input_error) {
    const fs::path d = fresh_dir("tessel-out-missing");
    EXPECT_EQ(error_of([&] { write_file_atomic((d / "no" / "such.json").string(), "x", "stats"); }),
              "cannot write stats '" + (d / "no" / "such.json").string() + "': No such file or directory");
    EXPECT_EQ(error_of([&] { write_file_atomic(d.string(), "x", "floorplan"); }),
              "cannot write floorplan '" + d.string() + "': it is a folder");
    EXPECT_EQ(entries(d), 0u);
}

}  // namespace
