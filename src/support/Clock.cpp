#include "switchboard/support/Clock.h"

#include <cstdio>

namespace switchboard {
namespace {

// Reads exactly `digits` decimal digits at `pos`.
std::optional<int> read_number(std::string_view text, std::size_t& pos, std::size_t digits) {
  if (pos + digits > text.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const char c = text[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  pos += digits;
  return value;
}

bool expect(std::string_view text, std::size_t& pos, char c) {
  if (pos >= text.size() || text[pos] != c) return false;
  ++pos;
  return true;
}

}  // namespace

std::optional<std::int64_t> parse_iso8601_millis(std::string_view text) {
  std::size_t pos = 0;
  const auto year = read_number(text, pos, 4);
  if (!year || !expect(text, pos, '-')) return std::nullopt;
  const auto month = read_number(text, pos, 2);
  if (!month || !expect(text, pos, '-')) return std::nullopt;
  const auto day = read_number(text, pos, 2);
  if (!day || pos >= text.size() || (text[pos] != 'T' && text[pos] != 't' && text[pos] != ' ')) return std::nullopt;
  ++pos;
  const auto hour = read_number(text, pos, 2);
  if (!hour || !expect(text, pos, ':')) return std::nullopt;
  const auto minute = read_number(text, pos, 2);
  if (!minute || !expect(text, pos, ':')) return std::nullopt;
  const auto second = read_number(text, pos, 2);
  if (!second) return std::nullopt;
  std::int64_t millis = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::int64_t scale = 100;
    const std::size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      millis += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  std::int64_t offset_minutes = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    const auto offset_hours = read_number(text, pos, 2);
    if (!offset_hours || !expect(text, pos, ':')) return std::nullopt;
    const auto offset_mins = read_number(text, pos, 2);
    if (!offset_mins || *offset_hours > 23 || *offset_mins > 59) return std::nullopt;
    offset_minutes = sign * (*offset_hours * 60 + *offset_mins);
  } else {
    return std::nullopt;  // a local time names no instant
  }
  if (pos != text.size()) return std::nullopt;
  namespace chrono = std::chrono;
  const chrono::year_month_day date{chrono::year(*year), chrono::month(static_cast<unsigned>(*month)),
                                    chrono::day(static_cast<unsigned>(*day))};
  if (!date.ok() || *hour > 23 || *minute > 59 || *second > 60) return std::nullopt;  // 60: a leap second
  const auto instant = chrono::sys_days(date) + chrono::hours(*hour) + chrono::minutes(*minute) +
                       chrono::seconds(*second) + chrono::milliseconds(millis) - chrono::minutes(offset_minutes);
  return chrono::duration_cast<chrono::milliseconds>(instant.time_since_epoch()).count();
}

std::string format_iso8601_millis(std::int64_t millis) {
  namespace chrono = std::chrono;
  const chrono::sys_time<chrono::milliseconds> instant{chrono::milliseconds(millis)};
  const auto day = chrono::floor<chrono::days>(instant);
  const chrono::year_month_day date{day};
  const chrono::hh_mm_ss time{instant - day};
  char text[40];
  std::snprintf(text, sizeof text, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<int>(date.year()),
                static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()), static_cast<int>(time.hours().count()),
                static_cast<int>(time.minutes().count()), static_cast<int>(time.seconds().count()),
                static_cast<int>(time.subseconds().count()));
  return text;
}

}  // namespace switchboard
