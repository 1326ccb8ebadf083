#include "codex/CodexPermissions.h"

#include <array>

#include "common/FileDiffs.h"
#include "common/NativeJson.h"
#include "common/RulePattern.h"

namespace switchboard::adapters::codex {
namespace {

// Undoes POSIX single quoting of a whole word: 'a'\''b' → a'b. None when `text` is not exactly one such word.
std::optional<std::string> unquote_single(std::string_view text) {
  if (text.size() < 2 || text.front() != '\'') return std::nullopt;
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '\'') return std::nullopt;  // outside quotes only \' may appear between quoted parts
    const auto close = text.find('\'', i + 1);
    if (close == std::string_view::npos) return std::nullopt;
    out.append(text.substr(i + 1, close - i - 1));
    i = close + 1;
    if (i == text.size()) return out;
    if (text.substr(i, 2) != "\\'") return std::nullopt;
    out.push_back('\'');
    i += 2;
  }
  return out;
}

std::string join_paths(const nlohmann::json& changes, std::size_t limit) {
  std::string out;
  std::size_t count = 0;
  if (!changes.is_array()) return out;
  for (const auto& change : changes) {
    const std::string path = native::string_or_empty(change, "path");
    if (path.empty()) continue;
    if (count == limit) {
      out += ", …";
      break;
    }
    if (count++ > 0) out += ", ";
    out += path;
  }
  return out;
}

}  // namespace

std::string unwrap_shell_command(std::string_view command) {
  static constexpr std::array kShells{std::string_view("/bin/bash "), std::string_view("bash "),
                                      std::string_view("/bin/sh "),   std::string_view("sh "),
                                      std::string_view("/bin/zsh "),  std::string_view("zsh "),
                                      std::string_view("/usr/bin/bash "), std::string_view("/usr/bin/zsh ")};
  for (auto shell : kShells) {
    if (!command.starts_with(shell)) continue;
    std::string_view rest = command.substr(shell.size());
    for (auto flag : {std::string_view("-lc "), std::string_view("-c ")}) {
      if (!rest.starts_with(flag)) continue;
      if (auto script = unquote_single(rest.substr(flag.size()))) return *script;
    }
  }
  return std::string(command);
}

nlohmann::json command_input(const nlohmann::json& item) {
  nlohmann::json input = nlohmann::json::object();
  input["command"] = unwrap_shell_command(native::string_or_empty(item, "command"));
  if (auto cwd = native::string_at(item, "cwd")) input["cwd"] = *cwd;
  return input;
}

nlohmann::json file_change_input(const nlohmann::json& changes) {
  nlohmann::json out = nlohmann::json::array();
  if (changes.is_array()) {
    for (const auto& change : changes) {
      nlohmann::json entry = nlohmann::json::object();
      entry["path"] = native::string_or_empty(change, "path");
      const auto* kind = native::object_at(change, "kind");
      entry["kind"] = kind != nullptr ? native::string_or_empty(*kind, "type") : native::string_or_empty(change, "kind");
      if (kind != nullptr) {
        if (auto moved = native::string_at(*kind, "move_path")) entry["movePath"] = *moved;
      }
      if (auto diff = native::string_at(change, "diff")) entry["diff"] = *diff;
      out.push_back(std::move(entry));
    }
  }
  return {{"changes", std::move(out)}};
}

std::vector<protocol::FileDiff> file_change_diffs(const nlohmann::json& input) {
  std::vector<protocol::FileDiff> diffs;
  const auto* changes = native::array_at(input, "changes");
  if (changes == nullptr) return diffs;
  for (const auto& change : *changes) {
    const std::string path = native::string_or_empty(change, "path");
    if (path.empty()) continue;
    const std::string kind = native::string_or_empty(change, "kind");
    const std::string diff = native::string_or_empty(change, "diff");
    if (kind == "add") {
      diffs.push_back(whole_file(path, diff));
    } else if (kind == "delete") {
      diffs.push_back(replacement(path, diff, {}));
    } else {
      for (auto& hunk : hunks(path, diff)) diffs.push_back(std::move(hunk));
    }
  }
  return diffs;
}

