#include "config/SettingTable.h"

#include <algorithm>
#include <array>
#include <charconv>

#include <nlohmann/json.hpp>

#include "config/WorktreeSetupEntry.h"

namespace switchboard::config {
namespace {

constexpr std::array<std::string_view, 7> kLogLevels{"trace", "debug", "info", "warn", "error", "critical", "off"};
constexpr std::array<std::string_view, 2> kHeadlessPolicies{"deny", "allow"};

constexpr std::int64_t kKiB = 1024;
constexpr std::int64_t kGiB = kKiB * kKiB * kKiB;
constexpr std::int64_t kHour = 60 * 60 * 1000;

// clang-format off
const std::array kSpecs{
  SettingSpec{"data_dir", "--data-dir", "SWITCHBOARD_DATA_DIR", Kind::Path, &Settings::data_dir,
              "state directory: database, event log, lock (one daemon per directory)"},
  SettingSpec{"log.level", "--log-level", "SWITCHBOARD_LOG_LEVEL", Kind::Choice, &Settings::log_level,
              "least severe log level written (logs go to stderr)", 0, 0, kLogLevels},
  SettingSpec{"log.file", "--log-file", "SWITCHBOARD_LOG_FILE", Kind::Path, &Settings::log_file,
              "also append logs to this file"},
  SettingSpec{"http.host", "--host", "SWITCHBOARD_HTTP_HOST", Kind::Text, &Settings::http_host,
              "address to listen on (loopback unless http.allow_remote)"},
  SettingSpec{"http.port", "--port", "SWITCHBOARD_HTTP_PORT", Kind::Integer, &Settings::http_port,
              "port to listen on; 0 picks a free one; a taken port is followed by the next ones", 0, 65535},
  SettingSpec{"http.allow_remote", "--allow-remote", "SWITCHBOARD_HTTP_ALLOW_REMOTE", Kind::Boolean,
              &Settings::http_allow_remote, "allow a non-loopback http.host (the token stays required)"},
  SettingSpec{"http.allowed_hosts", "--allow-host", "SWITCHBOARD_HTTP_ALLOWED_HOSTS", Kind::List,
              &Settings::http_allowed_hosts, "extra host names (Host and Origin, any port) for a tunnel"},
  SettingSpec{"http.allowed_origins", "--allow-origin", "SWITCHBOARD_HTTP_ALLOWED_ORIGINS", Kind::List,
              &Settings::http_allowed_origins, "extra browser origins allowed to use the API, e.g. http://localhost:5173"},
  SettingSpec{"http.max_body_bytes", "--max-body-bytes", "SWITCHBOARD_HTTP_MAX_BODY_BYTES", Kind::Integer,
              &Settings::http_max_body_bytes, "largest POST /rpc body", kKiB, kGiB},
  SettingSpec{"http.sse_heartbeat_ms", "--sse-heartbeat-ms", "SWITCHBOARD_HTTP_SSE_HEARTBEAT_MS", Kind::Integer,
              &Settings::http_sse_heartbeat_ms, "SSE comment heartbeat interval, in milliseconds", 10, 24 * kHour},
  SettingSpec{"http.sse_replay_events", "--sse-replay-events", "SWITCHBOARD_HTTP_SSE_REPLAY_EVENTS", Kind::Integer,
              &Settings::http_sse_replay_events, "events kept in memory for Last-Event-ID replay", 1, 100'000'000},
  SettingSpec{"stdio.max_line_bytes", "--max-line-bytes", "SWITCHBOARD_STDIO_MAX_LINE_BYTES", Kind::Integer,
              &Settings::stdio_max_line_bytes, "longest request line accepted on stdin", kKiB, kGiB},
  SettingSpec{"store.max_events", "--max-stored-events", "SWITCHBOARD_STORE_MAX_EVENTS", Kind::Integer,
              &Settings::store_max_events, "event log retention: the oldest events beyond this many are deleted",
              1000, std::int64_t{1} << 40},
  SettingSpec{"permissions.headless", "--headless-policy", "SWITCHBOARD_HEADLESS_POLICY", Kind::Choice,
              &Settings::permissions_headless,
              "answer to a permission request when no client that can answer is attached", 0, 0, kHeadlessPolicies},
  SettingSpec{"permissions.timeout", "--request-timeout", "SWITCHBOARD_REQUEST_TIMEOUT", Kind::Duration,
              &Settings::permissions_timeout_ms,
              "how long a permission request or question waits for an answer (then: deny / rejected)", 10,
              30 * 24 * kHour},
  SettingSpec{"worktrees.setup", "--worktree-setup", "SWITCHBOARD_WORKTREES_SETUP", Kind::List,
              &Settings::worktrees_setup,
              "\"<repository>=<command>\": run in each new worktree of that repository before its first turn",
              0, 0, {}, false, {}, {}, &worktree_setup_entry_problem},
  SettingSpec{"worktrees.setup_timeout", "--worktree-setup-timeout", "SWITCHBOARD_WORKTREES_SETUP_TIMEOUT",
              Kind::Duration, &Settings::worktrees_setup_timeout_ms,
              "how long a worktree's set-up command may run before it is killed (the turn then fails)", 1000,
              24 * kHour},
};
// clang-format on

std::string as_toml_string(std::string_view text) { return nlohmann::json(std::string(text)).dump(); }

std::optional<std::int64_t> parse_integer(std::string_view text) {
  std::int64_t number = 0;
  const auto* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, number);
  if (error != std::errc() || at != end || text.empty()) return std::nullopt;
  return number;
}

struct DurationUnit {
  std::string_view suffix;
  std::int64_t millis;
};
// Longest suffix first, so "ms" is not read as "m".
constexpr std::array<DurationUnit, 4> kDurationUnits{{{"ms", 1}, {"s", 1000}, {"m", 60 * 1000}, {"h", kHour}}};

}  // namespace

