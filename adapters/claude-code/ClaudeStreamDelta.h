#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <simdjson.h>

#include "switchboard/protocol/generated/Types.h"

namespace switchboard::adapters::claude {

// A streamed piece of text or thinking: what a `stream_event` line whose event is a `content_block_delta` of type
// `text_delta` or `thinking_delta` carries.
struct StreamDelta {
  std::int64_t index = 0;
  protocol::DeltaKind kind = protocol::DeltaKind::Text;
  std::string text;
  std::optional<std::string> parent_tool_use_id;
};

// Reads such lines without building a DOM. They are nearly every line of a streamed answer, and parsing each into
// nlohmann::json (and freeing it) was about half of the daemon's CPU per token; simdjson's on-demand parser reads
// the few fields they need in a fraction of that.
//
// Anything else — another type, another event or delta type, a field of an unexpected type, a repeated member,
// trailing bytes, invalid JSON — is left to the general path (nothing is returned), which then reads the line
// exactly as it would have anyway, with its error accounting. So this reader decides only how fast a line is
// read, never what it means.
class StreamDeltaReader {
 public:
  std::optional<StreamDelta> read(std::string_view line);

 private:
  simdjson::ondemand::parser m_parser;
  std::string m_padded;  // the line, with the zeroed padding simdjson reads past the end of its input
};

}  // namespace switchboard::adapters::claude
