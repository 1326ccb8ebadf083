#pragma once

#include <string>
#include <string_view>

namespace switchboard::adapters {

// `text` percent-encoded (RFC 3986): the unreserved characters (ASCII letters, digits, "-", "_", ".", "~") and
// those in `also_kept` stay as they are; every other byte becomes "%XX" with upper-case hex digits. Grok names
// its per-directory history folders so, and OpenCode takes a directory as a query value so (keeping "/").
std::string percent_encoded(std::string_view text, std::string_view also_kept = {});

}  // namespace switchboard::adapters
