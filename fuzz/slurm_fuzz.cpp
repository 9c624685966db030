// libFuzzer harness: what the Slurm backend reads back. Each input is read as sbatch's, sacct's and squeue's
// output and as a task file (tasks.json) whose tasks a worker picks its points from.
#include "engine/sweep/slurm_files.h"
#include "fuzz/fuzz_common.h"

TESSEL_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tessel;
    fuzz::init_once();
    const std::string text = fuzz::text_of(data, size);
    try {
        (void)sweep::sbatch_job_id(text);
    } catch (const input_error&) {
    }
    (void)sweep::sacct_states(text);
    (void)sweep::squeue_states(text);
    (void)sweep::squeue_active(text);
    try {
        const sweep::task_file t = sweep::read_task_file(fuzz::scratch_file(data, size, ".json"));
        for (long index : {-1L, 0L, 1L, 7L, 1L << 40}) (void)t.task(index);
        (void)sweep::task_file_json(t);
    } catch (const input_error&) {
    }
    return 0;
}
