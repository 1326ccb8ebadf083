#include "HttpOracle.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include <nlohmann/json.hpp>

#include "DocumentStandIn.h"
#include "FuzzCheck.h"

namespace switchboard::fuzz {
namespace {

using json = nlohmann::ordered_json;

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowered(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); });
}

bool contains(std::string_view haystack, std::string_view needle) { return haystack.find(needle) != std::string_view::npos; }

bool known_status(unsigned status) {
  switch (status) {
    case 200: case 204: case 400: case 401: case 403: case 404: case 405: case 413: case 415: case 431: return true;
    default: return false;
  }
}

bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return contains("!#$%&'*+-.^_`|~", std::string_view(&c, 1));
}

std::optional<std::uint64_t> parse_decimal(std::string_view text) {
  std::uint64_t value = 0;
  if (text.empty()) return std::nullopt;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool is_rpc_response_object(const json& value) {
  if (!value.is_object()) return false;
  const auto version = value.find("jsonrpc");
  return version != value.end() && version->is_string() && *version == "2.0" && value.contains("id") &&
         (value.contains("result") != value.contains("error"));
}

// After the SSE response head: the retry hint, then whole frames.
void check_sse(std::string_view stream, std::uint64_t last_seq) {
  constexpr std::string_view kRetry = "retry: 2000\n\n";
  FUZZ_CHECK(stream.substr(0, kRetry.size()) == kRetry);
  stream.remove_prefix(kRetry.size());
  std::optional<std::uint64_t> last_id;
  std::optional<std::uint64_t> expected_next;  // after a gap notice: the first id after it is past its end
  while (!stream.empty()) {
    const auto end = stream.find("\n\n");
    FUZZ_CHECK(end != std::string_view::npos);  // frames are written whole
    const std::string_view frame = stream.substr(0, end + 1);  // with its last "\n"
    stream.remove_prefix(end + 2);
    if (frame == ": ping\n") continue;
    constexpr std::string_view kGap = "event: gap\ndata: ";
    if (frame.substr(0, kGap.size()) == kGap) {
      FUZZ_CHECK(!last_id && !expected_next);  // the gap notice comes first
      const json data = json::parse(frame.substr(kGap.size()), nullptr, false);
      FUZZ_CHECK(data.is_object() && data.size() == 2);
      FUZZ_CHECK(data.contains("from") && data["from"].is_number_unsigned());
      FUZZ_CHECK(data.contains("to") && data["to"].is_number_unsigned());
      const auto from = data["from"].get<std::uint64_t>(), to = data["to"].get<std::uint64_t>();
      FUZZ_CHECK(from >= 1 && from <= to);
      expected_next = to + 1;
      continue;
    }
    constexpr std::string_view kId = "id: ";
    FUZZ_CHECK(frame.substr(0, kId.size()) == kId);
    const auto id_end = frame.find('\n');
    const auto id = parse_decimal(frame.substr(kId.size(), id_end - kId.size()));
    FUZZ_CHECK(id && *id > 0);
    if (last_id) FUZZ_CHECK(*id > *last_id);
    if (expected_next && !last_id) FUZZ_CHECK(*id >= *expected_next);  // not equal: ?session= filters
    FUZZ_CHECK(*id <= last_seq);
    last_id = id;
    constexpr std::string_view kData = "data: ";
    const std::string_view rest = frame.substr(id_end + 1);
    FUZZ_CHECK(rest.substr(0, kData.size()) == kData);
    const std::string_view data_text = rest.substr(kData.size(), rest.size() - kData.size() - 1);
    FUZZ_CHECK(!contains(data_text, "\n"));  // one data: line
    const json event = json::parse(data_text, nullptr, false);
    FUZZ_CHECK(event.is_object() && event.contains("seq") && event["seq"].is_number_unsigned());
    FUZZ_CHECK(event["seq"].get<std::uint64_t>() == *id);
  }
}

}  // namespace

HttpOracle::HttpOracle(std::vector<std::string> allowed_hosts, std::string token, std::string cors_origin,
                       std::string identity)
    : m_token(std::move(token)), m_cors_origin(std::move(cors_origin)), m_identity(std::move(identity)) {
  FUZZ_CHECK(document_is_valid_json());
  for (const auto& host : allowed_hosts) m_lowered_hosts.push_back(lowered(host));
}

InputFacts HttpOracle::facts_of(std::string_view input) const {
  const std::string input_lower = lowered(input);
  InputFacts facts;
  facts.has_host = std::any_of(m_lowered_hosts.begin(), m_lowered_hosts.end(),
                               [&](const std::string& host) { return contains(input_lower, host); });
  facts.has_token = contains(input, m_token);
  return facts;
}

