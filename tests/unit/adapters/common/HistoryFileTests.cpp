#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/HistoryFile.h"
#include "support/TempDir.h"

namespace history_file_tests {

using namespace switchboard::adapters;
namespace fs = std::filesystem;

fs::path write_file(const switchboard::testing::TempDir& dir, const std::string& text) {
  const fs::path file = dir.path() / "history.jsonl";
  std::ofstream(file, std::ios::binary) << text;
  return file;
}

TEST_CASE("history file: every non-empty line is counted and only object lines are visited", "[history]") {
  switchboard::testing::TempDir dir("history-file");
  const auto file = write_file(dir, "{\"a\":1}\r\n\ngarbage\n[1]\n{\"b\":2}\n{\"c\":3}");
  JsonlCounts counts;
  std::vector<nlohmann::json> seen;
  CHECK(for_each_json_object(file, counts, [&](const nlohmann::json& line) {
    seen.push_back(line);
    return true;
  }));
  CHECK(seen == std::vector<nlohmann::json>{{{"a", 1}}, {{"b", 2}}, {{"c", 3}}});  // '\r' and no final '\n' are fine
  CHECK(counts.lines == 5);
  CHECK(counts.malformed == 2);
}

TEST_CASE("history file: a visitor that returns false stops the reading", "[history]") {
  switchboard::testing::TempDir dir("history-file");
  const auto file = write_file(dir, "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n");
  JsonlCounts counts;
  int visits = 0;
  for_each_json_object(file, counts, [&](const nlohmann::json&) { return ++visits < 2; });
  CHECK(visits == 2);
  CHECK(counts.lines == 2);
}

TEST_CASE("history file: a line over the cap is malformed and the lines after it are read", "[history]") {
  switchboard::testing::TempDir dir("history-file");
  // The cap is small here; a line longer than the reader's buffer crosses several reads.
  const std::string long_line = "{\"x\":\"" + std::string(200 * 1024, 'x') + "\"}";
  const auto file = write_file(dir, long_line + "\n{\"after\":true}\n");
  JsonlCounts counts;
  std::vector<nlohmann::json> seen;
  for_each_json_object(file, counts, [&](const nlohmann::json& line) {
    seen.push_back(line);
    return true;
  }, /*max_line_bytes=*/100 * 1024);
  CHECK(seen == std::vector<nlohmann::json>{{{"after", true}}});
  CHECK(counts.lines == 2);
  CHECK(counts.malformed == 1);

  JsonlCounts uncapped;
  int visits = 0;
  for_each_json_object(file, uncapped, [&](const nlohmann::json&) { return ++visits > 0; });
  CHECK(visits == 2);
  CHECK(uncapped.malformed == 0);
}

TEST_CASE("history file: a file that cannot be opened is reported, not read", "[history]") {
  switchboard::testing::TempDir dir("history-file");
  JsonlCounts counts;
  CHECK_FALSE(for_each_json_object(dir.path() / "missing.jsonl", counts, [](const nlohmann::json&) { return true; }));
  CHECK(counts.lines == 0);
  CHECK(modified_at_ms(dir.path() / "missing.jsonl") == 0);
  CHECK(modified_at_ms(write_file(dir, "{}\n")) > 0);
}

TEST_CASE("history file: a title is the prompt's first line, trimmed, cut at 80 bytes between characters", "[history]") {
  CHECK(title_from_prompt("\n  Fix the parser  \nand the tests") == "Fix the parser");
  CHECK(title_from_prompt("   ") == "");
  CHECK(title_from_prompt(std::string(80, 'x')) == std::string(80, 'x'));
  CHECK(title_from_prompt(std::string(81, 'x')) == std::string(80, 'x') + "…");
  // "é" is two bytes: the 80th byte would split the one that starts at byte 79, so the cut is before it.
  CHECK(title_from_prompt(std::string(79, 'x') + "éé") == std::string(79, 'x') + "…");
}

TEST_CASE("history file: a listing is sorted newest first and by id among equals", "[history]") {
  HistoryList list;
  for (const auto& [id, updated] : std::vector<std::pair<std::string, std::int64_t>>{{"b", 5}, {"c", 9}, {"a", 5}}) {
    HistoryEntry entry;
    entry.provider_session_id = id;
    entry.updated_at = updated;
    list.sessions.push_back(entry);
  }
  sort_newest_first(list);
  CHECK(list.sessions[0].provider_session_id == "c");
  CHECK(list.sessions[1].provider_session_id == "a");
  CHECK(list.sessions[2].provider_session_id == "b");
}

}  // namespace history_file_tests
