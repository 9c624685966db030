// libFuzzer harness: the expression language (models/core/expr.h), parsed and evaluated with a few variables
// bound. Errors must be expr_error (parse or evaluation) or input_error.
#include "fuzz/fuzz_common.h"
#include "models/core/expr.h"

TESSEL_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tessel;
    fuzz::init_once();
    const expr_scope scope = [](std::string_view name) -> std::optional<expr_value> {
        if (name == "x") return 3.0;
        if (name == "y") return -0.5;
        if (name == "big") return 1e300;
        if (name == "s") return std::string("mesh");
        return std::nullopt;
    };
    try {
        const expression e = expression::parse(fuzz::text_of(data, size));
        (void)e.variables();
        (void)expr_value_str(e.eval(scope));
    } catch (const expr_error&) {
    } catch (const input_error&) {
    }
    return 0;
}
