// A fixture for cmake/check_layers.cmake: the models are below the whole engine.
#pragma once
#include "engine/netlist/platform.h"
