// Issue 16's examples, one class per test: each is one located message and exit 2 where it used to crash, hang,
// grow without bound, exit 1 with "internal error", or run on nonsense. The messages are checked word for word
// where they carry the numbers the user needs (the limit, the amount, the flag that raises it).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/cli.h"

using tessel::test::run_tessel;
using tessel::test::run_tessel_measured;
using tessel::test::write_temp;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool under_sanitizers = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool under_sanitizers = true;
#else
constexpr bool under_sanitizers = false;
#endif
#else
constexpr bool under_sanitizers = false;
#endif

namespace {

TEST(budgets, crash_a_transfer_to_a_pe_is_refused_where_it_is_written) {
    // Used to SIGSEGV in pe::timing::cycles (a pe holds no data, so a transfer to it had no work).
    const std::string g = write_temp(
        "tessel_to_pe.yaml",
        "program: pe\nsteps:\n  - {id: a, transfer: {from: \"tile[0,0]\", to: \"tile[3,0].pe\", bytes: 64KiB}}\n");
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -g " + g,
        "tessel_to_pe.yaml:3:47: to: 'tile[3,0].pe' is a pe, which holds no data; a transfer moves data between "
        "memories (a tile, its sram, an hbm) or network ports");
}

TEST(budgets, hang_and_runaway_memory_are_refused_before_they_start) {
    // 4 B of SRAM: the mesh mapper halved its blocks forever. Half of it (resident_fraction 0.5) is 2 B, less
    // than one 4-byte fp32 accumulator.
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -w gemm --set tile.sram.capacity=4B",
        "mesh mapper: op 'c' cannot fit even one fp32 accumulator in a tile's working SRAM (2 B of 4 B with "
        "mapper.resident_fraction 0.5); give the tiles more SRAM (tile.sram.capacity)");
    // 64 B: 4096 sub-blocks x 512 K chunks (kc = 1 of K = 512) on 4 x 4 tiles, 3 steps each:
    // 16 x 4096 x 512 x 3 = 100,663,296 steps, over the 2e7 budget (it grew past 12 GB).
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -w gemm --set tile.sram.capacity=64B",
        "mesh mapper: op 'c' in 4096 sub-blocks x 512 K chunks on 16 tiles needs 1.007e+08 steps, over the limit "
        "of 2e+07 (--limit steps=N raises it)");
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -w gemm --set hbm.channels=100000000",
                        "must be at most 4096, got '100000000'");
    // 1e15 bytes at the mesh's fastest link, 32 B/cycle at 1 GHz = 32 GB/s: 1e15 / 3.2e10 = 31,250 s > 3600 s.
    const std::string g =
        write_temp("tessel_pb.yaml",
                   "program: big\nsteps:\n  - {id: a, transfer: {from: hbm, to: \"tile[0,0]\", bytes: 1e15B}}\n");
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -g " + g,
        "program 'big': step 0 'a' moves 1 PB, at least 3.125e+04 s of simulated time at the fastest link "
        "bandwidth of any network, 32 GB/s; needs 3.125e+04 simulated seconds, over the limit of 3600 "
        "(--limit sim_seconds=N raises it)");
    // Two loops of 10^7 each: 10^14 steps, refused before either loop is built.
    const std::string f = write_temp(
        "tessel_for.yaml",
        "program: f\nsteps:\n  - for: {i: 0..9999999, j: 0..9999999}\n    id: \"d{i}_{j}\"\n    delay: 1ns\n");
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -g " + f,
        "tessel_for.yaml:3:10: for: the loops make 1e+14 steps; the program needs 1e+14 steps, over the limit of "
        "2e+07 (--limit steps=N raises it)");
    // An emitted start of 1e23 ticks does not fit 64 bits: the reader refuses it at its line (it used to leave the
    // step waiting forever and exit 1; then it was clamped to 2^64 - 1 fs and refused by the sim_seconds budget).
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -g tests/corpus/program/emitted_huge_start.yaml",
                        "emitted_huge_start.yaml:9:1: emitted.steps: start 99999999999999999999999 is out of range");
    // A start that fits 64 bits but not the budget: 2^64 - 1 fs = 18,447 s, past the 3600 s budget.
    const std::string late = tessel::test::write_temp(
        "tessel_late_start.yaml",
        "program: e\nemitted:\n  ops: [\"x\"]\n  places: [\"tile[0,0]\"]\n  works: |\n    1 0 0 0 0 fp16 gemm 1 1 1 1\n"
        "  steps: |\n    compute 0 0 0 0 0 18446744073709551615 -\n");
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -g " + late,
        "program 'e': step 0 (compute of op 'x') starts at 1.845e+04 s; needs 1.845e+04 simulated seconds");
}

