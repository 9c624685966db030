// Where requests come from: a Poisson process, a closed loop of users, or a trace file.
#pragma once

#include <string>
#include <vector>

#include "engine/serve/request.h"
#include "engine/serve/serve_options.h"

namespace tessel::serve {

/// The requests to serve, in arrival order. Closed loop (serve.concurrency): arrival times are set by the
/// server as users' earlier requests finish; here they are 0 for the first `concurrency` and -1 for the rest.
std::vector<request> make_requests(const serve_options& o);

/// Reads a trace: a header line, then `arrival_s,prompt_tokens,output_tokens` per line, arrivals not decreasing.
/// Errors name file:line.
std::vector<request> read_trace(const std::string& path);

}  // namespace tessel::serve
