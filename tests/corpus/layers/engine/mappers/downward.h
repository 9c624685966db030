// A fixture for cmake/check_layers.cmake: mappers may include the layers below them and their own.
#pragma once
#include "engine/mappers/mapper.h"
#include "engine/program/program.h"
