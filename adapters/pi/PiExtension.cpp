#include "pi/PiExtension.h"

#include <fstream>
#include <sstream>
#include <system_error>

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

}  // namespace

std::string_view permission_extension_source() { return kSource; }

std::variant<fs::path, std::string> install_permission_extension(const fs::path& dir) {
  const fs::path file = dir / "switchboard-permissions.ts";
  {
    std::ifstream existing(file, std::ios::binary);
    if (existing) {
      std::ostringstream content;
      content << existing.rdbuf();
      if (content.str() == kSource) return file;
    }
  }
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) return "cannot create " + dir.string() + ": " + error.message();
  // Written beside it and renamed over it: a Pi starting meanwhile never loads half a file.
  const fs::path partial = dir / "switchboard-permissions.ts.partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << kSource;
    if (!out.flush()) return "cannot write " + partial.string();
  }
  fs::rename(partial, file, error);
  if (error) return "cannot write " + file.string() + ": " + error.message();
  return file;
}

}  // namespace switchboard::adapters::pi
