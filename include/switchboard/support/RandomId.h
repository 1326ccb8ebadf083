#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace switchboard {

// `prefix` followed by `bytes` random bytes from the OS CSPRNG (getrandom), hex-encoded. Used for client ids,
// error reference ids and, later, access tokens; never predictable, never derived from time or pid.
std::string random_id(std::string_view prefix, std::size_t bytes = 8);

}  // namespace switchboard
