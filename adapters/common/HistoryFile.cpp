#include "common/HistoryFile.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <system_error>

namespace switchboard::adapters {
namespace {

constexpr std::size_t kMaxTitleBytes = 80;

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

JsonlReader::JsonlReader(const std::filesystem::path& file, std::size_t max_line_bytes)
    : m_in(file, std::ios::binary), m_max_line_bytes(max_line_bytes) {}

bool JsonlReader::next(std::string& line, bool& too_long) {
  line.clear();
  too_long = false;
  bool any = false;
  while (true) {
    if (m_pos == m_end && !fill()) break;
    any = true;
    const char* begin = m_buffer.data() + m_pos;
    const auto* stop = static_cast<const char*>(std::memchr(begin, '\n', m_end - m_pos));
    const std::size_t length = stop != nullptr ? static_cast<std::size_t>(stop - begin) : m_end - m_pos;
    if (!too_long && line.size() + length > m_max_line_bytes) {
      too_long = true;
      std::string().swap(line);
    }
    if (!too_long) line.append(begin, length);
    m_pos += length;
    if (stop != nullptr) {
      ++m_pos;
      break;
    }
  }
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return any;
}

bool JsonlReader::fill() {
  if (!m_in) return false;
  m_in.read(m_buffer.data(), static_cast<std::streamsize>(m_buffer.size()));
  m_pos = 0;
  m_end = static_cast<std::size_t>(m_in.gcount());
  return m_end > 0;
}

std::int64_t modified_at_ms(const std::filesystem::path& file) {
  std::error_code error;
  const auto when = std::filesystem::last_write_time(file, error);
  if (error) return 0;
  const auto system = std::chrono::file_clock::to_sys(when);
  return std::chrono::duration_cast<std::chrono::milliseconds>(system.time_since_epoch()).count();
}

std::string title_from_prompt(std::string_view prompt) {
  const std::string_view text = trimmed(prompt);
  const std::string_view title = trimmed(text.substr(0, text.find('\n')));
  if (title.size() <= kMaxTitleBytes) return std::string(title);
  std::size_t cut = kMaxTitleBytes;
  while (cut > 0 && (static_cast<unsigned char>(title[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return std::string(title.substr(0, cut)) + "…";
}

void sort_newest_first(HistoryList& list) {
  std::sort(list.sessions.begin(), list.sessions.end(), [](const HistoryEntry& a, const HistoryEntry& b) {
    if (a.updated_at != b.updated_at) return a.updated_at > b.updated_at;
    return a.provider_session_id < b.provider_session_id;
  });
}

}  // namespace switchboard::adapters