TEST(budgets, a_limit_can_be_raised_deliberately) {
    // The 64 B SRAM mapping above needs 1.007e8 steps; with the limit lowered the same message names the new one.
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -w gemm --set tile.sram.capacity=64B --limit steps=1e6",
                        "over the limit of 1e+06");
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -w gemm --limit stepz=4",
        "--limit stepz=4: no such limit (did you mean 'steps'?); limits: modules, ops, steps, packets, sim_seconds");
    // gemm on mesh4x4 maps to 400 steps (tessel run prints it): a budget of 399 refuses it, 400 runs it.
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -w gemm --limit steps=399",
                        "needs 400 steps or more, over the limit of 399");
    EXPECT_EQ(run_tessel("run -q -p mesh4x4 -w gemm --limit steps=400").code, 0);
}

TEST(budgets, a_system_plan_over_the_steps_budget_is_refused_before_its_program_is_built) {
    // The system mapper tallies the steps each mapped pass will cost in every pipeline item that runs it before
    // the program is built (a GroqRack plan used to take 15 s to reach the 2e7 budget). That tally is a lower
    // bound: the plan below runs in 629 steps, and refused at a budget of 100 it must name more than 100 steps and
    // no more than 629 -- and not 101, which is what refusing while building (at the 101st step) would say.
    const std::string plan =
        "-p platforms/systems/dgx_a100.yaml --set nodes=1 -w gpt2 --set workload.layers=2 "
        "--set workload.batch=8 --set workload.training=adam --set parallel.dp=2 --set parallel.tp=2 "
        "--set parallel.pp=2 --set parallel.microbatch=1";
    const auto ran = run_tessel("run " + plan);
    ASSERT_EQ(ran.code, 0) << ran.out;
    ASSERT_NE(ran.out.find("(629 steps,"), std::string::npos) << ran.out;
    const auto refused = run_tessel("run -q " + plan + " --limit steps=100");
    EXPECT_EQ(refused.code, 2) << refused.out;
    const std::string head = "program 'gpt2' needs ";
    const size_t at = refused.out.find(head);
    ASSERT_NE(at, std::string::npos) << refused.out;
    const double needs = std::stod(refused.out.substr(at + head.size()));
    EXPECT_GT(needs, 100);
    EXPECT_NE(needs, 101);
    EXPECT_LE(needs, 629);
    EXPECT_NE(refused.out.find(" steps or more, over the limit of 100 (--limit steps=N raises it)"), std::string::npos)
        << refused.out;
}

TEST(budgets, a_system_plan_far_over_the_steps_budget_is_refused_while_its_first_passes_are_mapped) {
    // A 13B GPT trained on an IPU-POD64 at tp 8, pp 8 needs about 6e10 steps in the IPU's fine form (fixed here:
    // left to itself the system mapper turns to the coarse form, which runs it). The budget used to be checked once
    // every chunk was mapped: 43 s and 5.2 GB of memory before the refusal. The tally now follows the mapped
    // segments and stops at the first that passes the limit (0.3 s, 69 MB when measured). The bounds are the
    // promise of docs/reliability.md (2 s, 500 MB), widened under the sanitizers (3 to 5 times slower, a 256 MB
    // quarantine): still far below what checking at the end cost.
    const auto cost = run_tessel_measured(
        "run -q -p platforms/systems/ipu_pod64.yaml -w gpt2 --set workload.hidden=5120 --set workload.heads=40 "
        "--set workload.layers=40 --set workload.seq=2048 --set workload.context=2048 --set workload.batch=256 "
        "--set workload.training=adam --set parallel.tp=8 --set parallel.pp=8 --set ipu.mapper.representation=fine");
    EXPECT_EQ(cost.result.code, 2) << cost.result.out;
    EXPECT_NE(cost.result.out.find("program 'gpt2' needs "), std::string::npos) << cost.result.out;
    EXPECT_NE(cost.result.out.find(" steps or more, over the limit of 2e+07 (--limit steps=N raises it) (about "),
              std::string::npos)
        << cost.result.out;
    EXPECT_NE(cost.result.out.find(" for the whole iteration"), std::string::npos) << cost.result.out;
    EXPECT_LT(cost.peak_rss_mb, under_sanitizers ? 1024 : 500) << cost.result.out;
    EXPECT_LT(cost.wall_s, under_sanitizers ? 10 : 2) << cost.result.out;
}

