// bench_history: what years of history cost a daemon (issue 37): start to ready, a session.list page and a
// session.search, at a data directory of N sessions and M events.
//
// 1. Generates the data directory through the daemon's own store code (store::Store, SessionStore, EventTable:
//    the same SQL, the same search index, the schema as it is now), unless it exists already: N sessions of
//    two agents in ten directories, each with M/N events in turns of five (a prompt, an answer, a tool call, its
//    output, the turn's end). Texts are drawn from a synthetic vocabulary; the word "needle" is in 0.1 % of the
//    events, "w400" in about 0.5 %, "w7" in about a fifth.
// 2. Spawns the real binary (`switchboard stdio --standalone` on that data directory, logging off, retention
//    above M) and measures, as a client over pipes sees it:
//    - start to ready: from posix_spawn to the answer of `initialize` (median of several starts);
//    - session.list: a page of 50, newest first, filtered by agent, and by text: one in a tenth of the sessions,
//      one in 1,111 of them, one in 11, one in none (median and p99);
//    - session.search: a word in 0.1 % of the events, one in 0.5 %, a common one (median and p99; 20 hits);
//    - the daemon's resident memory after one idle second.
//
// Usage: bench_history [--sessions N] [--events M] [--dir DIR] [--binary PATH]   (also --name=VALUE)
//        (default 1000 sessions, 100000 events, DIR a new directory under /tmp, kept for later runs)

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <spdlog/spdlog.h>

#include "BenchSupport.h"
#include "store/Database.h"
#include "store/EventFields.h"
#include "store/EventTable.h"
#include "store/Store.h"

#ifndef SWITCHBOARD_BINARY
#define SWITCHBOARD_BINARY "switchboard"
#endif

