// What a test expects of bad input: the message of the input_error a call throws.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "models/core/error.h"

namespace tessel::test {

/// The message of the input_error `f` throws; fails the test when it throws nothing.
template <typename F>
std::string error_of(F&& f) {
    try {
        f();
    } catch (const input_error& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected an input_error";
    return {};
}

}  // namespace tessel::test
