// A fixture for cmake/check_layers.cmake: the netlist is the lowest layer, so this include runs up.
#pragma once
#include "engine/program/program.h"
