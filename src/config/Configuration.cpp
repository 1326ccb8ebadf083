#include "config/Configuration.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/ConfigFile.h"
#include "config/SettingTable.h"

namespace switchboard::config {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kConfigVariable = "SWITCHBOARD_CONFIG";

// A path given on the command line or in the environment is relative to where the user is; the daemon keeps it
// absolute so that `switchboard config` shows what will really be used.
std::string absolute(const std::string& path) {
  std::error_code error;
  const auto made = fs::absolute(path, error);
  return error ? path : made.lexically_normal().string();
}

std::optional<std::string> non_empty_variable(const ConfigSources& sources, const std::string& name) {
  auto value = sources.environment(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::optional<std::string> absolute_variable(const ConfigSources& sources, const std::string& name) {
  auto value = sources.environment(name);
  if (value && fs::path(*value).is_absolute()) return value;
  return std::nullopt;  // XDG base directories must be absolute; a relative one is ignored, as the spec says
}

// $XDG_DATA_HOME/switchboard, else ~/.local/share/switchboard (DataDirectory's rule, minus the variable, which
// is the environment layer here).
std::string default_data_dir(const ConfigSources& sources) {
  if (auto xdg = absolute_variable(sources, "XDG_DATA_HOME")) return (fs::path(*xdg) / "switchboard").string();
  const auto home = non_empty_variable(sources, "HOME").value_or("/tmp");
  return (fs::path(home) / ".local" / "share" / "switchboard").string();
}

std::string default_config_file(const ConfigSources& sources) {
  if (auto xdg = absolute_variable(sources, "XDG_CONFIG_HOME")) return (fs::path(*xdg) / "switchboard" / "config.toml").string();
  const auto home = non_empty_variable(sources, "HOME").value_or("/tmp");
  return (fs::path(home) / ".config" / "switchboard" / "config.toml").string();
}

// The file's text; none when an optional file is absent; the error otherwise.
std::variant<std::optional<std::string>, std::string> read_file(const std::string& path, bool must_exist) {
  std::error_code error;
  const auto status = fs::status(path, error);
  if (!must_exist && status.type() == fs::file_type::not_found) return std::optional<std::string>();
  if (status.type() == fs::file_type::directory) return path + ": cannot read the config file: it is a directory";
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot read the config file: " + std::strerror(errno);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return path + ": cannot read the config file: " + std::strerror(errno);
  return std::optional<std::string>(text.str());
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    auto item = text.substr(start, end - start);
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) items.push_back(item.substr(first, last - first + 1));
    start = end + 1;
  }
  return items;
}

class Merge {
 public:
  explicit Merge(const ConfigSources& sources) : m_sources(sources) {
    m_config.table = sources.table;
    m_config.settings = sources.table.defaults();
    for (const auto& spec : sources.table.specs()) m_config.origins[std::string(spec.key)] = Origin{};
    m_config.settings.data_dir = default_data_dir(sources);
  }

  std::optional<std::string> file_layer() {
    bool must_exist = true;
    if (m_sources.config_file) {
      m_config.file = absolute(*m_sources.config_file);
      m_config.file_chosen_by = "--config";
    } else if (auto variable = m_sources.environment(std::string(kConfigVariable)); variable && !variable->empty()) {
      m_config.file = absolute(*variable);
      m_config.file_chosen_by = std::string(kConfigVariable);
    } else {
      m_config.file = default_config_file(m_sources);
      m_config.file_chosen_by = "default";
      must_exist = false;
    }
    auto text = read_file(m_config.file, must_exist);
    if (auto* error = std::get_if<std::string>(&text)) return *error;
    const auto& contents = std::get<std::optional<std::string>>(text);
    if (!contents) return std::nullopt;
    m_config.file_found = true;
    auto values = parse_config_text(m_sources.table, *contents, m_config.file, non_empty_variable(m_sources, "HOME"));
    if (auto* error = std::get_if<std::string>(&values)) return *error;
    for (const auto& value : std::get<std::vector<FileValue>>(values)) {
      set(*value.spec, value.key, value.value, Origin{Origin::Layer::File, m_config.file + ":" + std::to_string(value.line)});
    }
    return std::nullopt;
  }

  std::optional<std::string> environment_layer() {
    for (const auto& spec : m_sources.table.specs()) {
      if (spec.env.empty()) continue;  // a named key: the config file's only
      const std::string name(spec.env);
      const auto text = m_sources.environment(name);
      if (!text || text->empty()) continue;
      const auto texts = spec.kind == Kind::List ? split_list(*text) : std::vector<std::string>{*text};
      if (auto error = take(spec, texts, Origin{Origin::Layer::Environment, name})) return name + ": " + *error;
    }
    return std::nullopt;
  }

