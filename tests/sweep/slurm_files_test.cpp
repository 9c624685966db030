// What the Slurm backend reads back: sbatch's job id, sacct's and squeue's states and the task file, each from
// the text a real Slurm (or an edit, a wrapper, a cut-short write) gives, with hand-written expected values.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "engine/sweep/slurm_files.h"
#include "models/core/error.h"

using namespace tessel;
using namespace tessel::sweep;
namespace fs = std::filesystem;

namespace {

std::string written(const std::string& name, const std::string& text) {
    const fs::path d = fs::temp_directory_path() / ("tessel_slurm_files_" + std::to_string(getpid()));
    fs::create_directories(d);
    std::ofstream(d / name) << text;
    return (d / name).string();
}

task_file two_tasks() {
    task_file t;
    t.sweep = "s";
    t.run.tessel = "/usr/bin/tessel";
    t.run.timeout_s = 60;
    t.points_per_task = 2;
    t.cpus_per_task = 2;
    t.rows = "/r/rows";
    for (size_t i = 0; i < 3; ++i)
        t.jobs.push_back({i, "k" + std::to_string(i), {{"x", std::to_string(i)}}, {"tessel", "run"}, "/r/p", "p"});
    return t;
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const input_error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(slurm_files, sbatch_job_id_is_the_last_line_before_the_cluster) {
    EXPECT_EQ(sbatch_job_id("4242\n"), "4242");
    EXPECT_EQ(sbatch_job_id("sbatch: warning: no --time given\n4242;cluster-a\n\n"), "4242");
    EXPECT_EQ(error_of([] { sbatch_job_id("Submitted batch job 4242\n"); }),
              "cannot read a job id from sbatch's output (sbatch --parsable prints JOBID[;CLUSTER] last): "
              "'Submitted batch job 4242'");
    EXPECT_NE(error_of([] { sbatch_job_id(""); }), "(no error)");
    EXPECT_NE(error_of([] { sbatch_job_id("123456789012345678901234567890\n"); }), "(no error)")
        << "an id longer than any counter";
}

TEST(slurm_files, task_states_from_sacct_and_squeue) {
    const auto a = sacct_states("7_0|COMPLETED|0:0\n7_1|FAILED|1:0\nbroken line\n|x|y\n");
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a.at("7_1"), "FAILED (exit 1:0)");
    const auto q = squeue_states("7_2|PENDING|Resources\n7_3|RUNNING|None\n");
    EXPECT_EQ(q.at("7_2"), "PENDING (Resources)");
    EXPECT_EQ(q.at("7_3"), "RUNNING");
    EXPECT_TRUE(squeue_active("COMPLETED\n  RUNNING \n"));
    EXPECT_FALSE(squeue_active("COMPLETED\nFAILED\nslurm_load_jobs error: Unexpected message\n"));
}

TEST(slurm_files, a_task_file_reads_back_as_written_and_splits_into_tasks) {
    const task_file t = read_task_file(written("tasks.json", task_file_json(two_tasks())));
    EXPECT_EQ(t.run.tessel, "/usr/bin/tessel");
    EXPECT_EQ(t.run.backend, "slurm");
    EXPECT_EQ(t.cpus_per_task, 2);
    ASSERT_EQ(t.jobs.size(), 3u);
    EXPECT_EQ(t.task(0).size(), 2u);
    ASSERT_EQ(t.task(1).size(), 1u);
    EXPECT_EQ(t.task(1)[0].key, "k2");
    EXPECT_TRUE(t.task(2).empty());
    EXPECT_TRUE(t.task(-1).empty());
    EXPECT_TRUE(t.task(1L << 40).empty()) << "an index whose first point would wrap";
}

TEST(slurm_files, a_task_file_tessel_did_not_write_says_what_is_wrong) {
    auto edited = [](const std::function<void(nlohmann::json&)>& edit) {
        nlohmann::json j = nlohmann::json::parse(task_file_json(two_tasks()));
        edit(j);
        const std::string path = written("edited.json", j.dump());
        return error_of([&] { read_task_file(path); }).substr(path.size() + 2);
    };
    EXPECT_EQ(edited([](nlohmann::json& j) { j["points_per_task"] = 0; }),
              " is not a task file tessel sweep wrote: points_per_task is 0");
    EXPECT_EQ(edited([](nlohmann::json& j) { j["jobs"][1]["key"] = "../../etc/x"; }),
              " is not a task file tessel sweep wrote: a point's key '../../etc/x' is not a plain file name");
    EXPECT_EQ(edited([](nlohmann::json& j) { j["timeout_s"] = -1; }),
              " is not a task file tessel sweep wrote: timeout_s is not a time in seconds");
    EXPECT_EQ(edited([](nlohmann::json& j) { j["cpus_per_task"] = 0; }),
              " is not a task file tessel sweep wrote: cpus_per_task is 0");
    EXPECT_EQ(edited([](nlohmann::json& j) { j["jobs"][0]["argv"] = nlohmann::json::array(); }),
              " is not a task file tessel sweep wrote: point k0 has no command (argv)");
    // Found by fuzz/slurm_fuzz.cpp: the expression reader's own error escaped (fuzz/regressions/slurm/).
    EXPECT_EQ(edited([](nlohmann::json& j) {
                  j["metrics"] = {{{"name", "per_op"}, {"expr", "sim_time_s   4"}}};
              }),
              " is not a task file tessel sweep wrote: metric per_op: 'sim_time_s   4': unexpected '4'");
    EXPECT_EQ(edited([](nlohmann::json& j) { j["jobs"][0]["point"] = "first"; }),
              " is not a task file tessel sweep wrote: a point's number is not a whole number of at least 0");
    // Found by fuzz/slurm_fuzz.cpp: a count given as a real beyond the integer's range was converted by a plain
    // cast (UBSan: undefined), and a negative one wrapped (fuzz/regressions/slurm/).
    EXPECT_EQ(edited([](nlohmann::json& j) { j["points_per_task"] = 7.8e33; }),
              " is not a task file tessel sweep wrote: points_per_task is not a whole number of at least 0");
    EXPECT_EQ(edited([](nlohmann::json& j) { j["cpus_per_task"] = -3; }),
              " is not a task file tessel sweep wrote: cpus_per_task is not a whole number of at least 0");
    EXPECT_EQ(edited([](nlohmann::json& j) { j["jobs"][1]["point"] = 1.5; }),
              " is not a task file tessel sweep wrote: a point's number is not a whole number of at least 0");
}
