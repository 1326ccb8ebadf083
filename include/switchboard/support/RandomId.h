#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace switchboard {

// `prefix` followed by `bytes` random bytes from the OS CSPRNG (getrandom), hex-encoded. Used for client ids,
// error reference ids and, later, access tokens; never predictable, never derived from time or pid.
std::string random_id(std::string_view prefix, std::size_t bytes = 8);

// A random (version 4) UUID, lowercase ("xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx"), from the same source: the
// agents take one as the id of a session or a prompt we choose for them.
std::string random_uuid();

}  // namespace switchboard
