// A GPT small enough that the IPU's and RDU's chip mappers map its passes in seconds: the model of the slow tests
// that hold a fast path (a window of microbatches, a sample of layers) to the whole run.
#pragma once

#include <string>

namespace tessel::test {

inline const std::string k_tiny_gpt =
    "-w gpt2 --set workload.hidden=128 --set workload.heads=2 --set workload.seq=64 --set workload.vocab=512 "
    "--set workload.training=adam ";

}  // namespace tessel::test
