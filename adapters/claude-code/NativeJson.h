#pragma once

#include "common/NativeJson.h"

namespace switchboard::adapters::claude {

// Claude's code reads its JSON through the shared non-throwing accessors (adapters/common/NativeJson.h).
namespace native = adapters::native;

}  // namespace switchboard::adapters::claude