std::optional<std::int64_t> parse_duration(std::string_view text) {
  for (const auto& unit : kDurationUnits) {
    if (text.size() <= unit.suffix.size() || !text.ends_with(unit.suffix)) continue;
    const auto number = parse_integer(text.substr(0, text.size() - unit.suffix.size()));
    if (!number || *number < 0 || *number > std::numeric_limits<std::int64_t>::max() / unit.millis) return std::nullopt;
    return *number * unit.millis;
  }
  return std::nullopt;
}

namespace {

std::string format_duration(std::int64_t millis) {
  for (auto unit = kDurationUnits.rbegin(); unit != kDurationUnits.rend(); ++unit) {
    if (millis != 0 && millis % unit->millis == 0) return std::to_string(millis / unit->millis) + std::string(unit->suffix);
  }
  return std::to_string(millis) + "ms";
}

std::optional<bool> parse_boolean(std::string_view text) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") return true;
  if (text == "false" || text == "0" || text == "no" || text == "off") return false;
  return std::nullopt;
}

std::string join(std::span<const std::string_view> items, std::string_view separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

SettingTable::SettingTable() : m_specs(kSpecs.begin(), kSpecs.end()) {}

SettingTable::SettingTable(std::span<const AgentSettingSpec> agent_settings) : SettingTable() {
  for (const auto& agent : agent_settings) {
    SettingSpec spec{agent.key, agent.flag, agent.env, agent.kind, std::monostate{}, agent.help, agent.min, agent.max};
    spec.secret = agent.secret;
    spec.fallback = agent.fallback;
    spec.fallback_in_data_dir = agent.fallback_in_data_dir;
    m_specs.push_back(spec);
  }
}

const SettingSpec* SettingTable::find(std::string_view key) const {
  for (const auto& spec : m_specs) {
    // A named spec's own spelling ("acp_agents.<name>.bin", quoted in a file) is no key of anything.
    if (spec.key == key && !is_named_key(spec.key)) return &spec;
  }
  for (const auto& spec : m_specs) {
    if (is_named_key(spec.key) && key_matches(spec.key, key)) return &spec;
  }
  return nullptr;
}

Settings SettingTable::defaults() const {
  Settings settings;
  for (const auto& spec : m_specs) {
    // A named key's default is the adapter's to apply, per name.
    if (spec.fallback.empty() || is_named_key(spec.key)) continue;
    // A fallback that does not parse is the adapter's bug; the test of every agent's defaults catches it.
    auto parsed = parse_text(spec, {std::string(spec.fallback)});
    if (auto* value = std::get_if<Value>(&parsed)) assign(settings, spec, *value);
  }
  return settings;
}

namespace {

// `pattern` with its <name> replaced by the segment of `key` in that place (kept when `key` has none).
std::string with_name_of(std::string_view pattern, std::string_view key) {
  const auto at = pattern.find(kNamedSegment);
  if (at == std::string_view::npos) return std::string(pattern);
  std::size_t segments = 0;
  for (std::size_t i = 0; i < at; ++i) segments += pattern[i] == '.' ? 1 : 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < segments; ++i) {
    start = key.find('.', start);
    if (start == std::string_view::npos) return std::string(pattern);
    ++start;
  }
  const auto end = std::min(key.find('.', start), key.size());
  return std::string(pattern.substr(0, at)) + std::string(key.substr(start, end - start)) +
         std::string(pattern.substr(at + kNamedSegment.size()));
}

}  // namespace

