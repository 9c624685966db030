// A fraction printed as a percentage, as the mappers' notes and the explainers' reports print shares: one place,
// so the system plan's note and the system report's per-chip line cannot drift apart.
#pragma once

#include <string>

#include "models/core/units.h"

namespace tessel {

/// "12.5%" for 0.125: to 3 significant digits.
inline std::string fmt_percent(double f) { return format_number(100 * f, 3) + "%"; }

}  // namespace tessel
