// Numeric data types of tensors and of compute units' rate tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessel {

enum class dtype : std::uint8_t { fp32, tf32, fp16, bf16, fp8, int8, int4, int32, int64, boolean };

constexpr int dtype_count = 10;

/// Bits per element (int4 is 4, so sizes are computed in bits then rounded up to bytes).
int dtype_bits(dtype t);
/// Bytes for n elements of type t, rounded up to whole bytes.
std::uint64_t dtype_bytes(dtype t, std::uint64_t elements);
const char* dtype_name(dtype t);
/// Accepts the names above plus common aliases (float32, float16, bfloat16, half, int, bool).
std::optional<dtype> parse_dtype(std::string_view name);
/// "fp32, tf32, fp16, ..." for error messages.
std::string dtype_list();

}  // namespace tessel
