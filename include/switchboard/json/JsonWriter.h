#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace switchboard::json {

// Appends compact JSON text to a caller-owned string, without building a DOM first.
//
// Why not nlohmann::json::dump(): events are the daemon's hottest path (every streamed token of every agent),
// and building a json object costs a map node per field. Generated encoders call this writer directly, so an
// event is serialized once, straight into its final buffer. Commas are inferred from the last byte written,
// which keeps the writer stateless and nestable.
//
// Strings are always emitted as valid JSON: control characters are escaped and invalid UTF-8 (agents print
// arbitrary bytes) is replaced with U+FFFD, so the output never breaks a client's parser.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : m_out(out) {}

  void begin_object() { separate(); m_out.push_back('{'); }
  void end_object() { m_out.push_back('}'); }
  void begin_array() { separate(); m_out.push_back('['); }
  void end_array() { m_out.push_back(']'); }

  // `quoted_key_colon` is a pre-escaped `"name":` literal (the generator emits them).
  void key_raw(std::string_view quoted_key_colon) {
    separate();
    m_out.append(quoted_key_colon);
  }
  void key(std::string_view name);

  void string(std::string_view text);
  void integer(std::int64_t value);
  void unsigned_integer(std::uint64_t value);
  void number(double value);
  void boolean(bool value) { separate(); m_out.append(value ? "true" : "false"); }
  void null() { separate(); m_out.append("null"); }
  void value(const nlohmann::json& value);
  // Already-serialized JSON text, trusted to be valid.
  void raw(std::string_view json_text) { separate(); m_out.append(json_text); }

  std::string& buffer() { return m_out; }

 private:
  // A value needs a comma before it unless it opens a container or follows a key.
  void separate() {
    if (m_out.empty()) return;
    const char last = m_out.back();
    if (last != '{' && last != '[' && last != ':' && last != '\n') m_out.push_back(',');
  }

  std::string& m_out;
};

// Appends `text` as a JSON string literal (with quotes) to `out`.
void append_quoted(std::string& out, std::string_view text);

// Overloads the generated encoders call for scalar fields.
inline void encode(JsonWriter& writer, const std::string& value) { writer.string(value); }
inline void encode(JsonWriter& writer, std::int64_t value) { writer.integer(value); }
inline void encode(JsonWriter& writer, double value) { writer.number(value); }
inline void encode(JsonWriter& writer, bool value) { writer.boolean(value); }
void encode(JsonWriter& writer, const nlohmann::json& value);

template <class T>
void encode(JsonWriter& writer, const std::vector<T>& values) {
  writer.begin_array();
  for (const auto& value : values) encode(writer, value);
  writer.end_array();
}

}  // namespace switchboard::json
