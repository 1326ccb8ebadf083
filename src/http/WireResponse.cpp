#include "http/WireResponse.h"

#include <charconv>

namespace switchboard::http {

namespace {

// "HTTP/X.Y ### reason\r\n", the way Beast's fields writer renders it.
void append_start_line(unsigned version, unsigned code, std::string_view reason, std::string& out) {
  const char start[13] = {'H', 'T', 'T', 'P', '/', static_cast<char>('0' + version / 10), '.',
                          static_cast<char>('0' + version % 10), ' ', static_cast<char>('0' + code / 100),
                          static_cast<char>('0' + (code / 10) % 10), static_cast<char>('0' + code % 10), ' '};
  out.append(start, sizeof start);
  out.append(reason);
  out.append("\r\n");
}

// Beast trims spaces and tabs around every field value it stores.
std::string_view trimmed(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  return value;
}

}  // namespace

void append_plain_response(const PlainResponse& response, std::string& out) {
  const auto reason = boost::beast::http::obsolete_reason(response.status);
  out.reserve(out.size() + 200 + response.body.size());
  append_start_line(response.version, static_cast<unsigned>(response.status), std::string_view(reason.data(), reason.size()), out);
  out.append("Server: switchboard\r\nContent-Type: ");
  out.append(trimmed(response.content_type));
  out.append("\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n");
  if (response.cors_origin) {
    out.append("Access-Control-Allow-Origin: ");
    out.append(trimmed(*response.cors_origin));
    out.append("\r\nVary: Origin\r\n");
  }
  // Beast's keep_alive(): HTTP/1.1 says "close" when the connection ends, HTTP/1.0 "keep-alive" when it does not.
  if (response.version >= 11 && !response.keep_alive) out.append("Connection: close\r\n");
  if (response.version < 11 && response.keep_alive) out.append("Connection: keep-alive\r\n");
  out.append("Content-Length: ");
  char length[24];
  const auto end = std::to_chars(length, length + sizeof length, response.body.size()).ptr;
  out.append(length, end);
  out.append("\r\n\r\n");
  out.append(response.body);
}

void append_wire_bytes(const boost::beast::http::response<boost::beast::http::string_body>& response, std::string& out) {
  const unsigned version = response.version();
  const unsigned code = response.result_int();
  const auto reason = response.reason();
  const auto& body = response.body();
  std::size_t size = 13 + reason.size() + 2 + 2 + body.size();
  for (const auto& field : response) size += field.name_string().size() + 2 + field.value().size() + 2;
  out.reserve(out.size() + size);

  append_start_line(version, code, std::string_view(reason.data(), reason.size()), out);
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