std::optional<std::string> SettingTable::nearest(std::string_view key) const {
  std::optional<std::string> best;
  std::size_t best_distance = 3;  // further than two edits is a different word, not a typo
  // Tables are names too: "[htp]" is a typo of "http".
  for (const auto& spec : m_specs) {
    // A named key is compared with the user's name in its place (acp_agents.gemini.bni: acp_agents.gemini.bin).
    const std::string candidate = with_name_of(spec.key, key);
    const std::string_view spelled = candidate;
    for (auto end = spelled.find('.'); ; end = spelled.find('.', end + 1)) {
      const auto name = spelled.substr(0, end);
      const auto distance = edit_distance(key, name);
      if (distance < best_distance) {
        best_distance = distance;
        best = std::string(name);
      }
      if (end == std::string_view::npos) break;
    }
  }
  return best;
}

std::string describe_kind(const SettingSpec& spec) {
  switch (spec.kind) {
    case Kind::Text: return "a non-empty string";
    case Kind::Path: return "a path";
    case Kind::Integer: return "an integer in " + std::to_string(spec.min) + ".." + std::to_string(spec.max);
    case Kind::Boolean: return "true or false";
    case Kind::Choice: return "one of " + join(spec.choices, ", ");
    case Kind::List: return "a list of strings";
    case Kind::Duration: return "a duration such as \"500ms\", \"90s\", \"30m\" or \"2h\"";
  }
  return "a value";
}

std::optional<std::string> check_value(const SettingSpec& spec, const Value& value) {
  const auto expected = [&](const std::string& got) { return "expected " + describe_kind(spec) + ", got " + got; };
  switch (spec.kind) {
    case Kind::Text:
    case Kind::Path:
      if (std::get<std::string>(value).empty()) return expected("an empty string");
      return std::nullopt;
    case Kind::Choice: {
      const auto& text = std::get<std::string>(value);
      if (std::find(spec.choices.begin(), spec.choices.end(), text) == spec.choices.end()) return expected(as_toml_string(text));
      return std::nullopt;
    }
    case Kind::Integer:
    case Kind::Duration: {
      const auto number = std::get<std::int64_t>(value);
      if (number >= spec.min && number <= spec.max) return std::nullopt;
      if (spec.kind == Kind::Integer) return expected(std::to_string(number));
      return "expected a duration from " + format_duration(spec.min) + " to " + format_duration(spec.max) + ", got " +
             format_duration(number);
    }
    case Kind::List:
      for (const auto& item : std::get<std::vector<std::string>>(value)) {
        if (item.empty()) return "expected non-empty strings, got an empty one";
        if (spec.check_item != nullptr) {
          if (auto problem = spec.check_item(item)) return problem;
        }
      }
      return std::nullopt;
    case Kind::Boolean: return std::nullopt;
  }
  return std::nullopt;
}

