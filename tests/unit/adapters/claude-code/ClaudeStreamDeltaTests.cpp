#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "claude-code/ClaudeStreamDelta.h"
#include "claude-code/ClaudeTranslator.h"
#include "support/ClaudeFixtures.h"
#include "support/ClaudeRecordingSink.h"

// The fast path for streamed deltas must never change what a line means: it only reads the lines it is sure of,
// and the translator gives the same events and counts with it as without it, on every recorded stream and on lines
// made to sit at its edges.

namespace claude_stream_delta_tests {

using namespace switchboard;
using namespace switchboard::adapters::claude;
using Json = nlohmann::json;
namespace fs = std::filesystem;

struct Run {
  std::vector<std::string> events;
  TranslatorStats stats;
};

Run translate(const std::vector<std::string>& lines, bool fast) {
  testing::ClaudeRecordingSink sink;
  testing::ClaudeRecordingControl control;
  ClaudeTranslator translator(sink, control);
  translator.set_fast_deltas(fast);
  for (const auto& line : lines) translator.feed_line(line);
  return Run{sink.lines, translator.stats()};
}

void check_same_with_and_without_fast_path(const std::vector<std::string>& lines) {
  const Run fast = translate(lines, true);
  const Run general = translate(lines, false);
  CHECK(fast.events == general.events);
  CHECK(fast.stats.lines == general.stats.lines);
  CHECK(fast.stats.malformed == general.stats.malformed);
  CHECK(fast.stats.unknown == general.stats.unknown);
  CHECK(fast.stats.dropped == general.stats.dropped);
}

const std::string kStart =
    R"({"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_1","content":[]}},"parent_tool_use_id":null})";

std::string delta_line(const std::string& delta, const std::string& extra = R"(,"parent_tool_use_id":null)") {
  return R"({"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":)" + delta + "}" + extra + "}";
}

TEST_CASE("claude stream delta: the reader takes text and thinking deltas with their parent", "[claude][fast-delta]") {
  StreamDeltaReader reader;
  const auto text = reader.read(delta_line(R"({"type":"text_delta","text":"He said \"hi\"\n\u00e9"})"));
  REQUIRE(text);
  CHECK(text->kind == protocol::DeltaKind::Text);
  CHECK(text->text == "He said \"hi\"\n\xC3\xA9");
  CHECK(text->index == 0);
  CHECK_FALSE(text->parent_tool_use_id);

  const auto thinking =
      reader.read(delta_line(R"({"type":"thinking_delta","thinking":"hmm"})", R"(,"parent_tool_use_id":"toolu_9")"));
  REQUIRE(thinking);
  CHECK(thinking->kind == protocol::DeltaKind::Thinking);
  CHECK(thinking->text == "hmm");
  CHECK(thinking->parent_tool_use_id == "toolu_9");
}

TEST_CASE("claude stream delta: the reader leaves every other line to the general path", "[claude][fast-delta]") {
  StreamDeltaReader reader;
  const std::vector<std::string> refused{
      kStart,
      delta_line(R"({"type":"input_json_delta","partial_json":"{\"a\""})"),
      delta_line(R"({"type":"signature_delta","signature":"x"})"),
      delta_line(R"({"type":"text_delta","text":7})"),
      delta_line(R"({"type":"text_delta"})"),
      delta_line(R"({"type":"text_delta","text":"a","text":"b"})"),                      // repeated member
      delta_line(R"({"type":"text_delta","text":"a"})", R"(,"parent_tool_use_id":5)"),    // odd parent
      delta_line(R"({"type":"text_delta","text":"a"})", R"(,"type":"assistant")"),        // repeated type
      delta_line(R"({"type":"text_delta","text":"a"})") + " trailing",
      delta_line(R"({"type":"text_delta","text":"a"})") + "{}",
      R"({"type":"stream_event","event":{"type":"content_block_delta","index":1.5,"delta":{"type":"text_delta","text":"a"}}})",
      R"({"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}})",
      R"({"type":"assistant","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}})",
      "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\xFF\"}}}",
      R"({"type":"stream_event","event":{"type":"content_block_delta",)",
      R"(["content_block_delta"])",
  };
  for (const auto& line : refused) {
    INFO(line);
    CHECK_FALSE(reader.read(line));
  }
  // The reader is reusable after a refusal.
  CHECK(reader.read(delta_line(R"({"type":"text_delta","text":"ok"})")));
}

TEST_CASE("claude stream delta: edge lines translate the same with and without the fast path", "[claude][fast-delta]") {
  check_same_with_and_without_fast_path({
      delta_line(R"({"type":"text_delta","text":"before any message_start"})"),
      kStart,
      delta_line(R"({"type":"text_delta","text":"plain"})"),
      delta_line(R"({"type":"text_delta","text":""})"),
      delta_line(R"({"type":"text_delta","text":"a","text":"b"})"),
      delta_line(R"({"type":"text_delta","text":"x"})", R"(,"parent_tool_use_id":"toolu_1")"),  // no stream there yet
      delta_line(R"({"type":"thinking_delta","thinking":"deep"})"),
      delta_line(R"({"type":"text_delta","text":"a"})") + " trailing",
      "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"\xFF\"}}}",
      R"({"type":"stream_event","event":{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"neg"}}})",
      delta_line(R"({"type":"text_delta","text":"line \u2028 separator"})") + "\r",
  });
}

TEST_CASE("claude stream delta: every recorded stream translates the same with and without the fast path", "[claude][fast-delta]") {
  const fs::path dir = testing::claude_fixture_path("");
  std::size_t streams = 0;
  std::size_t fast_lines = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".ndjson" || name.find(".stdin.") != std::string::npos) continue;
    std::vector<std::string> lines;
    for (const auto& line : testing::claude_fixture_lines(name)) {
      // Recorded exchanges wrap each line ({"dir","t","msg"}); what the CLI wrote is `msg`.
      const auto record = Json::parse(line, nullptr, false);
      if (name.rfind("recorded-exchange", 0) == 0) {
        if (record.is_object() && record.value("dir", "") == "from_cli") lines.push_back(record.at("msg").dump());
      } else {
        lines.push_back(line);
      }
    }
    StreamDeltaReader reader;
    for (const auto& line : lines) fast_lines += reader.read(line).has_value() ? 1 : 0;
    INFO(name);
    check_same_with_and_without_fast_path(lines);
    ++streams;
  }
  CHECK(streams >= 15);
  CHECK(fast_lines > 20);  // the fixtures do stream: the fast path was exercised, not just skipped
}

}  // namespace claude_stream_delta_tests
