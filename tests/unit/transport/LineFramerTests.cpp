#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "switchboard/transport/LineFramer.h"

namespace line_framer_tests {

using switchboard::transport::LineFramer;

struct Collected {
  std::vector<std::string> lines;
  std::vector<std::size_t> overlong;
};

LineFramer make_framer(Collected& collected, std::size_t cap = 64) {
  return LineFramer(cap, LineFramer::Handler{[&](std::string_view line) { collected.lines.emplace_back(line); },
                                             [&](std::size_t limit) { collected.overlong.push_back(limit); }});
}

TEST_CASE("LineFramer splits on newline only", "[framing]") {
  Collected got;
  auto framer = make_framer(got);
  // U+2028 and U+2029 are line separators to JavaScript but content to NDJSON.
  framer.feed("{\"a\":\"x\xE2\x80\xA8y\xE2\x80\xA9z\"}\n{\"b\":1}\n");
  REQUIRE(got.lines == std::vector<std::string>{"{\"a\":\"x\xE2\x80\xA8y\xE2\x80\xA9z\"}", "{\"b\":1}"});
}

TEST_CASE("LineFramer tolerates CRLF", "[framing]") {
  Collected got;
  auto framer = make_framer(got);
  framer.feed("one\r\ntwo\r\n");
  REQUIRE(got.lines == std::vector<std::string>{"one", "two"});
}

TEST_CASE("LineFramer joins a line split across reads", "[framing]") {
  Collected got;
  auto framer = make_framer(got);
  framer.feed("{\"jsonrpc\":");
  CHECK(got.lines.empty());
  framer.feed("\"2.0\"");
  framer.feed("}\r");
  CHECK(got.lines.empty());
  framer.feed("\nnext");
  REQUIRE(got.lines == std::vector<std::string>{"{\"jsonrpc\":\"2.0\"}"});
  CHECK(framer.buffered_bytes() == 4);
}

TEST_CASE("LineFramer delivers a final line without newline at end of input", "[framing]") {
  Collected got;
  auto framer = make_framer(got);
  framer.feed("first\nlast");
  framer.finish();
  REQUIRE(got.lines == std::vector<std::string>{"first", "last"});
  framer.finish();  // idempotent: nothing more
  CHECK(got.lines.size() == 2);
}

TEST_CASE("LineFramer skips an over-long line and recovers", "[framing]") {
  Collected got;
  auto framer = make_framer(got, 8);

  SECTION("within one chunk") {
    framer.feed("0123456789abc\nok\n");
    CHECK(got.overlong == std::vector<std::size_t>{8});
    CHECK(got.lines == std::vector<std::string>{"ok"});
  }
  SECTION("across chunks, reported once, memory released") {
    framer.feed("01234");
    framer.feed("56789");
    framer.feed(std::string(10000, 'x'));
    CHECK(framer.buffered_bytes() == 0);
    framer.feed("tail\nok\n");
    CHECK(got.overlong.size() == 1);
    CHECK(got.lines == std::vector<std::string>{"ok"});
  }
  SECTION("an over-long unterminated last line is dropped at EOF") {
    framer.feed(std::string(20, 'y'));
    framer.finish();
    CHECK(got.overlong.size() == 1);
    CHECK(got.lines.empty());
  }
  SECTION("exactly at the cap is accepted") {
    framer.feed("12345678\n");
    CHECK(got.overlong.empty());
    CHECK(got.lines == std::vector<std::string>{"12345678"});
  }
}

TEST_CASE("LineFramer passes empty lines through", "[framing]") {
  Collected got;
  auto framer = make_framer(got);
  framer.feed("\n\na\n");
  REQUIRE(got.lines == std::vector<std::string>{"", "", "a"});
}

}  // namespace line_framer_tests
