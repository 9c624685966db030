// split_emitted_tables: an emitted program's tables are cut out of the text before YAML parsing (a 406 MB
// ResNet-50 program replayed in 91 s, 85 of them yaml-cpp scanning the tables; now 36 s). What it cuts is exactly
// what YAML would read as the block's text, every other line keeps its number, and anything that is not a plain
// literal block two spaces inside `emitted:` is left to YAML. tests/cli/emit_replay_test.cpp replays real
// programs through it and checks edited lines are still named by their line.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "engine/program/program_emit.h"
#include "models/core/yaml_node.h"

using namespace tessel;

namespace {

const std::string k_program =
    "program: p\n"
    "emitted:\n"
    "  ops: [a]\n"
    "  # a comment\n"
    "  works: |\n"
    "    1 0 2 2 4 fp16 gemm 1 1 1 1\n"
    "\n"
    "    3 0 2 2 4 fp16 gemm 1 1 1 1\n"
    "  # kind op ...\n"
    "  steps: |  # a comment after the bar\n"
    "      compute 0 0 0 0 0 0\n"
    "        transfer 0 0 0 0 0 0 0 8 0\n"
    "  places: [x]\n";

long lines_of(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

}  // namespace

TEST(emitted_tables, cut_tables_read_as_yaml_reads_them_and_lines_keep_their_numbers) {
    std::string text = k_program;
    const emitted_tables t = split_emitted_tables(text);
    const yaml_node whole = yaml_node::load_string(k_program, "p.yaml");
    ASSERT_EQ(t.body.size(), 2u);
    EXPECT_EQ(t.body.at("works"), whole["emitted"]["works"].scalar("works"));
    EXPECT_EQ(t.body.at("steps"), whole["emitted"]["steps"].scalar("steps"));
    EXPECT_EQ(t.body.at("steps"), "compute 0 0 0 0 0 0\n  transfer 0 0 0 0 0 0 0 8 0\n");
    EXPECT_EQ(lines_of(text), lines_of(k_program));
    const yaml_node cut = yaml_node::load_string(text, "p.yaml");
    EXPECT_EQ(cut["emitted"]["places"].where().line, whole["emitted"]["places"].where().line);
    EXPECT_EQ(cut["emitted"]["steps"].where().line, whole["emitted"]["steps"].where().line);
    EXPECT_EQ(cut["emitted"]["steps"].scalar("steps"), "");
}

TEST(emitted_tables, other_forms_are_left_to_yaml) {
    for (const std::string text : {
             "program: p\nsteps: |\n  compute 0\n",                    // not inside emitted:
             "program: p\nemitted:\n  steps: |-\n    compute 0\n",     // a chomping indicator
             "program: p\nemitted:\n  steps: \"compute 0\"\n",         // not a block
             "program: p\nemitted:\n    steps: |\n      compute 0\n",  // not two spaces in
             "program: p\nemitted:\n  other: |\n    compute 0\n",      // not a table
             "program: p\nemitted: {}\nsteps: |\n  compute 0\n",       // after emitted: ended
         }) {
        std::string copy = text;
        EXPECT_TRUE(split_emitted_tables(copy).body.empty()) << text;
        EXPECT_EQ(copy, text);
    }
}