  std::optional<std::string> flag_layer() {
    for (const auto& [key, texts] : m_sources.flags) {
      const auto* spec = m_sources.table.find(key);
      if (spec == nullptr) return "no setting named " + key;  // a bug in the flag registration, not the user's
      const std::string flag(spec->flag);
      if (auto error = take(*spec, texts, Origin{Origin::Layer::Flag, flag})) return flag + ": " + *error;
    }
    return std::nullopt;
  }

  Configuration finish() {
    // A key whose default lives in the data directory (Codex's private home) is derived after the merge, so a
    // data_dir from any layer moves it too.
    for (const auto& spec : m_sources.table.specs()) {
      if (spec.fallback_in_data_dir.empty() || is_named_key(spec.key) || read(m_config.settings, spec)) continue;
      assign(m_config.settings, spec, (fs::path(m_config.settings.data_dir) / spec.fallback_in_data_dir).string());
    }
    return std::move(m_config);
  }

 private:
  std::optional<std::string> take(const SettingSpec& spec, const std::vector<std::string>& texts, Origin origin) {
    auto parsed = parse_text(spec, texts);
    if (auto* problem = std::get_if<std::string>(&parsed)) return std::string(spec.key) + ": " + *problem;
    auto value = std::get<Value>(std::move(parsed));
    if (spec.kind == Kind::Path) value = absolute(std::get<std::string>(value));
    set(spec, spec.key, value, std::move(origin));
    return std::nullopt;
  }

  void set(const SettingSpec& spec, std::string_view key, const Value& value, Origin origin) {
    assign(m_config.settings, spec, key, value);
    m_config.origins[std::string(key)] = std::move(origin);
  }

  const ConfigSources& m_sources;
  Configuration m_config;
};

}  // namespace

std::string describe(const Origin& origin) {
  switch (origin.layer) {
    case Origin::Layer::Default: return "default";
    case Origin::Layer::File: return origin.where;
    case Origin::Layer::Environment: return "env " + origin.where;
    case Origin::Layer::Flag: return "flag " + origin.where;
  }
  return "default";
}

std::variant<Configuration, std::string> load_configuration(const ConfigSources& sources) {
  // Lowest layer first: each one overwrites what the layers below it set.
  Merge merge(sources);
  if (auto error = merge.file_layer()) return *error;
  if (auto error = merge.environment_layer()) return *error;
  if (auto error = merge.flag_layer()) return *error;
  return merge.finish();
}

std::string render(const Configuration& configuration) {
  std::vector<std::pair<std::string, std::string>> lines;
  for (const auto& spec : configuration.table.specs()) {
    if (is_named_key(spec.key)) {
      // One line per name the file gave; a pattern nobody used is listed as not set.
      const auto values = named_values(configuration.settings, spec);
      for (const auto& [key, value] : values) {
        lines.emplace_back(key + " = " + (spec.secret ? std::string("<hidden>") : format_value(spec, value)),
                           describe(configuration.origins.at(key)));
      }
      if (values.empty()) lines.emplace_back("# " + std::string(spec.key) + " is not set", "default");
      continue;
    }
    const auto value = read(configuration.settings, spec);
    std::string line(spec.key);
    if (!value) {
      line += " is not set";
      line.insert(0, "# ");
    } else if (spec.secret) {
      line += " = <hidden>";
    } else {
      line += " = " + format_value(spec, *value);
    }
    lines.emplace_back(std::move(line), describe(configuration.origins.at(std::string(spec.key))));
  }
  std::size_t width = 0;
  for (const auto& [line, origin] : lines) width = std::max(width, std::min<std::size_t>(line.size(), 64));
  std::string out = "# switchboard configuration: flags > environment > config file > defaults\n";
  out += "# config file: " + configuration.file + " (" +
         (configuration.file_chosen_by == "default" ? std::string("default location") : "from " + configuration.file_chosen_by) +
         (configuration.file_found ? ")" : "; not found)") + "\n";
  for (const auto& [line, origin] : lines) {
    out += line;
    out.append(line.size() < width ? width - line.size() : 0, ' ');
    out += "  # " + origin + "\n";
  }
  return out;
}

std::optional<std::string> process_environment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

}  // namespace switchboard::config
