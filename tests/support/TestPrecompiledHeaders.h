// Precompiled for the test binary only (see tests/CMakeLists.txt): the project's shared set plus Catch, which
// every test file includes. Test files still include what they use.
#pragma once

#include "PrecompiledHeaders.h"

#include <catch2/catch.hpp>
