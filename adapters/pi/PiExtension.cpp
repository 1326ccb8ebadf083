#include "pi/PiExtension.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "switchboard/support/RandomId.h"

namespace switchboard::adapters::pi {
namespace {

namespace fs = std::filesystem;

// TypeScript, which Pi loads as it is (no build step). The tool_call hook runs after tool_execution_start and before
// the tool; blocking it turns the call into an error result the model reads. The dialog has no timeout: the
// daemon's own timeout and headless policy decide, and an abort of the turn dismisses it through ctx.signal.
constexpr std::string_view kSource = R"ts(
// Switchboard's permission gate for Pi (loaded with `pi --mode rpc -e <this file>`). Pi runs every tool without
// asking; this hook stops each call before it runs and asks the daemon through Pi's extension UI dialog
// protocol: an `input` dialog whose title marks it as ours and whose placeholder carries the call as JSON. The
// daemon answers with a JSON value {"allow": bool, "message"?: string}. No timeout is set here: the daemon's
// own timeout and headless policy decide. An abort of the turn dismisses the dialog (ctx.signal), which blocks
// the call.
export default function (pi: any) {
  pi.on("tool_call", async (event: any, ctx: any) => {
    const call = JSON.stringify({ toolCallId: event.toolCallId, toolName: event.toolName, input: event.input });
    const answer = await ctx.ui.input("switchboard:permission", call, { signal: ctx.signal });
    let decision: any = undefined;
    try {
      decision = typeof answer === "string" ? JSON.parse(answer) : undefined;
    } catch {
      decision = undefined;
    }
    if (decision && decision.allow === true) return undefined;
    const message = decision && typeof decision.message === "string" && decision.message ? decision.message : "";
    return { block: true, reason: message ? "Denied by the user: " + message : "Denied by the user" };
  });
}
)ts";

// The session's MCP servers, registered with Pi's built-in MCP support. The file the flag names holds them as
// registerMcpServer takes them, by name (PiControls.h mcp_registrations). The flag is read from the command line
// while the extension loads (getFlag answers only later): servers registered then connect as the session starts,
// and the first prompt waits for them. A fork or rewind reloads the extension, which registers them again.
constexpr std::string_view kMcpSource = R"ts(
// Switchboard's MCP servers for one Pi session (loaded with `pi --mode rpc -e <this file> --switchboard-mcp
// <servers.json>`). The daemon writes the session's servers into that file, by name, in the form Pi's
// registerMcpServer takes; Pi's built-in MCP support connects them and stops them with the session.
import { readFileSync } from "node:fs";

export default function (pi: any) {
  pi.registerFlag("switchboard-mcp", { description: "the session's MCP servers (a JSON file)", type: "string" });
  const at = process.argv.indexOf("--switchboard-mcp");
  const file = at >= 0 ? process.argv[at + 1] : undefined;
  if (typeof file !== "string" || file === "") return;
  const servers = JSON.parse(readFileSync(file, "utf8"));
  for (const [name, config] of Object.entries(servers)) {
    // A server Pi refuses (its name, say) must not keep the others out; the daemon reports it failed.
    try {
      pi.registerMcpServer(name, config);
    } catch (error) {
      console.error(`switchboard: Pi refused the MCP server ${name}: ${error}`);
    }
  }
}
)ts";

// Writes `content` as `dir`/`name`, unless the file there already holds it. Private to the user.
std::variant<fs::path, std::string> write_private_file(const fs::path& dir, const std::string& name, std::string_view content) {
  const fs::path file = dir / name;
  {
    std::ifstream existing(file, std::ios::binary);
    if (existing) {
      std::ostringstream held;
      held << existing.rdbuf();
      if (held.str() == content) return file;
    }
  }
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return "cannot create " + dir.string() + ": " + error.message();
  // Written beside it and renamed over it: a Pi starting meanwhile never reads half a file.
  const fs::path partial = dir / (name + ".partial");
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    fs::permissions(partial, fs::perms::owner_read | fs::perms::owner_write, error);
    out << content;
    if (!out.flush()) return "cannot write " + partial.string();
  }
  fs::rename(partial, file, error);
  if (error) return "cannot write " + file.string() + ": " + error.message();
  return file;
}

}  // namespace

std::string_view permission_extension_source() { return kSource; }

std::string_view mcp_extension_source() { return kMcpSource; }

std::variant<fs::path, std::string> install_permission_extension(const fs::path& dir) {
  return write_private_file(dir, "switchboard-permissions.ts", kSource);
}

std::variant<fs::path, std::string> install_mcp_extension(const fs::path& dir) {
  return write_private_file(dir, "switchboard-mcp.ts", kMcpSource);
}

std::variant<fs::path, std::string> write_mcp_servers(const fs::path& dir, const std::string& session_id, const std::string& servers) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return "cannot create " + dir.string() + ": " + error.message();
  // Created here, by us, readable by the user only from its first byte (O_EXCL: never a file or a link someone
  // put there first), under a name of its own: a Pi of the same session still running keeps its file.
  for (int attempt = 0; attempt < 4; ++attempt) {
    const fs::path file = dir / ("mcp-" + session_id + "-" + random_id("", 8) + ".json");
    const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      return "cannot create " + file.string() + ": " + std::strerror(errno);
    }
    std::size_t written = 0;
    while (written < servers.size()) {
      const auto n = ::write(fd, servers.data() + written, servers.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    const bool closed = ::close(fd) == 0;
    if (written == servers.size() && closed) return file;
    fs::remove(file, error);
    return "cannot write " + file.string();
  }
  return "cannot create a file of its own in " + dir.string();
}

}  // namespace switchboard::adapters::pi
