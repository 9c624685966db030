#include "models/core/dtype.h"

namespace tessel {

int dtype_bits(dtype t) {
    switch (t) {
        case dtype::fp32:
            return 32;
        case dtype::tf32:
            return 32;  // stored as fp32, computed with a 10-bit mantissa
        case dtype::fp16:
            return 16;
        case dtype::bf16:
            return 16;
        case dtype::fp8:
            return 8;
        case dtype::int8:
            return 8;
        case dtype::int4:
            return 4;
        case dtype::int32:
            return 32;
        case dtype::int64:
            return 64;
        case dtype::boolean:
            return 8;
    }
    return 32;
}

std::uint64_t dtype_bytes(dtype t, std::uint64_t elements) {
    return (elements * static_cast<std::uint64_t>(dtype_bits(t)) + 7) / 8;
}

const char* dtype_name(dtype t) {
    switch (t) {
        case dtype::fp32:
            return "fp32";
        case dtype::tf32:
            return "tf32";
        case dtype::fp16:
            return "fp16";
        case dtype::bf16:
            return "bf16";
        case dtype::fp8:
            return "fp8";
        case dtype::int8:
            return "int8";
        case dtype::int4:
            return "int4";
        case dtype::int32:
            return "int32";
        case dtype::int64:
            return "int64";
        case dtype::boolean:
            return "bool";
    }
    return "?";
}

std::optional<dtype> parse_dtype(std::string_view n) {
    for (int i = 0; i < dtype_count; ++i)
        if (n == dtype_name(static_cast<dtype>(i))) return static_cast<dtype>(i);
    if (n == "float32" || n == "float" || n == "f32") return dtype::fp32;
    if (n == "float16" || n == "half" || n == "f16") return dtype::fp16;
    if (n == "bfloat16") return dtype::bf16;
    if (n == "float8" || n == "fp8_e4m3" || n == "fp8_e5m2") return dtype::fp8;
    if (n == "int" || n == "long") return dtype::int64;
    if (n == "boolean") return dtype::boolean;
    return std::nullopt;
}

std::string dtype_list() {
    std::string s;
    for (int i = 0; i < dtype_count; ++i) {
        if (i) s += ", ";
        s += dtype_name(static_cast<dtype>(i));
    }
    return s;
}

}  // namespace tessel
