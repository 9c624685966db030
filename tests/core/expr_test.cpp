// The expression language used by connections, program loops, ${...} and sweep filters.
#include <gtest/gtest.h>

#include "models/core/expr.h"

using namespace tessel;

namespace {
double eval(const std::string& text, std::map<std::string, double> vars = {}) {
    return expression::parse(text).eval_number([&](std::string_view n) -> std::optional<expr_value> {
        const auto it = vars.find(std::string(n));
        if (it == vars.end()) return std::nullopt;
        return it->second;
    });
}
}  // namespace

TEST(expr, arithmetic_precedence_and_functions) {
    EXPECT_DOUBLE_EQ(eval("1 + 2 * 3"), 7);
    EXPECT_DOUBLE_EQ(eval("(1 + 2) * 3"), 9);
    EXPECT_DOUBLE_EQ(eval("2 ** 3 ** 2"), 512);  // right associative
    EXPECT_DOUBLE_EQ(eval("-2 ** 2"), -4);
    EXPECT_DOUBLE_EQ(eval("7 // 2"), 3);
    EXPECT_DOUBLE_EQ(eval("-7 % 3"), 2);  // floored, like Python
    EXPECT_DOUBLE_EQ(eval("max(1, x * 4, 3)", {{"x", 2}}), 8);
    EXPECT_DOUBLE_EQ(eval("log2(1024) + ceil(0.2) + floor(1.8) + abs(-2) + sqrt(16) + pow(2, 5) + round(2.5)"),
                     10 + 1 + 1 + 2 + 4 + 32 + 3);
    EXPECT_DOUBLE_EQ(eval("48KiB / 1KiB"), 48) << "numbers may carry units, in canonical units";
    EXPECT_DOUBLE_EQ(eval("2cycles"), 2);
}

TEST(expr, logic_and_comparisons) {
    EXPECT_DOUBLE_EQ(eval("x > 2 and y <= 3", {{"x", 3}, {"y", 3}}), 1);
    EXPECT_DOUBLE_EQ(eval("not (x == 3) or false", {{"x", 3}}), 0);
    EXPECT_DOUBLE_EQ(eval("x != 3 || y == 1", {{"x", 3}, {"y", 1}}), 1);
    const expression e = expression::parse("platform == \"sn10\" and batch >= 8");
    const auto v = e.eval([](std::string_view n) -> std::optional<expr_value> {
        if (n == "platform") return std::string("sn10");
        if (n == "batch") return 16.0;
        return std::nullopt;
    });
    EXPECT_EQ(std::get<double>(v), 1);
    EXPECT_EQ(e.variables(), (std::vector<std::string>{"platform", "batch"}));
}

TEST(expr, errors_name_the_position) {
    try {
        expression::parse("1 + * 2");
        FAIL();
    } catch (const expr_error& e) {
        EXPECT_EQ(e.offset, 4u);
    }
    try {
        eval("x + 1");
        FAIL();
    } catch (const expr_error& e) {
        EXPECT_NE(std::string(e.what()).find("unknown variable 'x'"), std::string::npos);
        EXPECT_EQ(e.offset, 0u);
    }
    EXPECT_THROW(eval("1 / 0"), expr_error);
    EXPECT_THROW(expression::parse("foo(1)"), expr_error);
    EXPECT_THROW(expression::parse("(1 + 2"), expr_error);
    EXPECT_THROW(expression::parse("max()"), expr_error);
}

TEST(expr, depth_is_bounded_so_no_input_overflows_the_stack) {
    // Found by fuzz/expr_fuzz.cpp: 100,000 nested parentheses overflowed the parser's stack.
    auto message = [](const std::string& text) -> std::string {
        try {
            (void)expression::parse(text);
        } catch (const expr_error& e) {
            return e.what();
        }
        return "parsed";
    };
    EXPECT_EQ(message(std::string(100000, '(') + "1" + std::string(100000, ')')), "expression nested too deeply");
    EXPECT_EQ(message(std::string(100000, '-') + "1"), "expression nested too deeply");
    std::string chain = "1";
    for (int i = 0; i < 100000; ++i) chain += "+1";
    EXPECT_EQ(message(chain), "expression too long: more than 256 operations deep");
    // Anything written by hand stays far inside: 200 levels of parentheses and 255 terms evaluate.
    EXPECT_EQ(eval(std::string(200, '(') + "2" + std::string(200, ')')), 2);
    std::string sum = "1";
    for (int i = 0; i < 254; ++i) sum += " + 1";
    EXPECT_EQ(eval(sum), 255);
}

TEST(expr, a_slash_right_after_a_number_divides) {
    // Issue 16: "1/0" said "unknown unit '/' in '1/'": the number reader took "1/" for a number with a unit. A
    // unit starts with a letter, and its '/' stands between letters ("32B/cycle", "1GB/s").
    EXPECT_DOUBLE_EQ(eval("6/2"), 3);
    EXPECT_DOUBLE_EQ(eval("7//2"), 3);
    EXPECT_DOUBLE_EQ(eval("1e3/4"), 250);
    EXPECT_DOUBLE_EQ(eval("48KiB/2"), 24576);  // 49152 B / 2
    EXPECT_DOUBLE_EQ(eval("32B/cycle"), 32);
    EXPECT_DOUBLE_EQ(eval("32B/cycle/2"), 16);
    EXPECT_DOUBLE_EQ(eval("2GB/s / 1MB/s"), 2000);
    EXPECT_DOUBLE_EQ(eval("6/x", {{"x", 3}}), 2);
    try {
        eval("1/0");
        FAIL() << "expected an error";
    } catch (const expr_error& e) {
        EXPECT_STREQ(e.what(), "division by zero");
    }
    try {
        eval("1GB/S");
        FAIL() << "expected an error";
    } catch (const expr_error& e) {
        EXPECT_NE(std::string(e.what()).find("unknown unit 'GB/S' in '1GB/S' (did you mean 'GB/s'?)"),
                  std::string::npos)
            << e.what();
    }
}
