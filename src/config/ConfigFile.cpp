#include "config/ConfigFile.h"

#include <toml++/toml.h>

namespace switchboard::config {
namespace {

// Thrown inside this file only, caught in parse_config_text: the first problem ends the reading.
struct FileProblem {
  std::string message;
};

std::string type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

bool is_table_of_settings(const SettingTable& table, std::string_view prefix) {
  for (const auto& spec : table.specs()) {
    if (key_matches(spec.key, prefix, true) && !key_matches(spec.key, prefix)) return true;
  }
  return false;
}

// Whether `key` would lead to a named key but for its name ("acp_agents.My Agent").
bool any_invalid_name(const SettingTable& table, std::string_view key) {
  for (const auto& spec : table.specs()) {
    if (is_named_key(spec.key) && has_invalid_name(spec.key, key)) return true;
  }
  return false;
}

// Whether `key` is the table of one named thing ("acp_agents.gemini").
bool names_one_thing(const SettingTable& table, std::string_view key) {
  for (const auto& spec : table.specs()) {
    if (is_named_key(spec.key) && names_one(spec.key, key)) return true;
  }
  return false;
}

// "acp_agents.<name>" for a key that stands where a named table belongs (for a hint).
std::string named_table_of(const SettingTable& table, std::string_view key) {
  for (const auto& spec : table.specs()) {
    if (!is_named_key(spec.key)) continue;
    const auto at = spec.key.find(kNamedSegment);
    if (key.starts_with(spec.key.substr(0, at))) return std::string(spec.key.substr(0, at + kNamedSegment.size()));
  }
  return {};
}

class Reader {
 public:
  Reader(const SettingTable& table, const std::string& path, const std::optional<std::string>& home)
      : m_table(table), m_path(path), m_home(home) {}

  std::vector<FileValue> read(const toml::table& root) {
    walk(root, "");
    return std::move(m_values);
  }

 private:
  [[noreturn]] void fail(std::uint32_t line, std::string_view key, const std::string& what) const {
    throw FileProblem{m_path + ":" + std::to_string(line) + ": " + std::string(key) + ": " + what};
  }

  void walk(const toml::table& table, const std::string& prefix) {
    for (const auto& [name, node] : table) {
      const std::string key = prefix.empty() ? std::string(name.str()) : prefix + "." + std::string(name.str());
      if (const auto* spec = m_table.find(key)) {
        m_values.push_back(FileValue{spec, key, convert(*spec, key, node), node.source().begin.line});
        continue;
      }
      if (any_invalid_name(m_table, key)) fail(name.source().begin.line, key, std::string(kNameRule));
      if (is_table_of_settings(m_table, key)) {
        const bool named = names_one_thing(m_table, key);
        if (const auto* inner = node.as_table()) {
          // An empty table would name nothing at all: say so rather than leave the user wondering.
          if (named && inner->empty()) fail(node.source().begin.line, key, "an empty table configures nothing: give it its settings");
          walk(*inner, key);
          continue;
        }
        std::string what = "expected a table of settings, got " + type_name(node);
        if (named) what += " (each one is a table of its own: [" + named_table_of(m_table, key) + "])";
        fail(node.source().begin.line, key, what);
      }
      std::string what = "unknown key";
      if (const auto near = m_table.nearest(key)) what += " (did you mean " + std::string(*near) + "?)";
      fail(name.source().begin.line, key, what + "; docs/configuration.md lists every key");
    }
  }

  [[noreturn]] void wrong_type(const SettingSpec& spec, std::string_view key, const toml::node& node) const {
    fail(node.source().begin.line, key, "expected " + describe_kind(spec) + ", got " + type_name(node));
  }

  // `key` is the key as written: the spec's own, or one a named spec stands for.
  Value convert(const SettingSpec& spec, std::string_view key, const toml::node& node) const {
    const auto line = node.source().begin.line;
    Value value;
    switch (spec.kind) {
      case Kind::Text:
      case Kind::Choice:
        if (!node.is_string()) wrong_type(spec, key, node);
        value = node.as_string()->get();
        break;
      case Kind::Path:
        if (!node.is_string()) wrong_type(spec, key, node);
        value = absolute_path(key, line, node.as_string()->get());
        break;
      case Kind::Integer:
        if (!node.is_integer()) wrong_type(spec, key, node);
        value = node.as_integer()->get();
        break;
      case Kind::Boolean:
        if (!node.is_boolean()) wrong_type(spec, key, node);
        value = node.as_boolean()->get();
        break;
      case Kind::Duration: {
        if (!node.is_string()) wrong_type(spec, key, node);
        auto parsed = parse_text(spec, {node.as_string()->get()});
        if (auto* problem = std::get_if<std::string>(&parsed)) fail(line, key, *problem);
        return std::get<Value>(parsed);
      }
      case Kind::List: {
        const auto* array = node.as_array();
        if (array == nullptr) wrong_type(spec, key, node);
        std::vector<std::string> items;
        for (const auto& item : *array) {
          if (!item.is_string()) {
            fail(item.source().begin.line, key, "expected a list of strings, got " + type_name(item) + " in it");
          }
          items.push_back(item.as_string()->get());
        }
        value = std::move(items);
        break;
      }
    }
    if (auto problem = check_value(spec, value)) fail(line, key, *problem);
    return value;
  }

  std::string absolute_path(std::string_view key, std::uint32_t line, const std::string& text) const {
    if (text.starts_with("~/")) {
      if (!m_home) fail(line, key, "cannot expand ~/: HOME is not set");
      return *m_home + text.substr(1);
    }
    if (!text.starts_with("/")) {
      fail(line, key, "expected an absolute path or one starting with ~/, got \"" + text + "\"");
    }
    return text;
  }

  const SettingTable& m_table;
  const std::string& m_path;
  const std::optional<std::string>& m_home;
  std::vector<FileValue> m_values;
};

}  // namespace

std::variant<std::vector<FileValue>, std::string> parse_config_text(const SettingTable& table, std::string_view text,
                                                                    const std::string& path,
                                                                    const std::optional<std::string>& home) {
  toml::table root;
  try {
    root = toml::parse(text, path);
  } catch (const toml::parse_error& error) {
    const auto& where = error.source().begin;
    return path + ":" + std::to_string(where.line) + ":" + std::to_string(where.column) +
           ": syntax error: " + std::string(error.description());
  }
  try {
    return Reader(table, path, home).read(root);
  } catch (const FileProblem& problem) {
    return problem.message;
  }
}

}  // namespace switchboard::config
