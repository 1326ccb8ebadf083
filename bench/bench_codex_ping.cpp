// bench_codex_ping: the round trip of a cheap request to `codex app-server` directly, next to `ping` to
// `switchboard stdio`, measured by the same client in the same run.
//
//   bench_codex_ping [CODEX] [SWITCHBOARD]
//
// CODEX defaults to `scripts/agent-path codex` (install it with scripts/install-agents codex); SWITCHBOARD to the
// binary built next to this benchmark. Both servers are spawned with stdin/stdout on pipes. Codex gets a private
// CODEX_HOME in a temporary directory (its config points at a provider on 127.0.0.1 that is never asked: the cheap
// request, `thread/loaded/list`, answers from memory), so the user's own Codex configuration is never read.
//
// The client is the one a TUI would be: one write() per request, a blocking read up to the response's '\n'.
// The two servers are measured in alternating blocks, so a noisy neighbour on this shared machine costs both
// the same. Target (issue 6): switchboard's median and p99 at most a quarter of Codex's.
//
// Not a test: it prints figures. It exits non-zero only if a server misbehaves (wrong answer, early exit).

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "BenchSupport.h"

#ifndef SWITCHBOARD_BINARY
#define SWITCHBOARD_BINARY "switchboard"
#endif
#ifndef SWITCHBOARD_SOURCE_DIR
#define SWITCHBOARD_SOURCE_DIR "."
#endif

namespace {

using namespace bench;
namespace fs = std::filesystem;

constexpr int kWarmup = 1'000;
constexpr int kBlocks = 20;
constexpr int kPerBlock = 500;
constexpr double kTargetRatio = 0.25;

std::string agent_path(const std::string& name) {
  // Appended in place: GCC 12 falsely reports -Warray-bounds in `std::string(SWITCHBOARD_SOURCE_DIR) + "..."` for
  // some lengths of the checkout's path.
  std::string command = SWITCHBOARD_SOURCE_DIR;
  command += "/scripts/agent-path ";
  command += name;
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) die("popen");
  char buffer[4096];
  std::string path;
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) path += buffer;
  if (::pclose(pipe) != 0) fail("no codex CLI: run scripts/install-agents codex, or pass its path as the first argument");
  while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
  return path;
}

// One server under test: how to spawn it and what its cheap request looks like.
struct Server {
  const char* name;
  Child child;
  LineReader reader;
  std::string method;
  std::string jsonrpc_member;  // Codex's wire has no "jsonrpc" member
  std::int64_t next_id = 1;
  std::vector<double> samples;

  Server(const char* server_name, Child spawned, std::string cheap_method, std::string member)
      : name(server_name), child(spawned), reader(spawned.from_child), method(std::move(cheap_method)),
        jsonrpc_member(std::move(member)) {}

  std::string request(std::int64_t id, const std::string& request_method, const std::string& params) const {
    return "{" + jsonrpc_member + R"("id":)" + std::to_string(id) + R"(,"method":")" + request_method +
           R"(","params":)" + params + "}\n";
  }

  // Reads up to the response to `id`, skipping notifications and the server's own requests.
  void await(std::int64_t id) {
    std::string_view line;
    for (;;) {
      if (!reader.next(line)) fail(std::string(name) + " closed its stdout while a response was expected");
      if (is_result_for(line, id)) return;
      if (line.find("\"method\"") != std::string_view::npos) continue;
      fail(std::string(name) + ": unexpected line: " + std::string(line.substr(0, 300)));
    }
  }

  void call(const std::string& request_method, const std::string& params) {
    const auto id = next_id++;
    write_all(child.to_child, request(id, request_method, params));
    await(id);
  }

  void run(int count, bool keep) {
    for (int i = 0; i < count; ++i) {
      const auto id = next_id++;
      const std::string line = request(id, method, "{}");
      const auto start = Clock::now();
      write_all(child.to_child, line);
      await(id);
      if (keep) samples.push_back(micros(Clock::now() - start));
    }
  }
};