std::variant<Value, std::string> parse_text(const SettingSpec& spec, const std::vector<std::string>& texts) {
  if (spec.kind == Kind::List) {
    Value list = texts;
    if (auto problem = check_value(spec, list)) return *problem;
    return list;
  }
  const std::string text = texts.empty() ? std::string() : texts.back();
  const auto expected = [&] { return "expected " + describe_kind(spec) + ", got " + as_toml_string(text); };
  Value value;
  switch (spec.kind) {
    case Kind::Text:
    case Kind::Path:
    case Kind::Choice: value = text; break;
    case Kind::Integer: {
      const auto number = parse_integer(text);
      if (!number) return expected();
      value = *number;
      break;
    }
    case Kind::Duration: {
      const auto millis = parse_duration(text);
      if (!millis) return expected();
      value = *millis;
      break;
    }
    case Kind::Boolean: {
      const auto flag = parse_boolean(text);
      if (!flag) return expected();
      value = *flag;
      break;
    }
    case Kind::List: break;  // handled above
  }
  if (auto problem = check_value(spec, value)) return *problem;
  return value;
}

void assign(Settings& settings, const SettingSpec& spec, const Value& value) { assign(settings, spec, spec.key, value); }

void assign(Settings& settings, const SettingSpec& spec, std::string_view key, const Value& value) {
  std::visit(
      [&](auto member) {
        if constexpr (std::is_same_v<decltype(member), std::monostate>) {
          settings.agents.set(key, value);
        } else if constexpr (std::is_same_v<std::remove_reference_t<decltype(settings.*member)>, std::optional<std::string>>) {
          settings.*member = std::get<std::string>(value);
        } else {
          settings.*member = std::get<std::remove_reference_t<decltype(settings.*member)>>(value);
        }
      },
      spec.member);
}

std::optional<Value> read(const Settings& settings, const SettingSpec& spec) {
  return std::visit(
      [&](auto member) -> std::optional<Value> {
        if constexpr (std::is_same_v<decltype(member), std::monostate>) {
          const auto* value = settings.agents.find(spec.key);
          return value == nullptr ? std::nullopt : std::optional<Value>(*value);
        } else if constexpr (std::is_same_v<std::remove_cvref_t<decltype(settings.*member)>, std::optional<std::string>>) {
          const auto& field = settings.*member;
          return field ? std::optional<Value>(*field) : std::nullopt;
        } else {
          return Value(settings.*member);
        }
      },
      spec.member);
}

std::vector<std::pair<std::string, Value>> named_values(const Settings& settings, const SettingSpec& spec) {
  std::vector<std::pair<std::string, Value>> found;
  if (!is_named_key(spec.key)) return found;
  for (const auto& [key, value] : settings.agents.values()) {
    if (key_matches(spec.key, key)) found.emplace_back(key, value);
  }
  return found;
}

std::string format_value(const SettingSpec& spec, const Value& value) {
  if (spec.kind == Kind::Duration) return as_toml_string(format_duration(std::get<std::int64_t>(value)));
  return std::visit(
      [](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::string>) {
          return as_toml_string(v);
        } else if constexpr (std::is_same_v<V, bool>) {
          return v ? "true" : "false";
        } else if constexpr (std::is_same_v<V, std::int64_t>) {
          return std::to_string(v);
        } else {
          std::string out = "[";
          for (const auto& item : v) out += (out.size() > 1 ? ", " : "") + as_toml_string(item);
          return out + "]";
        }
      },
      value);
}

}  // namespace switchboard::config