TEST(budgets, a_system_plan_over_the_steps_budget_in_the_chips_fine_form_runs_in_their_coarse_form) {
    // Four IPUs training a small 2-layer GPT: its fine form needs 3.86e6 steps, over a budget of 1e6, so the
    // system mapper maps it again in the IPU's coarse form (586 steps, within 1% of the fine form's time) and says
    // so; with the fine form fixed by the user it is refused.
    const std::string plan =
        "-p platforms/systems/ipu_pod16.yaml --set machines=1 -w gpt2 --set workload.layers=2 --set workload.seq=64 "
        "--set workload.vocab=1024 --set workload.hidden=256 --set workload.heads=4 --set workload.batch=4 "
        "--set workload.training=adam --set parallel.dp=2 --set parallel.pp=2 --set parallel.microbatch=1 "
        "--limit steps=1e6";
    const auto coarse = run_tessel("run " + plan);
    EXPECT_EQ(coarse.code, 0) << coarse.out;
    EXPECT_NE(coarse.out.find("coarse chip programs: the fine form would need about "), std::string::npos)
        << coarse.out;
    EXPECT_NE(coarse.out.find(" steps, over the steps budget of 1e+06 (--limit steps=N raises it; "
                              "ipu.mapper.representation=fine forces the fine form)"),
              std::string::npos)
        << coarse.out;
    EXPECT_TESSEL_ERROR("run -q " + plan + " --set ipu.mapper.representation=fine", "program 'gpt2' needs ");
    EXPECT_TESSEL_ERROR("run -q " + plan + " --set ipu.mapper.representation=fine",
                        " steps or more, over the limit of 1e+06 (--limit steps=N raises it)");
}

TEST(budgets, an_rdu_system_whose_chip_programs_pass_the_steps_limit_runs_them_in_gangs) {
    // Two SN40L sockets training a small GPT layer: a chip's piece passes a limit of 6e4 steps while it is built,
    // so the system mapper maps it again in the RDU's coarse form in gangs (53,009 steps in all, 6% slower than
    // the 591,579 of the fine form) and says the fine form needs more than the limit.
    const std::string plan =
        "-p platforms/systems/sn40l_node.yaml --set sockets=2 -w gpt2 --set workload.layers=1 --set workload.seq=256 "
        "--set workload.vocab=1024 --set workload.hidden=512 --set workload.heads=8 --set workload.batch=4 "
        "--set workload.training=adam --set parallel.dp=2 --limit steps=6e4";
    const auto coarse = run_tessel("run " + plan);
    EXPECT_EQ(coarse.code, 0) << coarse.out;
    EXPECT_NE(coarse.out.find("coarse chip programs: the fine form would need more than 6e+04 steps, over the steps "
                              "budget of 6e+04 (--limit steps=N raises it; rdu.mapper.representation=fine forces "
                              "the fine form)"),
              std::string::npos)
        << coarse.out;
    EXPECT_TESSEL_ERROR("run -q " + plan + " --set rdu.mapper.representation=fine",
                        " steps or more, over the limit of 6e+04 (--limit steps=N raises it)");
    // Under 5e4 the passes' own steps still fit in gangs, but the iteration they join into (with its collectives
    // and pipeline sends) does not: refused as it is joined, where it used to run its 53,009 steps.
    std::string tight = plan;
    tight.replace(tight.find("steps=6e4"), 9, "steps=5e4");
    EXPECT_TESSEL_ERROR("run -q " + tight,
                        "program 'gpt2' needs 5.301e+04 steps or more, over the limit of 5e+04 (--limit steps=N raises "
                        "it) in the chip mapper's coarse form (the fine form: more than 5e+04)");
}

TEST(budgets, a_weight_streaming_iteration_is_refused_by_its_pass_times_its_copies_before_they_are_copied) {
    // A CS-2 cluster runs 4 microbatches of one sequence, each a copy of the wafer's pass (1.112e5 steps): 4.447e5
    // in all, known once the pass is mapped. (A 7B GPT on four CS-2s, 128 microbatches of a 1.3e7-step pass, was
    // refused only when the copies passed 2e7: "2.6e+07 or more" after 38 s and 2.9 GB; now 1.664e9, in 16 s.)
    EXPECT_TESSEL_ERROR(
        "run -q -p platforms/systems/cs2_cluster.yaml --set systems=2 --set parallel.dp=2 --set parallel.microbatch=1 "
        "-w gpt2 --set workload.training=adam --set workload.layers=1 --set workload.hidden=256 --set workload.heads=4 "
        "--set workload.seq=128 --set workload.vocab=1024 --set workload.batch=8 --limit steps=3e5",
        "program 'gpt2' needs 4.447e+05 steps or more, over the limit of 3e+05 (--limit steps=N raises it) (4 "
        "microbatches x 1 simulated chip, each a pass of 1.112e+05 steps); a weight-streaming iteration is not mapped "
        "again in a coarser form");
}

