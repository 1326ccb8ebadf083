#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "common/SseParser.h"

namespace sse_parser_tests {

using switchboard::adapters::SseEvent;
using switchboard::adapters::SseParser;
using namespace std::string_literals;

struct Parsed {
  std::vector<std::string> events;  // "type|data|id"
  std::vector<long long> retries;
  std::vector<std::string> comments;
  std::uint64_t overlong = 0;
  bool operator==(const Parsed&) const = default;
};

// Feeds `stream` in pieces of `piece` bytes (0: all at once), then ends it.
Parsed parse(std::string_view stream, std::size_t piece = 0, std::size_t max_line = 1024) {
  Parsed parsed;
  SseParser parser(
      {[&](SseEvent event) { parsed.events.push_back(event.type + "|" + event.data + "|" + event.last_event_id); },
       [&](std::chrono::milliseconds retry) { parsed.retries.push_back(retry.count()); },
       [&](std::string_view comment) { parsed.comments.emplace_back(comment); }},
      max_line);
  if (piece == 0) {
    parser.feed(stream);
  } else {
    for (std::size_t at = 0; at < stream.size(); at += piece) parser.feed(stream.substr(at, piece));
  }
  parser.finish();
  parsed.overlong = parser.overlong_lines();
  return parsed;
}

// The rule for chunking: however the bytes are split, the events are the same as for the whole stream.
void check_every_split(std::string_view stream, const Parsed& expected) {
  CHECK(parse(stream) == expected);
  for (std::size_t piece = 1; piece <= 7; ++piece) {
    INFO("pieces of " << piece << " bytes");
    CHECK(parse(stream, piece) == expected);
  }
  // And every split into two at any byte.
  for (std::size_t at = 0; at <= stream.size(); ++at) {
    Parsed parsed;
    SseParser parser({[&](SseEvent event) { parsed.events.push_back(event.type + "|" + event.data + "|" + event.last_event_id); },
                      [&](std::chrono::milliseconds retry) { parsed.retries.push_back(retry.count()); },
                      [&](std::string_view comment) { parsed.comments.emplace_back(comment); }},
                     1024);
    parser.feed(stream.substr(0, at));
    parser.feed(stream.substr(at));
    parser.finish();
    INFO("split at " << at);
    CHECK(parsed == expected);
  }
}


TEST_CASE("sse parser: an event is its data lines joined, dispatched by an empty line", "[sse]") {
  Parsed expected;
  expected.events = {"message|one|", "message|first\nsecond|"};
  check_every_split("data: one\n\ndata: first\ndata: second\n\n", expected);
}

TEST_CASE("sse parser: LF, CR and CRLF all end lines, also mixed and split between CR and LF", "[sse]") {
  Parsed expected;
  expected.events = {"message|a\nb\nc|", "message|d|"};
  check_every_split("data: a\rdata: b\r\ndata: c\n\r\ndata: d\r\r", expected);
}

TEST_CASE("sse parser: event names the type, which resets after each event, and the default is message", "[sse]") {
  Parsed expected;
  expected.events = {"session.updated|{\"x\":1}|", "message|plain|"};
  check_every_split("event: session.updated\ndata: {\"x\":1}\n\ndata: plain\n\n", expected);
}

TEST_CASE("sse parser: the last event id carries over to later events until changed, and an id with NUL is ignored", "[sse]") {
  Parsed expected;
  expected.events = {"message|a|7", "message|b|7", "message|c|", "message|d|"};
  check_every_split("id: 7\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: x\0y\ndata: d\n\n"s, expected);
}

TEST_CASE("sse parser: comments are reported and dispatch nothing", "[sse]") {
  Parsed expected;
  expected.events = {"message|after|"};
  expected.comments = {" heartbeat", ""};
  check_every_split(": heartbeat\n\n:\ndata: after\n\n", expected);
}

TEST_CASE("sse parser: retry with only digits sets the reconnection time, anything else is ignored", "[sse]") {
  Parsed expected;
  expected.retries = {3000, 0};
  expected.events = {"message|x|"};
  check_every_split("retry: 3000\nretry: 1.5\nretry: -1\nretry:\nretry: 0\nretry: 12a\ndata: x\n\n", expected);
}

TEST_CASE("sse parser: one space after the colon is dropped, further ones are data, and a bare name has an empty value", "[sse]") {
  Parsed expected;
  expected.events = {"message|  two spaces\nnospace\n|"};
  check_every_split("data:   two spaces\ndata:nospace\ndata\n\n", expected);
}

TEST_CASE("sse parser: data with an empty value is an event, a block without data is none", "[sse]") {
  Parsed expected;
  expected.events = {"message||"};
  check_every_split("event: nothing\n\nid: 1\n\ndata:\n\n", {{"message||1"}, {}, {}, 0});
  check_every_split("data\n\n", expected);
}

TEST_CASE("sse parser: unknown fields are ignored", "[sse]") {
  Parsed expected;
  expected.events = {"message|kept|"};
  check_every_split("foo: bar\nDATA: not data\ndata: kept\n\n", expected);
}

TEST_CASE("sse parser: an event not closed by an empty line at the end of the stream is dropped", "[sse]") {
  Parsed expected;
  expected.events = {"message|whole|"};
  check_every_split("data: whole\n\ndata: cut off\n", expected);
  check_every_split("data: whole\n\ndata: cut off", expected);
}

TEST_CASE("sse parser: a leading byte-order mark is skipped, one later is data", "[sse]") {
  Parsed expected;
  expected.events = {"message|x|", "message|\xEF\xBB\xBFy|"};
  check_every_split("\xEF\xBB\xBF" "data: x\n\ndata: \xEF\xBB\xBFy\n\n", expected);
}

TEST_CASE("sse parser: multi-byte UTF-8 split anywhere comes out whole", "[sse]") {
  Parsed expected;
  expected.events = {"message|h\xC3\xA9llo \xF0\x9F\x98\x80|"};
  check_every_split("data: h\xC3\xA9llo \xF0\x9F\x98\x80\n\n", expected);
}

TEST_CASE("sse parser: a line over the cap is skipped and counted, and the stream goes on", "[sse]") {
  const std::string stream = "data: " + std::string(100, 'x') + "\ndata: short\n\n";
  const auto parsed = parse(stream, 3, 32);
  CHECK(parsed.events == std::vector<std::string>{"message|short|"});
  CHECK(parsed.overlong == 1);
}

}  // namespace sse_parser_tests
