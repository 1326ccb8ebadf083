#include "http/WireResponse.h"

namespace switchboard::http {

void append_wire_bytes(const boost::beast::http::response<boost::beast::http::string_body>& response, std::string& out) {
  const unsigned version = response.version();
  const unsigned code = response.result_int();
  const auto reason = response.reason();
  const auto& body = response.body();
  std::size_t size = 13 + reason.size() + 2 + 2 + body.size();
  for (const auto& field : response) size += field.name_string().size() + 2 + field.value().size() + 2;
  out.reserve(out.size() + size);

  // "HTTP/X.Y ### reason\r\n", the way Beast's fields writer renders it.
  const char start[13] = {'H', 'T', 'T', 'P', '/', static_cast<char>('0' + version / 10), '.',
                          static_cast<char>('0' + version % 10), ' ', static_cast<char>('0' + code / 100),
                          static_cast<char>('0' + (code / 10) % 10), static_cast<char>('0' + code % 10), ' '};
  out.append(start, sizeof start);
  out.append(reason.data(), reason.size());
  out.append("\r\n");
  for (const auto& field : response) {
    out.append(field.name_string().data(), field.name_string().size());
    out.append(": ");
    out.append(field.value().data(), field.value().size());
    out.append("\r\n");
  }
  out.append("\r\n");
  out.append(body);
}

}  // namespace switchboard::http
