#include "common/PercentEncoding.h"

namespace switchboard::adapters {
namespace percent_encoding_detail {

// ASCII only: the locale must not decide what a path or a query looks like.
bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '~';
}

}  // namespace percent_encoding_detail

std::string percent_encoded(std::string_view text, std::string_view also_kept) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char byte : text) {
    const auto c = static_cast<unsigned char>(byte);
    if (percent_encoding_detail::unreserved(c) || also_kept.find(byte) != std::string_view::npos) {
      out.push_back(byte);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace switchboard::adapters
