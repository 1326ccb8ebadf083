#include "run/McpConfigFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "client/McpServerList.h"

namespace switchboard::run {
// Named, not anonymous: the module is a unity build, and PromptSource.cpp has an Outcome and a failure() of its own.
namespace mcp_config_file {

using Servers = std::vector<protocol::McpServer>;
using Outcome = std::variant<Servers, std::string>;

Outcome failure(std::string why) { return Outcome(std::in_place_index<1>, std::move(why)); }

// A config file holds a handful of servers: anything near this is not one.
constexpr std::uintmax_t kMaxConfigBytes = 1024 * 1024;

// The file's fields that are also the wire's; anything else an editor keeps there (disabled, timeout, ...) is
// not ours to pass on.
constexpr const char* kWireFields[] = {"command", "args", "env", "url", "headers"};

// One entry of the file as session.create's McpServer, for the protocol's decoder to check; else why it cannot
// be one. Its `type` is the wire's `transport`, and an entry without one is http when it has a url and no command
// (some clients leave the type out), stdio otherwise.
std::variant<nlohmann::json, std::string> wire_server(const std::string& name, const nlohmann::json& entry) {
  const std::string where = "mcpServers." + name;
  if (!entry.is_object()) return where + " must be an object";
  nlohmann::json server{{"name", name}};
  if (!entry.contains("type")) {
    server["transport"] = entry.contains("url") && !entry.contains("command") ? "http" : "stdio";
  } else if (const auto* type = entry["type"].get_ptr<const std::string*>(); type && *type != "stdio" && *type != "http") {
    return where + ".type is " + *type + ": switchboard takes stdio and http servers";
  } else {
    server["transport"] = entry["type"];  // not a string: the decoder says so, at .type
  }
  for (const char* field : kWireFields) {
    if (entry.contains(field)) server[field] = entry[field];
  }
  return server;
}

// A path the decoder reports (a JSON pointer into the wire list) as the place in the file it came from:
// "/2/env/TOKEN" is mcpServers.NAME.env.TOKEN, where NAME is the third server's.
std::string file_path(const std::string& pointer, const std::vector<std::string>& names, std::string& why) {
  std::vector<std::string> segments;
  for (std::size_t at = 1; at <= pointer.size() && !pointer.empty();) {
    const auto end = std::min(pointer.find('/', at), pointer.size());
    std::string segment = pointer.substr(at, end - at);
    for (std::size_t tilde = segment.find('~'); tilde != std::string::npos; tilde = segment.find('~', tilde + 1)) {
      segment.replace(tilde, 2, segment.compare(tilde, 2, "~1") == 0 ? "/" : "~");
    }
    segments.push_back(std::move(segment));
    at = end + 1;
  }
  std::string path = "mcpServers";
  if (segments.empty()) return path;
  const auto index = std::stoul(segments[0]);
  path += "." + (index < names.size() ? names[index] : segments[0]);
  for (std::size_t i = 1; i < segments.size(); ++i) {
    if (i == 1 && segments[i] == "name") {
      why = "its name: " + why;  // the name is the entry's key, not a field of it
      continue;
    }
    path += "." + (i == 1 && segments[i] == "transport" ? std::string("type") : segments[i]);
  }
  return path;
}

// The file's bytes, or why they cannot be had (the system's own word for it: no such file, a directory, no
// permission, too big).
std::variant<std::string, std::string> file_text(const std::filesystem::path& file) {
  const auto cannot = [](std::string why) { return std::variant<std::string, std::string>(std::in_place_index<1>, std::move(why)); };
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return cannot(std::generic_category().message(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) return cannot(std::generic_category().message(errno));
  if (S_ISDIR(info.st_mode)) return cannot("it is a directory");
  if (!S_ISREG(info.st_mode)) return cannot("it is not a regular file");
  if (static_cast<std::uintmax_t>(info.st_size) > kMaxConfigBytes) return cannot("it is over 1 MiB");
  std::string text(static_cast<std::size_t>(info.st_size), '\0');
  std::size_t done = 0;
  while (done < text.size()) {
    const auto got = ::read(fd, text.data() + done, text.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return cannot(std::generic_category().message(errno));
    if (got == 0) break;  // it shrank meanwhile: what is there is the file
    done += static_cast<std::size_t>(got);
  }
  text.resize(done);
  return std::variant<std::string, std::string>(std::in_place_index<0>, std::move(text));
}

}  // namespace mcp_config_file

std::variant<std::vector<protocol::McpServer>, std::string> parse_mcp_config(const std::string& text) {
  const auto document = nlohmann::json::parse(text, nullptr, false);
  if (document.is_discarded()) return mcp_config_file::failure("it is not JSON");
  if (!document.is_object() || !document.contains("mcpServers") || !document["mcpServers"].is_object()) {
    return mcp_config_file::failure("it needs an object \"mcpServers\": {\"NAME\": {\"command\": ...} or {\"type\": \"http\", \"url\": ...}}");
  }
  if (document["mcpServers"].empty()) return mcp_config_file::failure("mcpServers names no server");
  std::vector<std::string> names;
  auto wire = nlohmann::json::array();
  for (const auto& [name, entry] : document["mcpServers"].items()) {
    if (name.empty()) return mcp_config_file::failure("mcpServers: a server needs a name");
    auto server = mcp_config_file::wire_server(name, entry);
    if (auto* why = std::get_if<std::string>(&server)) return mcp_config_file::failure(std::move(*why));
    names.push_back(name);
    wire.push_back(std::get<nlohmann::json>(std::move(server)));
  }
  auto decoded = client::decode_mcp_servers(wire);
  if (auto* problem = std::get_if<client::McpServerProblem>(&decoded)) {
    std::string why = problem->why;
    const auto path = mcp_config_file::file_path(problem->pointer, names, why);
    return mcp_config_file::failure(path + ": " + why);
  }
  return std::get<0>(std::move(decoded));
}

std::variant<std::vector<protocol::McpServer>, std::string> read_mcp_config(const std::filesystem::path& file) {
  auto text = mcp_config_file::file_text(file);
  if (text.index() == 1) return mcp_config_file::failure(std::get<1>(std::move(text)));
  return parse_mcp_config(std::get<0>(text));
}

}  // namespace switchboard::run