namespace {

using namespace bench;
namespace fs = std::filesystem;
namespace store = switchboard::store;
namespace p = switchboard::protocol;

constexpr int kStarts = 5;
constexpr int kListCalls = 200;
constexpr int kSearchCalls = 50;
constexpr std::size_t kBatch = 8192;
constexpr std::int64_t kFirstTs = 1'700'000'000'000;

struct Options {
  std::size_t sessions = 1000;
  std::size_t events = 100'000;
  fs::path dir;
  std::string binary = SWITCHBOARD_BINARY;
};

std::string session_id(std::size_t i) { return "s-bench-" + std::to_string(i); }

// A text of `words` words from the vocabulary (deterministic in the generator's state), with "needle" in one
// event of every 1,000.
std::string text_for(std::minstd_rand& random, int words) {
  std::string text;
  for (int i = 0; i < words; ++i) {
    if (!text.empty()) text += ' ';
    // Zipf-like: small numbers far more often, so common words are common.
    const auto rank = static_cast<unsigned>(std::pow(5000.0, std::generate_canonical<double, 32>(random)));
    text += 'w';
    text += std::to_string(rank);
  }
  // Four events in five have a text (a turn's end has none): one text in 800 is one event in 1,000.
  static std::uint64_t texts = 0;
  if (++texts % 800 == 0) text += " needle";
  return text;
}

switchboard::bus::EncodedEventPtr make_event(std::uint64_t seq, const std::string& session, std::size_t turn, int step,
                                             std::minstd_rand& random) {
  auto event = std::make_shared<switchboard::bus::EncodedEvent>();
  event->seq = seq;
  event->session_id = session;
  const std::string turn_id = "t-" + std::to_string(turn);
  std::string data = "{\"turnId\":\"" + turn_id + "\"";
  switch (step) {
    case 0:
      event->kind = p::EventKind::TurnStarted;
      data += ",\"text\":\"" + text_for(random, 12) + "\"}";
      break;
    case 1:
      event->kind = p::EventKind::MessageCompleted;
      data += ",\"messageId\":\"m-" + std::to_string(seq) + "\",\"role\":\"assistant\",\"kind\":\"text\",\"text\":\"" +
              text_for(random, 40) + "\"}";
      break;
    case 2:
      event->kind = p::EventKind::ToolStarted;
      data += ",\"toolCallId\":\"c-" + std::to_string(seq) + "\",\"tool\":\"Bash\",\"input\":{\"command\":\"grep " +
              text_for(random, 3) + "\"}}";
      break;
    case 3:
      event->kind = p::EventKind::ToolCompleted;
      data += ",\"toolCallId\":\"c-" + std::to_string(seq - 1) + "\",\"output\":\"" + text_for(random, 30) +
              "\",\"isError\":false}";
      break;
    default:
      event->kind = p::EventKind::TurnStopped;
      data += ",\"stopReason\":\"end_turn\",\"text\":\"\"}";
      break;
  }
  const std::int64_t ts = kFirstTs + static_cast<std::int64_t>(seq) * 1000;
  event->json = "{\"seq\":" + std::to_string(seq) + ",\"type\":\"" + store::event_type_name(event->kind) +
                "\",\"ts\":" + std::to_string(ts) + ",\"sessionId\":\"" + session + "\",\"data\":" + data + "}";
  return event;
}

void generate(const Options& options) {
  const auto started = Clock::now();
  boost::asio::io_context io{1};
  store::StoreOptions store_options;
  // The generator's commits need not survive power loss: the file is rebuilt if anything goes wrong.
  store_options.database.durability = store::Durability::ProcessCrash;
  store_options.event_log.max_events = options.events * 2;
  auto opened = store::Store::open(io, options.dir / store::Store::kFileName, store_options);
  if (!opened) fail("open store: " + opened.error().message);
  auto& opened_store = **opened;
  std::size_t pending = 0;
  std::size_t failed = 0;
  // Runs the store's answers until every insert submitted so far is back (the io_context stops whenever it
  // runs out of work, so it is restarted first).
  const auto drain = [&] {
    while (pending > 0) {
      if (io.stopped()) io.restart();
      io.run_one();
    }
  };
  for (std::size_t i = 0; i < options.sessions; ++i) {
    store::SessionRecord session;
    session.id = session_id(i);
    session.agent = i % 2 == 0 ? "claude" : "codex";
    session.cwd = "/home/dev/project-" + std::to_string(i % 10);
    session.title = "bench run " + std::to_string(i);
    session.created_at = kFirstTs + static_cast<std::int64_t>(i) * 1000;
    session.updated_at = session.created_at;
    ++pending;
    opened_store.sessions().insert_session(std::move(session), [&](store::StoreResult<store::SessionRecord> result) {
      --pending;
      if (!result) ++failed;
    });
    if (pending >= 1000) drain();
  }
  drain();
  if (failed > 0) fail(std::to_string(failed) + " sessions could not be stored");
  std::printf("  %zu sessions stored in %.1f s\n", options.sessions,
              std::chrono::duration<double>(Clock::now() - started).count());

  // Events session by session, in batches: the event log's own append (with the search index in its
  // transaction), run on the store thread.
  const std::size_t per_session = std::max<std::size_t>(1, options.events / std::max<std::size_t>(1, options.sessions));
  const std::uint64_t first_seq = opened_store.events().last_seq() + 1;
  auto result = opened_store.worker().run_blocking("bench events", [&](store::Database& db) -> store::StoreResult<std::uint64_t> {
    store::EventTable table;
    table.load(db.sql());
    std::minstd_rand random(37);
    std::vector<switchboard::bus::EncodedEventPtr> batch;
    std::uint64_t seq = first_seq;
    for (std::size_t s = 0; s < options.sessions; ++s) {
      const std::string session = session_id(s);
      for (std::size_t e = 0; e < per_session; ++e) {
        batch.push_back(make_event(seq++, session, e / 5, static_cast<int>(e % 5), random));
        if (batch.size() == kBatch) {
          table.append(db.sql(), batch, {}, store::EventTable::Duplicates::Fail);
          batch.clear();
        }
      }
    }
    if (!batch.empty()) table.append(db.sql(), batch, {}, store::EventTable::Duplicates::Fail);
    return seq - first_seq;
  });
  if (!result) fail("append events: " + result.error().message);
  opened_store.close();
  std::printf("  %llu events stored (with their search index) in %.1f s\n", static_cast<unsigned long long>(*result),
              std::chrono::duration<double>(Clock::now() - started).count());
}

long resident_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return 0;
}

struct Daemon {
  Child child;
  std::unique_ptr<LineReader> reader;
  std::int64_t next_id = 1;

  Daemon(const Options& options, std::size_t max_events) {
    child = spawn({options.binary, "--log-level", "off", "--data-dir", options.dir.string(), "--max-stored-events",
                   std::to_string(max_events), "stdio", "--standalone"},
                  nullptr, true);
    reader = std::make_unique<LineReader>(child.from_child);
  }

  // Sends one request and waits for its response line; the response.
  std::string call(const std::string& method, const std::string& params) {
    const std::int64_t id = next_id++;
    write_all(child.to_child,
              "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) + ",\"method\":\"" + method + "\",\"params\":" + params + "}\n");
    std::string_view line;
    const std::string id_text = "\"id\":" + std::to_string(id) + ",";
    while (reader->next(line)) {
      if (line.find(id_text) == std::string_view::npos) continue;
      if (line.find("\"result\":") == std::string_view::npos) fail(method + " failed: " + std::string(line));
      return std::string(line);
    }
    fail("the daemon closed its output during " + method);
  }

  int stop() { return finish(child, *reader); }
};

const std::string kInitialize =
    R"({"protocolVersion":1,"clientInfo":{"name":"bench_history","version":"1"}})";

