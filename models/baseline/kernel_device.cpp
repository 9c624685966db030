#include "models/baseline/kernel_device.h"

#include <cmath>
#include <cstdio>

namespace tessel {

std::string format_tunable(const tunable& t, double v) {
    char buf[64];
    if (t.unit == "s") {
        // Nanoseconds with enough digits to reproduce the fit.
        std::snprintf(buf, sizeof buf, "%.4gns", v * 1e9);
        return buf;
    }
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return buf;
}

}  // namespace tessel
