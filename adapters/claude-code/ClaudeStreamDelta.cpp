#include "claude-code/ClaudeStreamDelta.h"

namespace switchboard::adapters::claude {
namespace {

namespace od = simdjson::ondemand;

// The `delta` object: {"type":"text_delta","text":…} or {"type":"thinking_delta","thinking":…}.
bool read_delta(od::object delta, StreamDelta& out) {
  std::optional<std::string_view> type;
  std::optional<std::string_view> text;
  std::optional<std::string_view> thinking;
  for (auto field : delta) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    std::optional<std::string_view>* slot = key == "type" ? &type : key == "text" ? &text : key == "thinking" ? &thinking : nullptr;
    if (slot == nullptr) continue;  // e.g. citations: skipped unread
    if (slot->has_value()) return false;  // a repeated member: the general path decides which one counts
    std::string_view value;
    if (field.value().get_string().get(value)) return false;
    *slot = value;
  }
  if (type == "text_delta" && text) {
    out.kind = protocol::DeltaKind::Text;
    out.text.assign(*text);
    return true;
  }
  if (type == "thinking_delta" && thinking) {
    out.kind = protocol::DeltaKind::Thinking;
    out.text.assign(*thinking);
    return true;
  }
  return false;
}

// The `event` object: {"type":"content_block_delta","index":N,"delta":{…}}.
bool read_event(od::object event, StreamDelta& out) {
  bool type_ok = false, seen_type = false, seen_index = false, seen_delta = false;
  for (auto field : event) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return false;
    if (key == "type") {
      std::string_view type;
      if (seen_type || field.value().get_string().get(type)) return false;
      seen_type = true;
      type_ok = type == "content_block_delta";
      if (!type_ok) return false;
    } else if (key == "index") {
      if (seen_index || field.value().get_int64().get(out.index)) return false;
      seen_index = true;
    } else if (key == "delta") {
      od::object delta;
      if (seen_delta || field.value().get_object().get(delta) || !read_delta(delta, out)) return false;
      seen_delta = true;
    }
  }
  return type_ok && seen_index && seen_delta;
}

}  // namespace

std::optional<StreamDelta> StreamDeltaReader::read(std::string_view line) {
  // Most other lines are turned away here, before any copy.
  if (line.find(R"("content_block_delta")") == std::string_view::npos) return std::nullopt;
  m_padded.assign(line);
  m_padded.resize(line.size() + simdjson::SIMDJSON_PADDING, '\0');
  od::document document;
  if (m_parser.iterate(simdjson::padded_string_view(m_padded.data(), line.size(), m_padded.size())).get(document)) {
    return std::nullopt;
  }
  od::object root;
  if (document.get_object().get(root)) return std::nullopt;
  StreamDelta delta;
  bool type_ok = false, seen_type = false, seen_event = false, seen_parent = false;
  for (auto field : root) {
    std::string_view key;
    if (field.unescaped_key().get(key)) return std::nullopt;
    if (key == "type") {
      std::string_view type;
      if (seen_type || field.value().get_string().get(type)) return std::nullopt;
      seen_type = true;
      type_ok = type == "stream_event";
      if (!type_ok) return std::nullopt;
    } else if (key == "event") {
      od::object event;
      if (seen_event || field.value().get_object().get(event) || !read_event(event, delta)) return std::nullopt;
      seen_event = true;
    } else if (key == "parent_tool_use_id") {
      if (seen_parent) return std::nullopt;
      seen_parent = true;
      od::value value;
      if (field.value().get(value)) return std::nullopt;
      bool is_null = false;
      if (value.is_null().get(is_null)) return std::nullopt;
      if (!is_null) {
        std::string_view parent;
        // Anything but a string or null is not a parent id for the general path either: it reads none.
        if (value.get_string().get(parent)) return std::nullopt;
        delta.parent_tool_use_id.emplace(parent);
      }
    }
  }
  // Nothing but whitespace may follow the object (the general path refuses such a line as not JSON).
  // (simdjson 3.0 has no at_end(): past the last token, current_location() is out of bounds.)
  const char* trailing = nullptr;
  if (!type_ok || !seen_event || document.current_location().get(trailing) == simdjson::SUCCESS) return std::nullopt;
  return delta;
}

}  // namespace switchboard::adapters::claude
