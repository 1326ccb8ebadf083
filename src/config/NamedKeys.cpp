#include "switchboard/config/NamedKeys.h"

#include <algorithm>

namespace switchboard::config {
namespace {

// The next dotted segment of `text` from `at`, and moves `at` past it (and its dot).
std::string_view next_segment(std::string_view text, std::size_t& at) {
  const auto dot = text.find('.', at);
  const auto end = dot == std::string_view::npos ? text.size() : dot;
  const auto segment = text.substr(at, end - at);
  at = dot == std::string_view::npos ? text.size() + 1 : dot + 1;
  return segment;
}

}  // namespace

bool is_named_key(std::string_view key) { return key.find(kNamedSegment) != std::string_view::npos; }

bool is_valid_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  const auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_or_digit(name.front())) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) { return lower_or_digit(c) || c == '-' || c == '_'; });
}

bool key_matches(std::string_view pattern, std::string_view key, bool as_table) {
  std::size_t in_pattern = 0;
  std::size_t in_key = 0;
  while (in_key <= key.size()) {
    if (in_pattern > pattern.size()) return false;  // the key is longer than the pattern
    const auto expected = next_segment(pattern, in_pattern);
    const auto given = next_segment(key, in_key);
    if (expected == kNamedSegment ? !is_valid_name(given) : expected != given) return false;
  }
  // The whole key matched: it is the pattern, or (as a table) a leading part of it.
  return in_pattern > pattern.size() || as_table;
}

std::optional<std::string> named_segment(std::string_view pattern, std::string_view key) {
  if (!key_matches(pattern, key, true)) return std::nullopt;
  std::size_t in_pattern = 0;
  std::size_t in_key = 0;
  while (in_key <= key.size() && in_pattern <= pattern.size()) {
    const auto expected = next_segment(pattern, in_pattern);
    const auto given = next_segment(key, in_key);
    if (expected == kNamedSegment) return std::string(given);
  }
  return std::nullopt;
}

bool has_invalid_name(std::string_view pattern, std::string_view key) {
  std::size_t in_pattern = 0;
  std::size_t in_key = 0;
  bool invalid = false;
  while (in_key <= key.size()) {
    if (in_pattern > pattern.size()) return false;
    const auto expected = next_segment(pattern, in_pattern);
    const auto given = next_segment(key, in_key);
    if (expected == kNamedSegment) {
      invalid = invalid || !is_valid_name(given);
    } else if (expected != given) {
      return false;
    }
  }
  return invalid;
}

bool names_one(std::string_view pattern, std::string_view key) {
  if (!key_matches(pattern, key, true)) return false;
  const auto at = pattern.find(kNamedSegment);
  if (at == std::string_view::npos) return false;
  // As many dots before the end of the key as before the end of <name> in the pattern.
  const auto dots = [](std::string_view text) { return std::count(text.begin(), text.end(), '.'); };
  return dots(key) == dots(pattern.substr(0, at));
}

}  // namespace switchboard::config