TEST(budgets, internal_errors_became_input_errors) {
    // A workload generator asked for 10^8 layers used to end in bad_alloc; the graph budget stops it, up front
    // at the parameter for generators, and as the graph grows for everything else.
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -w llama --set workload.layers=100000000",
        "--set workload.layers: workload parameter 'layers' = '100000000': needs 1e+09 ops or more, over the "
        "limit of 5e+05 (--limit ops=N raises it); use fewer");
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -w llama --set workload.layers=2 --limit ops=50",
        "workload graph 'llama' needs 51 tensors or more, over the limit of 50 (--limit ops=N raises it)");
    EXPECT_TESSEL_ERROR("run -q -p /dev/zero -w gemm",
                        "YAML file '/dev/zero' is not a plain file (a device, pipe or socket)");
}

TEST(budgets, silently_wrong_inputs_are_refused) {
    // m = n = k = 2^32: the output has 2^64 elements, which wrapped to 0 parameters and 0 bytes.
    EXPECT_TESSEL_ERROR(
        "graph info gemm --set m=4294967296 --set n=4294967296 --set k=4294967296",
        "gemm.yaml:13:5: op 'c' (matmul): output 'c': shape [4294967296, 4294967296] has more than 2^53 "
        "(9007199254740992) elements, more than tessel can count exactly");
    // A 2^32 x 512 x 512 GEMM fits: 2^32 x 512 x 512 = 2^50 MACs = 1.126 P.
    const auto ok = run_tessel("graph info gemm --set m=4294967296");
    EXPECT_EQ(ok.code, 0) << ok.out;
    EXPECT_NE(ok.out.find("FLOPs:       2.252 P (1.126 P MACs, 2 FLOPs each)"), std::string::npos) << ok.out;
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -w mlp --set workload.batch=0",
                        "mlp.yaml:19:5: workload 'mlp': input 'x' has shape 0x1024, with no elements (is a size "
                        "parameter such as batch 0?)");
    const std::string empty =
        write_temp("tessel_noops.yaml", "workload: empty\ntensors:\n  x: {shape: [4], role: input}\nops: []\n");
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -w " + empty, "workload 'empty' has no ops: there is nothing to simulate");
    const std::string on_hbm = write_temp(
        "tessel_on_hbm.yaml", "program: h\nsteps:\n  - {id: a, compute: {on: hbm, macs: 1000, dtype: fp16}}\n");
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -g " + on_hbm,
                        "tessel_on_hbm.yaml:3:27: on: 'hbm' is a hbm, which does not compute; a compute step runs on a "
                        "processing element");
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -w mlp --set clock=1e30Hz",
        "clock: 1e+18 THz is above 10 THz, the fastest clock tessel simulates (a cycle must span at least 100 fs)");
    const std::string unit_dim = write_temp(
        "tessel_unit_dim.yaml",
        "workload: u\ntensors:\n  x: {shape: [\"64KiB\", 4], role: input}\n  w: {shape: [4, 4], role: weight}\n"
        "ops:\n  - {name: y, op: matmul, inputs: [x, w]}\n");
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -w " + unit_dim,
        "tessel_unit_dim.yaml:3:15: tensor 'x' shape: '64KiB' has a unit; expected a plain whole number");
    // One key given twice with two values would make the result depend on the order of the flags.
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -w gemm --set workload.k=2 --set workload.k=3",
                        "--set workload.k is given twice, as '2' and as '3'; give it once");
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -w gemm --set hbm.capacity=0B", "capacity");
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -w gemm --set hbm.capacity=1e30B",
                        "'1e30B' is more than 2^53 bytes (8 PiB), the largest size tessel handles exactly");
}

