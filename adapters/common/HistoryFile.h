#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/NativeJson.h"
#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::adapters {

// What reading an agent's own history needs whatever the agent: its files are JSON lines (Claude Code's session
// files, Codex's rollouts), listed newest first with a title from the first prompt. Everything here is blocking
// file reading meant for a helper thread, and none of it throws.

// Reads a file line by line, holding at most `max_line_bytes` of one line: agents inline attached images as data
// URLs, so real lines reach megabytes, but a file that is one endless line must not take the daemon's memory.
class JsonlReader {
 public:
  static constexpr std::size_t kMaxLineBytes = 64 * 1024 * 1024;

  explicit JsonlReader(const std::filesystem::path& file, std::size_t max_line_bytes = kMaxLineBytes);

  bool opened() const { return m_in.is_open(); }
  // The next line without its '\n' (and '\r'); `too_long` set and `line` empty for a line over the cap. False
  // at the end of the file.
  bool next(std::string& line, bool& too_long);

 private:
  bool fill();

  std::ifstream m_in;
  std::size_t m_max_line_bytes;
  std::vector<char> m_buffer = std::vector<char>(64 * 1024);
  std::size_t m_pos = 0;
  std::size_t m_end = 0;
};

struct JsonlCounts {
  std::size_t lines = 0;      // non-empty lines read
  std::size_t malformed = 0;  // of those: not JSON, not an object, or over the cap
};

// Calls `visit` with each JSON object line of `file` until it returns false; the other non-empty lines are only
// counted. False when the file cannot be opened.
template <class Visit>
bool for_each_json_object(const std::filesystem::path& file, JsonlCounts& counts, Visit visit,
                          std::size_t max_line_bytes = JsonlReader::kMaxLineBytes) {
  JsonlReader reader(file, max_line_bytes);
  if (!reader.opened()) return false;
  std::string text;
  bool too_long = false;
  while (reader.next(text, too_long)) {
    if (text.empty() && !too_long) continue;
    ++counts.lines;
    const auto line = too_long ? nlohmann::json(nlohmann::json::value_t::discarded) : native::parse_line(text);
    if (line.is_discarded() || !line.is_object()) {
      ++counts.malformed;
      continue;
    }
    if (!visit(line)) break;
  }
  return true;
}

// What reading one history file met.
struct HistoryFileStats {
  bool opened = false;
  std::size_t lines = 0;
  std::size_t malformed = 0;  // not JSON, not an object, too long, or missing what its type needs
  std::size_t ignored = 0;    // known, and not part of the conversation (the agent's bookkeeping)
};

// The file's modification time, Unix milliseconds; 0 when it cannot be read.
std::int64_t modified_at_ms(const std::filesystem::path& file);

// A listed session's title from its first prompt: the prompt's first line, without surrounding white space, cut
// to at most 80 bytes (never inside a UTF-8 character) and then marked "…".
std::string title_from_prompt(std::string_view prompt);

// Newest first (the file's modification time), ties by id so that the order does not depend on the directory's.
void sort_newest_first(HistoryList& list);

}  // namespace switchboard::adapters