template <class Call>
Stats timed(int calls, Call call) {
  std::vector<double> ms;
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    call();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  return stats_of(std::move(ms));
}

void measure(const Options& options) {
  const std::size_t max_events = options.events * 2 + 1000;
  std::vector<double> starts;
  for (int i = 0; i < kStarts; ++i) {
    const auto start = Clock::now();
    Daemon daemon(options, max_events);
    daemon.call("initialize", kInitialize);
    starts.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (daemon.stop() != 0) fail("the daemon exited with an error");
  }
  const Stats start = stats_of(starts);
  std::printf("  start to ready (spawn → initialize answered): median %.1f ms, min %.1f ms, max %.1f ms\n", start.median,
              start.min, start.max);

  Daemon daemon(options, max_events);
  daemon.call("initialize", kInitialize);
  const auto print = [](const char* what, const Stats& stats) {
    std::printf("  %-52s median %7.3f ms   p99 %7.3f ms\n", what, stats.median, stats.p99);
  };
  print("session.list, 50 newest", timed(kListCalls, [&] { daemon.call("session.list", R"({"limit":50})"); }));
  print("session.list, 50 of agent codex", timed(kListCalls, [&] { daemon.call("session.list", R"({"limit":50,"agent":"codex"})"); }));
  print("session.list, 50 with text \"project-3\"",
        timed(kListCalls, [&] { daemon.call("session.list", R"({"limit":50,"text":"project-3"})"); }));
  print("session.list, 50 with text \"run 4242\" (11 sessions)",
        timed(kListCalls, [&] { daemon.call("session.list", R"({"limit":50,"text":"run 4242"})"); }));
  print("session.list, 50 with text \"run 42\" (1,111 sessions)",
        timed(kListCalls, [&] { daemon.call("session.list", R"({"limit":50,"text":"run 42"})"); }));
  print("session.list, 50 with a text in no session",
        timed(kListCalls, [&] { daemon.call("session.list", R"({"limit":50,"text":"no such text"})"); }));
  print("session.search \"needle\" (0.1 % of events), 20 hits",
        timed(kSearchCalls, [&] { daemon.call("session.search", R"({"query":"needle"})"); }));
  print("session.search \"w400\" (0.5 % of events), 20 hits",
        timed(kSearchCalls, [&] { daemon.call("session.search", R"({"query":"w400"})"); }));
  print("session.search \"w7\" (a fifth of the events), 20 hits",
        timed(kSearchCalls, [&] { daemon.call("session.search", R"({"query":"w7"})"); }));
  print("session.search \"needle\", agent codex, 20 hits",
        timed(kSearchCalls, [&] { daemon.call("session.search", R"({"query":"needle","agent":"codex"})"); }));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  std::printf("  idle RSS after the calls: %.1f MB\n", static_cast<double>(resident_kib(daemon.child.pid)) / 1024.0);
  if (daemon.stop() != 0) fail("the daemon exited with an error");
}

}  // namespace

int main(int argc, char** argv) {
  g_program = "bench_history";
  spdlog::set_level(spdlog::level::warn);
  Options options;
  const std::string usage = "usage: bench_history [--sessions N] [--events M] [--dir DIR] [--binary PATH] (or --name=VALUE)";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::optional<std::string> inline_value;  // --name=value
    if (const auto equals = arg.find('='); arg.rfind("--", 0) == 0 && equals != std::string::npos) {
      inline_value = arg.substr(equals + 1);
      arg.resize(equals);
    }
    const auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= argc) fail(arg + " needs a value");
      return argv[++i];
    };
    const auto count = [&]() -> std::size_t {
      const std::string text = value();
      std::size_t parsed = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), parsed);
      if (error != std::errc() || end != text.data() + text.size() || parsed == 0) {
        fail(arg + " takes a positive whole number, not '" + text + "'");
      }
      return parsed;
    };
    if (arg == "--sessions") options.sessions = count();
    else if (arg == "--events") options.events = count();
    else if (arg == "--dir") options.dir = value();
    else if (arg == "--binary") options.binary = value();
    else fail(usage);
  }
  if (options.dir.empty()) {
    options.dir = fs::temp_directory_path() /
                  ("bench-history-" + std::to_string(options.sessions) + "-" + std::to_string(options.events));
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // figures as they come, also into a file
  std::printf("bench_history: %zu sessions, %zu events, data directory %s\n", options.sessions, options.events,
              options.dir.c_str());
  if (!fs::exists(options.dir / store::Store::kFileName)) {
    fs::create_directories(options.dir);
    generate(options);
  } else {
    std::printf("  (reusing the data directory generated earlier)\n");
  }
  std::error_code ignored;
  std::printf("  database: %.1f MB\n",
              static_cast<double>(fs::file_size(options.dir / store::Store::kFileName, ignored)) / (1024.0 * 1024.0));
  measure(options);
  return 0;
}
