#include "process/ExecShim.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>

namespace switchboard::process {

namespace {

constexpr std::string_view kParentPidFlag = "--parent-pid=";
constexpr std::string_view kExecFlag = "--exec=";
constexpr int kExitUsage = 2;
constexpr int kExitCannotExecute = 126;
constexpr int kExitNotFound = 127;

}  // namespace

bool is_exec_shim_call(int argc, char** argv) {
  return argc >= 2 && argv[1] != nullptr && std::string_view(argv[1]) == kExecShimCommand;
}

std::vector<std::string> exec_shim_argv(const std::string& shim_path, pid_t parent_pid, const std::string& executable,
                                        const std::vector<std::string>& argv) {
  std::vector<std::string> out;
  out.reserve(argv.size() + 5);
  out.push_back(shim_path);
  out.emplace_back(kExecShimCommand);
  out.push_back(std::string(kParentPidFlag) + std::to_string(parent_pid));
  out.push_back(std::string(kExecFlag) + executable);
  out.emplace_back("--");
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

int run_exec_shim(int argc, char** argv) {
  // argv: [0] shim, [1] __exec-shim, [2] --parent-pid=P, [3] --exec=PATH, [4] --, [5] ARGV0, [6..] ARGS
  if (!is_exec_shim_call(argc, argv) || argc < 6 || std::string_view(argv[4]) != "--") {
    std::fprintf(stderr, "switchboard exec shim: usage: %s %s --parent-pid=PID --exec=PATH -- ARGV0 [ARGS...]\n",
                 argv[0], kExecShimCommand.data());
    return kExitUsage;
  }
  const std::string_view parent_arg(argv[2]);
  const std::string_view exec_arg(argv[3]);
  if (!parent_arg.starts_with(kParentPidFlag) || !exec_arg.starts_with(kExecFlag)) {
    std::fprintf(stderr, "switchboard exec shim: expected --parent-pid= and --exec=\n");
    return kExitUsage;
  }
  const std::string_view parent_text = parent_arg.substr(kParentPidFlag.size());
  pid_t parent = 0;
  const auto parsed = std::from_chars(parent_text.data(), parent_text.data() + parent_text.size(), parent);
  if (parsed.ec != std::errc() || parsed.ptr != parent_text.data() + parent_text.size() || parent <= 0) {
    std::fprintf(stderr, "switchboard exec shim: bad parent pid\n");
    return kExitUsage;
  }

  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) {
    std::fprintf(stderr, "switchboard exec shim: prctl(PR_SET_PDEATHSIG): %s\n", std::strerror(errno));
    return kExitCannotExecute;
  }
  // The daemon may have died between the spawn and the prctl; then nobody would ever send the signal.
  if (::getppid() != parent) ::raise(SIGKILL);

  const char* executable = exec_arg.data() + kExecFlag.size();
  ::execv(executable, argv + 5);
  const int error = errno;
  std::fprintf(stderr, "switchboard exec shim: cannot execute %s: %s\n", executable, std::strerror(error));
  return error == ENOENT || error == ENOTDIR ? kExitNotFound : kExitCannotExecute;
}

}  // namespace switchboard::process