// A private CODEX_HOME whose config never reaches the network.
fs::path make_codex_home(const fs::path& scratch) {
  const fs::path home = scratch / ".codex";
  fs::create_directories(home);
  std::ofstream(home / "config.toml") << R"(model = "mock-model"
model_provider = "bench"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.bench]
name = "bench"
base_url = "http://127.0.0.1:9/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
unbounded_connection_retries = false
)";
  return home;
}

void print(const char* name, const Stats& s) {
  std::printf("  %-34s median %7.1f us   p90 %7.1f us   p99 %7.1f us   max %8.1f us\n", name, s.median, s.p90, s.p99,
              s.max);
}

}  // namespace

int main(int argc, char** argv) {
  bench::g_program = "bench_codex_ping";
  std::signal(SIGPIPE, SIG_IGN);
  const std::string codex = argc > 1 ? argv[1] : agent_path("codex");
  const std::string switchboard = argc > 2 ? argv[2] : SWITCHBOARD_BINARY;

  std::string scratch_template_text = (std::filesystem::temp_directory_path() / "bench-codex-XXXXXX").string();
  char* scratch_template = scratch_template_text.data();
  if (::mkdtemp(scratch_template) == nullptr) die("mkdtemp");
  const fs::path scratch = scratch_template;
  const fs::path codex_home = make_codex_home(scratch);
  std::vector<std::string> env_strings{"PATH=" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin"),
                                       "HOME=" + scratch.string(), "CODEX_HOME=" + codex_home.string(),
                                       "RUST_LOG=error"};
  std::vector<char*> env;
  for (auto& entry : env_strings) env.push_back(entry.data());
  env.push_back(nullptr);

  std::printf("bench_codex_ping: %u CPUs online\n  codex:       %s app-server\n  switchboard: %s stdio\n\n",
              std::thread::hardware_concurrency(), codex.c_str(), switchboard.c_str());

  Server codex_server("codex app-server: thread/loaded/list", spawn({codex, "app-server"}, env.data(), true),
                      "thread/loaded/list", "");
  codex_server.call("initialize", R"({"clientInfo":{"name":"bench","version":"0"}})");
  write_all(codex_server.child.to_child, R"({"method":"initialized","params":{}})"
                                         "\n");
  Server ours("switchboard stdio: ping",
              spawn({switchboard, "stdio", "--log-level", "off", "--ephemeral", "--data-dir", (scratch / "data").string()}),
              "ping", R"("jsonrpc":"2.0",)");
  ours.call("initialize", R"({"protocolVersion":1,"clientInfo":{"name":"bench"}})");

  codex_server.run(kWarmup, false);
  ours.run(kWarmup, false);
  for (int block = 0; block < kBlocks; ++block) {
    codex_server.run(kPerBlock, true);
    ours.run(kPerBlock, true);
  }
  const Stats theirs = stats_of(codex_server.samples);
  const Stats mine = stats_of(ours.samples);
  std::printf("Sequential round trips, %d per server in %d alternating blocks (+%d warm-up each):\n",
              kBlocks * kPerBlock, kBlocks, kWarmup);
  print(codex_server.name, theirs);
  print(ours.name, mine);
  const double median_ratio = mine.median / theirs.median;
  const double p99_ratio = mine.p99 / theirs.p99;
  std::printf("\n  switchboard / codex: median %.2f   p99 %.2f   (target <= %.2f: %s, %s)\n", median_ratio, p99_ratio,
              kTargetRatio, verdict(median_ratio, kTargetRatio), verdict(p99_ratio, kTargetRatio));

  const int codex_status = finish(codex_server.child, codex_server.reader);
  const int our_status = finish(ours.child, ours.reader);
  std::error_code ignored;
  fs::remove_all(scratch, ignored);
  if (our_status != 0) fail("switchboard exited with status " + std::to_string(our_status));
  std::printf("  both exited after stdin was closed (codex %d, switchboard %d)\n", codex_status, our_status);
  return 0;
}
