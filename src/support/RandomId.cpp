#include "switchboard/support/RandomId.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace switchboard {

std::string random_id(std::string_view prefix, std::size_t bytes) {
  std::vector<std::uint8_t> raw(bytes);
  std::size_t filled = 0;
  while (filled < bytes) {
    const ssize_t n = getrandom(raw.data() + filled, bytes - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      // getrandom only fails on a kernel without it (pre-3.17); there is no safe fallback for tokens.
      throw std::runtime_error("getrandom failed");
    }
    filled += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(prefix);
  id.reserve(prefix.size() + bytes * 2);
  for (const auto b : raw) {
    id.push_back(kHex[b >> 4]);
    id.push_back(kHex[b & 0xF]);
  }
  return id;
}

std::string random_uuid() {
  std::string hex = random_id("", 16);
  static constexpr std::string_view kHex = "0123456789abcdef";
  hex[12] = '4';  // the version: random
  // The variant (RFC 9562): the top two bits of this nibble are 10, the other two stay random.
  hex[16] = kHex[8 | (kHex.find(hex[16]) & 3)];
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) + "-" + hex.substr(20);
}

}  // namespace switchboard
