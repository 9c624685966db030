// Requests: Poisson arrivals are reproducible and have the asked rate; a closed loop leaves later arrivals to the
// server; a trace is read strictly, with file:line on a bad line; bad settings name their key.
#include <gtest/gtest.h>

#include "engine/serve/arrivals.h"
#include "models/core/error.h"
#include "tests/support/cli.h"

using namespace tessel::serve;

namespace {

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const tessel::input_error& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(arrivals, poisson_arrivals_are_reproducible_at_the_rate_asked) {
    serve_options o = parse_serve_options({{"rate", "5"}, {"requests", "4000"}});
    const auto a = make_requests(o), b = make_requests(o);
    ASSERT_EQ(a.size(), 4000u);
    EXPECT_EQ(a.front().arrival_s, 0);
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i].arrival_s, b[i].arrival_s);
    // 3999 gaps of mean 0.2 s: their mean is within 5% (about 3 standard errors of 1.6%).
    EXPECT_NEAR(a.back().arrival_s / 3999, 0.2, 0.01);
    EXPECT_EQ(a[7].prompt_tokens, 512);  // the defaults
    EXPECT_EQ(a[7].output_tokens, 128);
    o.seed = 2;
    EXPECT_NE(make_requests(o)[1].arrival_s, a[1].arrival_s);
}

TEST(arrivals, a_closed_loop_sends_the_first_requests_at_once) {
    const auto r = make_requests(parse_serve_options({{"concurrency", "3"}, {"requests", "5"}}));
    EXPECT_EQ(r[2].arrival_s, 0);
    EXPECT_EQ(r[3].arrival_s, -1);
}

TEST(arrivals, a_trace_is_read_with_its_lengths) {
    const std::string path = tessel::test::write_temp(
        "tessel_trace_ok.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,2000,1\n# a comment\n1.25,7,3\n");
    const auto r = make_requests(parse_serve_options({{"trace", path}}));
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[1].prompt_tokens, 2000);
    EXPECT_EQ(r[2].arrival_s, 1.25);
    EXPECT_EQ(r[2].output_tokens, 3);
}

TEST(arrivals, a_bad_trace_line_is_named_by_file_and_line) {
    const std::string bad =
        tessel::test::write_temp("tessel_trace_bad.csv", "arrival_s,prompt_tokens,output_tokens\n0,100,10\n0.5,-3,1\n");
    EXPECT_NE(error_of([&] { read_trace(bad); }).find("tessel_trace_bad.csv:3:1: prompt_tokens"), std::string::npos)
        << error_of([&] { read_trace(bad); });
    const std::string back =
        tessel::test::write_temp("tessel_trace_back.csv", "arrival_s,prompt_tokens,output_tokens\n1,100,10\n0.5,3,1\n");
    EXPECT_NE(error_of([&] { read_trace(back); }).find(":3:1: arrival_s: 0.5 is before"), std::string::npos);
    const std::string header = tessel::test::write_temp("tessel_trace_header.csv", "t,p,o\n1,2,3\n");
    EXPECT_NE(error_of([&] { read_trace(header); }).find(":1:1: serve.trace: expected the header"), std::string::npos);
    EXPECT_NE(error_of([&] { read_trace("/dev/zero"); }).find("serve.trace '/dev/zero' is not a plain file"),
              std::string::npos);
    EXPECT_NE(error_of([&] { read_trace("/nonexistent/t.csv"); }).find("cannot open '/nonexistent/t.csv'"),
              std::string::npos);
}

TEST(arrivals, bad_settings_name_their_key) {
    EXPECT_NE(error_of([] {
                  parse_serve_options({{"rat", "5"}});
              }).find("serve.rat: no such serving setting"),
              std::string::npos);
    EXPECT_NE(error_of([] { parse_serve_options({{"rat", "5"}}); }).find("rate"), std::string::npos);
    EXPECT_NE(error_of([] {
                  parse_serve_options({{"rate", "nan"}});
              }).find("serve.rate: expected a number"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  parse_serve_options({{"max_batch", "0"}});
              }).find("serve.max_batch: 0 is out of range"),
              std::string::npos);
    EXPECT_NE(error_of([] { parse_serve_options({{"slo_ttft", "5GB"}}); }).find("serve.slo_ttft"), std::string::npos);
    EXPECT_NE(error_of([] {
                  parse_serve_options({{"scheduler", "fifo"}});
              }).find("not a scheduler"),
              std::string::npos);
    EXPECT_NE(error_of([] {
                  parse_serve_options({{"requests", "1000001"}});
              }).find("more than 1000000"),
              std::string::npos);
    EXPECT_DOUBLE_EQ(parse_serve_options({{"slo_tpot", "50ms"}}).slo_tpot_s, 0.05);
}
