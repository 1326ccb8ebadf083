#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "switchboard/json/JsonWriter.h"
#include "switchboard/support/Bug.h"

namespace json_writer_tests {

using switchboard::json::JsonWriter;

TEST_CASE("JsonWriter emits compact JSON with inferred commas", "[json]") {
  std::string out;
  JsonWriter w(out);
  w.begin_object();
  w.key("a");
  w.integer(-5);
  w.key("b");
  w.begin_array();
  w.boolean(true);
  w.null();
  w.number(1.5);
  w.begin_object();
  w.end_object();
  w.end_array();
  w.key("c");
  w.unsigned_integer(std::numeric_limits<std::uint64_t>::max());
  w.end_object();
  w.finish();
  CHECK(out == R"({"a":-5,"b":[true,null,1.5,{}],"c":18446744073709551615})");
  CHECK(nlohmann::json::parse(out)["c"] == std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("JsonWriter escapes strings so any text round-trips", "[json]") {
  const std::string tricky = std::string("quote\" back\\ nl\n tab\t cr\r nul") + '\0' + "\x01\x1f end \xC3\xA9 \xF0\x9F\x98\x80";
  std::string out;
  JsonWriter(out).string(tricky);
  CHECK(out.find('\n') == std::string::npos);  // never breaks an NDJSON line
  CHECK(nlohmann::json::parse(out).get<std::string>() == tricky);
  CHECK(out.find("\\u0000") != std::string::npos);
}

TEST_CASE("JsonWriter replaces invalid UTF-8 with U+FFFD", "[json]") {
  const std::string bad = "a\xFF" "b\xC3" "c\xED\xA0\x80" "d\xC0\xAF";  // stray, truncated, surrogate, overlong
  std::string out;
  JsonWriter(out).string(bad);
  const auto parsed = nlohmann::json::parse(out);  // would throw on invalid UTF-8
  const std::string text = parsed.get<std::string>();
  CHECK(text.find("a\xEF\xBF\xBD" "b") == 0);
  CHECK(text.find('d') != std::string::npos);
}

TEST_CASE("JsonWriter writes non-finite numbers as null", "[json]") {
  std::string out;
  JsonWriter w(out);
  w.begin_array();
  w.number(std::numeric_limits<double>::infinity());
  w.number(std::numeric_limits<double>::quiet_NaN());
  w.end_array();
  w.finish();
  CHECK(out == "[null,null]");
}

TEST_CASE("JsonWriter keeps room while it writes and trims it at finish", "[json]") {
  std::string out = "[1";
  {
    JsonWriter w(out);
    w.integer(2);
    CHECK(out.size() > 4);  // the room past the text
    w.finish();
    CHECK(out == "[1,2");
    out.append("]\n");  // allowed after finish(); the writer goes on at the new end
    w.begin_array();
    w.string("x");
    w.end_array();
  }  // the destructor finishes
  CHECK(out == "[1,2]\n[\"x\"]");

  std::string big;
  {
    JsonWriter w(big);
    w.begin_array();
    for (int i = 0; i < 10000; ++i) w.string("item " + std::to_string(i));
    w.string(std::string(100000, 'q'));
    w.end_array();
  }
  const auto parsed = nlohmann::json::parse(big);
  CHECK(parsed.size() == 10001);
  CHECK(parsed[9999] == "item 9999");
  CHECK(parsed[10000].get<std::string>().size() == 100000);
  CHECK(big.back() == ']');
}

TEST_CASE("JsonWriter reports a string changed behind its back", "[json]") {
  std::vector<std::string> bugs;
  const auto previous = switchboard::set_bug_handler([&](std::string_view what) { bugs.emplace_back(what); });
  std::string out;
  {
    JsonWriter w(out);
    w.begin_array();
    out = "something else";  // a bug: the writer was not finished
    w.end_array();
    w.string(std::string(1000, 'x'));  // needs more room: noticed here
  }
  switchboard::set_bug_handler(previous);
  REQUIRE_FALSE(bugs.empty());
  CHECK(bugs[0].find("changed") != std::string::npos);
}

// ---- the fast escaper against the reference ---------------------------------------------------------------
// `append_quoted` reads 8 bytes at a time and copies runs of plain ASCII in bulk. These tests hold it to the
// byte-at-a-time escaper it replaced (copied below unchanged), on exhaustive short inputs and random ones that
// are dense in the bytes where the two could differ.
namespace reference {

constexpr char kHex[] = "0123456789abcdef";

std::size_t valid_utf8_sequence(const unsigned char* p, const unsigned char* end) {
  const unsigned char c = p[0];
  std::size_t need = 0;
  std::uint32_t cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (static_cast<std::size_t>(end - p) <= need) return 0;
  for (std::size_t i = 1; i <= need; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if ((need == 2 && cp < 0x800) || (need == 3 && (cp < 0x10000 || cp > 0x10FFFF))) return 0;
  if (cp >= 0xD800 && cp <= 0xDFFF) return 0;
  return need + 1;
}

void append_quoted(std::string& out, std::string_view text) {
  out.push_back('"');
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const auto* end = p + text.size();
  const auto* run = p;
  auto flush = [&](const unsigned char* upto) {
    out.append(reinterpret_cast<const char*>(run), static_cast<std::size_t>(upto - run));
  };
  while (p < end) {
    const unsigned char c = *p;
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++p;
      continue;
    }
    if (c >= 0x80) {
      const std::size_t n = valid_utf8_sequence(p, end);
      if (n != 0) {
        p += n;
        continue;
      }
      flush(p);
      out.append("\xEF\xBF\xBD");
      run = ++p;
      continue;
    }
    flush(p);
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      case '\b': out.append("\\b"); break;
      case '\f': out.append("\\f"); break;
      default: {
        const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        out.append(escaped, sizeof escaped);
      }
    }
    run = ++p;
  }
  flush(p);
  out.push_back('"');
}

}  // namespace reference

std::string fast_quoted(std::string_view text) {
  std::string out;
  switchboard::json::append_quoted(out, text);
  return out;
}

std::string reference_quoted(std::string_view text) {
  std::string out;
  reference::append_quoted(out, text);
  return out;
}

// Bytes where an escaper can go wrong: the edges of every class it distinguishes.
constexpr unsigned char kEdgeBytes[] = {0x00, 0x01, 0x08, 0x09, 0x0a, 0x0c, 0x0d, 0x1f, 0x20, 0x21, '"',  '\\', '/',
                                        'a',  0x7e, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf,
                                        0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xfe, 0xff};

TEST_CASE("append_quoted matches the reference on every string of up to two bytes", "[json]") {
  std::size_t mismatches = 0;
  std::string text;
  for (int a = -1; a < 256; ++a) {
    for (int b = -1; b < 256; ++b) {
      text.clear();
      if (a >= 0) text.push_back(static_cast<char>(a));
      if (b >= 0) text.push_back(static_cast<char>(b));
      if (fast_quoted(text) != reference_quoted(text)) {
        ++mismatches;
        CAPTURE(a, b);
        CHECK(fast_quoted(text) == reference_quoted(text));
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("append_quoted matches the reference on multi-byte edges at every word offset", "[json]") {
  // Every 4-byte combination of the edge bytes (1.3 M strings), each placed at a varying offset in plain ASCII so
  // that it straddles the 8-byte words the fast path reads in every way.
  std::size_t mismatches = 0;
  std::size_t checked = 0;
  std::string text;
  std::string fast;
  std::string slow;
  for (const unsigned char a : kEdgeBytes) {
    for (const unsigned char b : kEdgeBytes) {
      for (const unsigned char c : kEdgeBytes) {
        for (const unsigned char d : kEdgeBytes) {
          const std::size_t offset = (checked * 7) % 19;
          text.assign(offset, 'x');
          text.push_back(static_cast<char>(a));
          text.push_back(static_cast<char>(b));
          text.push_back(static_cast<char>(c));
          text.push_back(static_cast<char>(d));
          text.append(checked % 11, 'y');
          fast.clear();
          slow.clear();
          switchboard::json::append_quoted(fast, text);
          reference::append_quoted(slow, text);
          ++checked;
          if (fast != slow) {
            ++mismatches;
            if (mismatches <= 5) {
              CAPTURE(text);
              CHECK(fast == slow);
            }
          }
        }
      }
    }
  }
  CHECK(checked > 1'000'000);
  CHECK(mismatches == 0);
}

TEST_CASE("append_quoted matches the reference on random text", "[json]") {
  std::mt19937 rng(20261130);
  // Pieces of text: plain ASCII runs of every length, edge bytes, valid UTF-8 of each width, and broken UTF-8.
  const std::vector<std::string> pieces = {
      "a", "plain", "0123456789abcdef0123456789", std::string(40, 'z'), "\"", "\\", "\n", "\t", "\x01",
      "\x1f", "\x7f", "/", std::string(1, '\0'), "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF",
      "\xE2\x80\xA8", "\xEF\xBF\xBD", "\xC3", "\xE2\x82", "\xF0\x9F\x98", "\x80", "\xBF", "\xC0\xAF", "\xC1\xBF",
      "\xE0\x80\x80", "\xE0\x9F\xBF", "\xED\xA0\x80", "\xED\xBF\xBF", "\xF0\x80\x80\x80", "\xF4\x90\x80\x80",
      "\xF5\x80\x80\x80", "\xFE", "\xFF", "\xC2\x80", "\xDF\xBF", "\xEE\x80\x80"};
  std::uniform_int_distribution<std::size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> count(0, 24);
  std::uniform_int_distribution<int> byte(0, 255);
  std::size_t mismatches = 0;
  for (int round = 0; round < 50'000; ++round) {
    std::string text;
    const int n = count(rng);
    for (int i = 0; i < n; ++i) {
      if (round % 4 == 0) text.push_back(static_cast<char>(byte(rng)));  // uniformly random bytes
      else text += pieces[pick(rng)];
    }
    // Appending after existing content must not disturb it.
    std::string fast = "[";
    std::string slow = "[";
    switchboard::json::append_quoted(fast, text);
    reference::append_quoted(slow, text);
    if (fast != slow) {
      ++mismatches;
      if (mismatches <= 5) {
        CAPTURE(text);
        CHECK(fast == slow);
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("append_quoted copies long plain runs and escapes what follows them", "[json]") {
  const std::string run(1 << 16, 'a');
  CHECK(fast_quoted(run) == '"' + run + '"');
  CHECK(fast_quoted(run + "\"" + run) == '"' + run + "\\\"" + run + '"');
  CHECK(fast_quoted(run + "\xFF") == '"' + run + "\xEF\xBF\xBD\"");
  CHECK(fast_quoted(run + "\xC3\xA9") == '"' + run + "\xC3\xA9\"");
  CHECK(fast_quoted(std::string(1000, '\n')) == reference_quoted(std::string(1000, '\n')));
}

}  // namespace json_writer_tests