PermissionAsk command_approval_ask(const nlohmann::json& params) {
  PermissionAsk ask;
  ask.tool = std::string(kShellTool);
  const auto reason = native::string_at(params, "reason");
  const auto* network = native::object_at(params, "networkApprovalContext");
  if (native::string_or_empty(params, "kind") == "network" || (network != nullptr && !native::string_at(params, "command"))) {
    // A sandboxed command wants the network: the subject is the host it wants.
    const std::string host = network != nullptr ? native::string_or_empty(*network, "host") : std::string();
    ask.input = {{"host", host}};
    if (network != nullptr) {
      if (auto protocol = native::string_at(*network, "protocol")) ask.input["protocol"] = *protocol;
    }
    ask.subject = host;
    ask.description = "Allow network access to " + (host.empty() ? std::string("the network") : host);
  } else {
    ask.input = command_input(params);
    ask.subject = ask.input["command"].get<std::string>();
    ask.description = "Run: " + ask.subject;
  }
  if (reason && !reason->empty()) {
    ask.input["reason"] = *reason;
    ask.description += " — " + *reason;
    ask.reason = *reason;
  } else {
    ask.reason = "Codex's approval policy asks before running this command";
  }
  // The exact command (or host), not Codex's proposed execpolicy prefix: our pattern is matched against the
  // whole script, so a prefix rule for `touch x` would also allow `touch x && anything`.
  ask.suggested_rule = native::exact_rule(ask.tool, ask.subject);
  return ask;
}

PermissionAsk file_change_approval_ask(const nlohmann::json& params, const nlohmann::json& changes) {
  PermissionAsk ask;
  ask.tool = std::string(kPatchTool);
  ask.input = file_change_input(changes);
  const auto& list = ask.input["changes"];
  const std::string paths = join_paths(list, 5);
  ask.description = paths.empty() ? std::string("Edit files") : "Edit " + paths;
  // One file: its path is the subject, so a path rule can answer. Several: no subject, each such ask is judged
  // (a single glob cannot say "all of these paths").
  if (list.size() == 1) ask.subject = list[0].value("path", std::string());
  if (auto root = native::string_at(params, "grantRoot"); root && !root->empty()) {
    ask.input["grantRoot"] = *root;
    ask.description += " and allow writing under " + *root + " for the rest of the session";
    ask.subject.clear();  // a grant is wider than the file: never answered by a path rule
  }
  const auto reason = native::string_at(params, "reason");
  if (reason && !reason->empty()) {
    ask.input["reason"] = *reason;
    ask.reason = *reason;
  } else {
    ask.reason = "Codex's approval policy asks before changing files";
  }
  ask.suggested_rule = native::exact_rule(ask.tool, ask.subject);
  return ask;
}

std::string error_text(const nlohmann::json& error) {
  std::string message = native::string_or_empty(error, "message");
  if (message.starts_with("{")) {
    const auto body = native::parse_line(message);
    if (const auto* inner = native::object_at(body, "error")) {
      if (auto text = native::string_at(*inner, "message"); text && !text->empty()) message = *text;
    }
  }
  if (auto details = native::string_at(error, "additionalDetails"); details && !details->empty()) message += " (" + *details + ")";
  return message.empty() ? std::string("Codex reported an error without a message") : message;
}

bool is_fatal_error(const nlohmann::json& error) {
  const auto info = native::string_at(error, "codexErrorInfo");
  return info && (*info == "unauthorized" || *info == "usageLimitExceeded" || *info == "sessionBudgetExceeded");
}

protocol::Usage request_usage(std::int64_t input, std::int64_t cached, std::int64_t output) {
  protocol::Usage usage;
  usage.input_tokens = input >= cached ? input - cached : input;
  usage.cache_read_tokens = cached;
  usage.output_tokens = output;
  return usage;
}

void add_usage(std::optional<protocol::Usage>& total, const protocol::Usage& more) {
  if (!total) {
    total = more;
    return;
  }
  const auto sum = [](std::optional<std::int64_t>& a, const std::optional<std::int64_t>& b) {
    if (b) a = a.value_or(0) + *b;
  };
  sum(total->input_tokens, more.input_tokens);
  sum(total->output_tokens, more.output_tokens);
  sum(total->cache_read_tokens, more.cache_read_tokens);
}

}  // namespace switchboard::adapters::codex