TEST(budgets, misleading_messages_now_say_what_is_wrong) {
    const std::string quote =
        write_temp("tessel_quote.yaml",
                   "platform: q\nclock: 1GHz\ncomponents:\n  hbm:\n    kind: hbm\n    preset: \"hbm2e_stack\n"
                   "    params:\n      channels: 4\n  x:\n    kind: barrier\ndescription: the end\"\n");
    EXPECT_TESSEL_ERROR(
        "run -q -p " + quote + " -w gemm",
        "tessel_quote.yaml:6:13: a double-quoted value opens here and runs on to line 7, swallowing 'params:'; is "
        "its closing \" missing?");
    const std::string cycle =
        write_temp("tessel_cycle.yaml",
                   "workload: cyc\ntensors:\n  x: {shape: [4], role: input}\nops:\n"
                   "  - {name: a, op: add, inputs: [x, c]}\n  - {name: b, op: relu, inputs: [a]}\n"
                   "  - {name: c, op: relu, inputs: [b]}\n");
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -w " + cycle,
                        "tessel_cycle.yaml:5:5: workload graph 'cyc' has a cycle: a -> b -> c -> a");
    // A program's cycle, along the data flow from the step listed first, each step once (it printed
    // "step 1 'b' -> step 2 'c' -> step 0 'a' -> step 0 'a'"), at that step when the program is YAML.
    const std::string steps = write_temp("tessel_steps_cycle.yaml",
                                         "program: p\nsteps:\n  - {id: a, delay: 1us, after: [c]}\n"
                                         "  - {id: b, delay: 1us, after: [a]}\n  - {id: c, delay: 1us, after: [b]}\n");
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -g " + steps,
        "tessel_steps_cycle.yaml:3:5: program 'p' can never finish: its steps wait on each other in a cycle: "
        "step 0 'a' -> step 1 'b' -> step 2 'c' -> step 0 'a' (3 steps are blocked)\n");
    // An emitted program's dependencies are indices, left to the executor's check (programs from mappers).
    const std::string emitted =
        write_temp("tessel_emitted_cycle.yaml",
                   "program: e\nemitted:\n  ops: [a, b]\n  places: [\"tile[0,0]\"]\n  works: |\n"
                   "  labels: |\n    a\n    b\n  steps: |\n    delay 0 1000 0 after 1\n"
                   "    delay 1 1000 0 after 0\n");
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -g " + emitted,
                        "tessel: error: program 'e' can never finish: its steps wait on each other in a cycle: "
                        "step 0 'a' -> step 1 'b' -> step 0 'a' (2 steps are blocked)\n");
    EXPECT_TESSEL_ERROR(
        "run -q -p mesh4x4 -w mlp --set workload.batch=1e30",
        "tensor 'x' shape: 'batch' = 1e+30 is more than 2^53 (9007199254740992), the largest size tessel handles");
    EXPECT_TESSEL_ERROR("runn", "unknown command 'runn' (did you mean 'run'?)");
    EXPECT_TESSEL_ERROR("sweep sweeps/mesh4x4_100.yaml --jobs 0 --dry-run",
                        "--jobs: expected a whole number from 1 to 1000000, got '0'");
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4",
                        "nothing to run: give --workload (a workload to map) or --program (a program to run)");
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -w gemm --trace-from -5us",
                        "--trace-from: a time from the start of the run cannot be negative, got '-5us'");
    EXPECT_TESSEL_ERROR("run -q -p mesh4x4 -w gemm --trace-to 1e30s",
                        "--trace-to: simulated time 1e+30 s exceeds what tessel can represent");
}

TEST(budgets, sweep_specs_are_checked_for_names_and_timeouts) {
    const std::string base = "platform: mesh4x4\nworkload: gemm\naxes:\n  workload.m: [64]\n";
    const std::string slash = write_temp("tessel_sweep_slash.yaml", "sweep: ../../etc/x\n" + base);
    EXPECT_TESSEL_ERROR("sweep --dry-run " + slash,
                        "tessel_sweep_slash.yaml:1:8: sweep: '../../etc/x' is not a plain name");
    const std::string neg = write_temp("tessel_sweep_neg.yaml", "sweep: s\n" + base + "timeout: -5s\n");
    EXPECT_TESSEL_ERROR("sweep --dry-run " + neg, "timeout: expected a duration of 0 (no limit) or more, got '-5s'");
    const std::string huge = write_temp("tessel_sweep_huge.yaml", "sweep: s\n" + base + "timeout: 1e300s\n");
    EXPECT_TESSEL_ERROR("sweep --dry-run " + huge,
                        "timeout: '1e300s' is more than a week (604800 s); use 0 for no limit");
    EXPECT_TESSEL_ERROR("sweep sweeps/mesh4x4_100.yaml --out README.md --dry-run",
                        "results folder 'README.md' is a file, not a folder; name another with --out");
}

}  // namespace