void HttpOracle::check_output(std::string_view out, const InputFacts& facts, std::uint64_t last_seq) const {
  std::size_t pos = 0;
  while (pos < out.size()) {
    const auto head_end = out.find("\r\n\r\n", pos);
    FUZZ_CHECK(head_end != std::string_view::npos);  // responses are written whole
    const std::string_view head = out.substr(pos, head_end + 2 - pos);  // every line ends with CRLF
    pos = head_end + 4;

    // Status line.
    auto line_end = head.find("\r\n");
    const std::string_view status_line = head.substr(0, line_end);
    FUZZ_CHECK(status_line.size() >= 14);
    const std::string_view version = status_line.substr(0, 9);
    FUZZ_CHECK(version == "HTTP/1.1 " || version == "HTTP/1.0 ");
    const bool http10 = version == "HTTP/1.0 ";
    const auto status = parse_decimal(status_line.substr(9, 3));
    FUZZ_CHECK(status && known_status(static_cast<unsigned>(*status)));
    FUZZ_CHECK(status_line[12] == ' ');
    for (const char c : status_line.substr(13)) FUZZ_CHECK(c >= ' ' && c < 0x7f);

    // Header fields.
    std::optional<std::string_view> content_length, content_type, connection, allow_origin;
    std::size_t content_lengths = 0;
    std::string_view fields = head.substr(line_end + 2);
    while (!fields.empty()) {
      line_end = fields.find("\r\n");
      FUZZ_CHECK(line_end != std::string_view::npos);
      const std::string_view line = fields.substr(0, line_end);
      fields.remove_prefix(line_end + 2);
      const auto colon = line.find(':');
      FUZZ_CHECK(colon != std::string_view::npos && colon > 0);
      const std::string_view name = line.substr(0, colon);
      for (const char c : name) FUZZ_CHECK(is_tchar(c));
      std::string_view value = line.substr(colon + 1);
      FUZZ_CHECK(value.empty() || value.front() == ' ');
      if (!value.empty()) value.remove_prefix(1);
      for (const char c : value) FUZZ_CHECK(c != '\r' && c != '\n' && c != '\0');
      if (iequals(name, "Content-Length")) {
        content_length = value;
        ++content_lengths;
      } else if (iequals(name, "Content-Type")) {
        content_type = value;
      } else if (iequals(name, "Connection")) {
        connection = value;
      } else if (iequals(name, "Access-Control-Allow-Origin")) {
        FUZZ_CHECK(!allow_origin);
        allow_origin = value;
      } else if (iequals(name, "Set-Cookie")) {
        FUZZ_CHECK(false);
      } else {
        FUZZ_CHECK(!iequals(name, "Transfer-Encoding"));
      }
    }
    FUZZ_CHECK(content_lengths <= 1);

    // Security.
    if (!facts.has_host) FUZZ_CHECK(*status == 400 || *status == 403 || *status == 413 || *status == 431);
    if (allow_origin) FUZZ_CHECK(iequals(*allow_origin, m_cors_origin));

    // The event stream takes over the rest of the connection.
    if (content_type && iequals(*content_type, "text/event-stream")) {
      FUZZ_CHECK(*status == 200 && !http10);
      FUZZ_CHECK(facts.has_token && facts.has_host);
      check_sse(out.substr(pos), last_seq);
      return;
    }

    // Body.
    std::uint64_t length = 0;
    if (*status == 204) {
      FUZZ_CHECK(!content_length || *content_length == "0");
    } else {
      FUZZ_CHECK(content_length);
      const auto parsed = parse_decimal(*content_length);
      FUZZ_CHECK(parsed);
      length = *parsed;
    }
    FUZZ_CHECK(length <= out.size() - pos);
    const std::string_view body = out.substr(pos, length);
    pos += length;

    FUZZ_CHECK(content_type);
    if (content_type->substr(0, 16) == "application/json") {
      FUZZ_CHECK(*status == 200 || *status == 204);
      if (body != m_identity) {
        FUZZ_CHECK(facts.has_token);  // an RPC answer
        if (*status == 200) {
          const json value = parse_with_document_elided(body);
          FUZZ_CHECK(!value.is_discarded());
          if (value.is_array()) {
            FUZZ_CHECK(!value.empty());
            for (const auto& member : value) FUZZ_CHECK(is_rpc_response_object(member));
          } else {
            FUZZ_CHECK(is_rpc_response_object(value));
          }
        }
      } else {
        FUZZ_CHECK(*status == 200);
      }
    }

    // Connection management: refusals close, and nothing follows a response that closes.
    const bool keep_alive = http10 ? (connection && iequals(*connection, "keep-alive"))
                                   : !(connection && iequals(*connection, "close"));
    if (*status >= 400) FUZZ_CHECK(!keep_alive);
    if (!keep_alive) FUZZ_CHECK(pos == out.size());
  }
}

}  // namespace switchboard::fuzz
