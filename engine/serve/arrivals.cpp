#include "engine/serve/arrivals.h"

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "models/core/error.h"
#include "models/core/limits.h"

namespace tessel::serve {

namespace {

// A trace longer than this is refused: it would take longer to serve than any question needs (and an endless
// stream, such as a character device named as the trace, stops here).
constexpr std::size_t k_max_trace_requests = 1'000'000;

/// Uniform in (0, 1) from 53 bits of a 64-bit Mersenne Twister: the same sequence on every platform (the standard
/// library's distributions are not specified bit for bit).
double uniform_open(std::mt19937_64& rng) {
    return (static_cast<double>(rng() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

std::int64_t trace_count(const std::string& cell, const std::string& what, const source_location& at) {
    std::size_t used = 0;
    long long n = -1;
    try {
        n = std::stoll(cell, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != cell.size() || n < 1 || n > (1LL << 30))
        throw input_error(what + ": expected a whole number from 1 to 2^30, got '" + cell + "'", at);
    return n;
}

}  // namespace

std::vector<request> read_trace(const std::string& path) {
    require_input_file(path, "serve.trace");
    std::ifstream in(path);
    if (!in) throw input_error("serve.trace: cannot open '" + path + "'");
    std::vector<request> out;
    std::string line;
    int number = 0;
    bool header = true;
    while (std::getline(in, line)) {
        ++number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line[0] == '#') continue;
        const source_location at{path, number, 1};
        if (header) {
            if (line != "arrival_s,prompt_tokens,output_tokens")
                throw input_error(
                    "serve.trace: expected the header 'arrival_s,prompt_tokens,output_tokens', got '" + line + "'", at);
            header = false;
            continue;
        }
        std::vector<std::string> cells;
        std::stringstream ss(line);
        std::string cell;
        while (std::getline(ss, cell, ',')) cells.push_back(cell);
        if (cells.size() != 3)
            throw input_error("serve.trace: expected 3 columns (arrival_s,prompt_tokens,output_tokens), got " +
                                  std::to_string(cells.size()),
                              at);
        request r;
        r.id = static_cast<int>(out.size());
        std::size_t used = 0;
        try {
            r.arrival_s = std::stod(cells[0], &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != cells[0].size() || !std::isfinite(r.arrival_s) || r.arrival_s < 0)
            throw input_error("arrival_s: expected seconds (0 or more), got '" + cells[0] + "'", at);
        if (!out.empty() && r.arrival_s < out.back().arrival_s)
            throw input_error("arrival_s: " + cells[0] + " is before the line above's; a trace is in arrival order",
                              at);
        r.prompt_tokens = trace_count(cells[1], "prompt_tokens", at);
        r.output_tokens = trace_count(cells[2], "output_tokens", at);
        out.push_back(r);
        if (out.size() > k_max_trace_requests)
            throw input_error("serve.trace: more than " + std::to_string(k_max_trace_requests) + " requests", at);
    }
    if (out.empty()) throw input_error("serve.trace: '" + path + "' has no requests");
    return out;
}

std::vector<request> make_requests(const serve_options& o) {
    if (!o.trace.empty()) return read_trace(o.trace);
    std::vector<request> out(static_cast<std::size_t>(o.requests));
    std::mt19937_64 rng(o.seed);
    double t = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
        request& r = out[i];
        r.id = static_cast<int>(i);
        r.prompt_tokens = o.prompt_tokens;
        r.output_tokens = o.output_tokens;
        if (o.concurrency > 0) {
            r.arrival_s = static_cast<std::int64_t>(i) < o.concurrency ? 0 : -1;
        } else {
            r.arrival_s = t;  // the first request at 0, then exponential gaps of mean 1/rate
            t += -std::log(uniform_open(rng)) / o.rate;
        }
    }
    return out;
}

}  // namespace tessel::serve
