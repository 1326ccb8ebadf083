#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "engine/Engine.h"
#include "support/ScriptedAdapter.h"
#include "support/Settle.h"
#include "support/TempDir.h"
#include "switchboard/bus/EventBus.h"
#include "switchboard/checkpoint/CheckpointStore.h"

// The engine's file checkpoints (TurnCheckpoints) with a scripted agent whose turns change the working tree
// through a shell, as an agent's shell tool would: each turn is checkpointed before its prompt reaches the agent,
// session.diff shows what each turn (and the whole session) changed, and session.rewind with files puts the tree
// back as it was before a turn, refused while a turn runs.

namespace turn_checkpoints_tests {

using namespace switchboard;
using testing::ScriptedAdapter;
using switchboard::testing::TempDir;
namespace fs = std::filesystem;
namespace p = protocol;

void write(const fs::path& path, const std::string& content) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

struct World {
  TempDir data{"turn-checkpoints-data"};
  TempDir tree{"turn-checkpoints-tree"};
  boost::asio::io_context io{1};
  bus::EventBus bus;
  bus::EventBus::Installation installation{bus};
  std::shared_ptr<ScriptedAdapter::Control> control = std::make_shared<ScriptedAdapter::Control>();
  std::unique_ptr<checkpoint::CheckpointStore> store;
  std::unique_ptr<engine::Engine> engine;
  std::vector<bus::BusEvent> events;
  bus::Subscription recorder = bus.subscribe_all([this](const bus::BusEvent& e) { events.push_back(e); });
  std::string session;

  explicit World(bool with_store = true) {
    if (with_store) {
      checkpoint::CheckpointOptions options;
      options.root = data.path() / "checkpoints";
      store = std::make_unique<checkpoint::CheckpointStore>(io, options);
    }
    engine = std::make_unique<engine::Engine>(io, bus, std::vector<adapters::AgentDescriptor>{ScriptedAdapter::descriptor(io, control)});
    engine->set_checkpoints(store.get());
    bus.publish_global(p::ClientAttachedEvent{"tui", p::Transport::Stdio, true});
    p::SessionCreateParams params;
    params.agent = "scripted";
    params.cwd = tree.path().string();
    std::optional<engine::Outcome<p::SessionInfo>> created;
    engine->create_session(params, [&](engine::Outcome<p::SessionInfo> r) { created = std::move(r); });
    REQUIRE(run_until([&] { return created.has_value(); }));
    session = std::get<p::SessionInfo>(*created).session_id;
  }
  ~World() {
    engine.reset();
    store.reset();
  }

  // Runs the reactor until `done` holds (the store's git commands run on its own thread meanwhile).
  bool run_until(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(30)) {
    return switchboard::testing::poll_until(io, done, limit);
  }

  void send(std::string text) {
    p::SessionSendParams params;
    params.session_id = session;
    params.text = std::move(text);
    params.wait = false;
    engine->send(params, [](engine::Outcome<p::SessionSendResult>) {});
  }

  // The shell command the held turn runs, then the turn goes on to its end.
  void turn_runs(const std::string& command) {
    REQUIRE(run_until([&] { return static_cast<bool>(control->resume); }));
    const std::string line = "cd '" + tree.path().string() + "' && " + command;
    REQUIRE(std::system(line.c_str()) == 0);
    auto resume = std::exchange(control->resume, nullptr);
    resume();
  }

  template <class T>
  std::vector<T> all() const {
    std::vector<T> out;
    for (const auto& e : events) {
      if (const auto* payload = std::get_if<T>(&e.payload)) out.push_back(*payload);
    }
    return out;
  }
  engine::Outcome<p::SessionDiffResult> diff(std::optional<std::string> turn_id) {
    p::SessionDiffParams params;
    params.session_id = session;
    params.turn_id = std::move(turn_id);
    std::optional<engine::Outcome<p::SessionDiffResult>> result;
    engine->diff(params, [&](engine::Outcome<p::SessionDiffResult> r) { result = std::move(r); });
    REQUIRE(run_until([&] { return result.has_value(); }));
    return std::move(*result);
  }
  std::vector<std::string> changed(std::optional<std::string> turn_id) {
    auto result = diff(std::move(turn_id));
    if (const auto* error = std::get_if<engine::EngineError>(&result)) FAIL(error->message);
    std::vector<std::string> paths;
    for (const auto& file : std::get<p::SessionDiffResult>(result).files) paths.push_back(file.path);
    return paths;
  }

  engine::Outcome<p::SessionRewindResult> rewind(const std::string& turn_id, bool conversation, bool files) {
    p::SessionRewindParams params;
    params.session_id = session;
    params.turn_id = turn_id;
    params.conversation = conversation;
    params.files = files;
    std::optional<engine::Outcome<p::SessionRewindResult>> result;
    engine->rewind(params, [&](engine::Outcome<p::SessionRewindResult> r) { result = std::move(r); });
    REQUIRE(run_until([&] { return result.has_value(); }));
    return std::move(*result);
  }
};

std::string turn_id(const World& w, std::size_t index) {
  const auto started = w.all<p::TurnStartedEvent>();
  REQUIRE(started.size() > index);
  return started[index].turn_id;
}

TEST_CASE("turn checkpoints: each turn's shell changes are diffed per turn and for the session, and a files "
          "rewind undoes them",
          "[checkpoint][engine]") {
  World w;
  write(w.tree.path() / "notes.txt", "first version\n");
  write(w.tree.path() / "old.txt", "will be deleted\n");
  w.control->turns.push_back({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
  w.control->turns.push_back({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});

  w.send("change some files");
  // The prompt reached the agent only once its turn's checkpoint existed: nothing changed yet.
  REQUIRE(w.run_until([&] { return static_cast<bool>(w.control->resume); }));
  const auto first = turn_id(w, 0);
  CHECK(w.changed(first).empty());
  w.turn_runs("echo second version > notes.txt && rm old.txt && mkdir -p src && echo 'int x;' > src/made.c");
  REQUIRE(w.run_until([&] { return w.all<p::TurnStoppedEvent>().size() == 1; }));
  CHECK(w.changed(first) == std::vector<std::string>{"notes.txt", "old.txt", "src/made.c"});

  w.send("and more");
  REQUIRE(w.run_until([&] { return w.all<p::TurnStartedEvent>().size() == 2 && static_cast<bool>(w.control->resume); }));
  const auto second = turn_id(w, 1);
  w.turn_runs("echo third version > notes.txt && echo added > later.txt");
  REQUIRE(w.run_until([&] { return w.all<p::TurnStoppedEvent>().size() == 2; }));

  // Each turn's own changes, from its checkpoint to the next turn's (or the tree now, for the latest).
  CHECK(w.changed(first) == std::vector<std::string>{"notes.txt", "old.txt", "src/made.c"});
  CHECK(w.changed(second) == std::vector<std::string>{"later.txt", "notes.txt"});
  auto second_diff = std::get<p::SessionDiffResult>(w.diff(second));
  CHECK(second_diff.files[1].diff.find("-second version\n+third version\n") != std::string::npos);
  // The whole session: the first turn's checkpoint against the tree now.
  CHECK(w.changed(std::nullopt) == std::vector<std::string>{"later.txt", "notes.txt", "old.txt", "src/made.c"});
  auto unknown = w.diff(std::string("t-nosuchturn"));
  REQUIRE(std::holds_alternative<engine::EngineError>(unknown));
  CHECK(std::get<engine::EngineError>(unknown).code == p::ErrorCode::UnknownTurn);

  // Back to before the second turn: only its changes are undone.
  auto rewound = w.rewind(second, /*conversation=*/false, /*files=*/true);
  if (const auto* error = std::get_if<engine::EngineError>(&rewound)) FAIL(error->message);
  const auto& result = std::get<p::SessionRewindResult>(rewound);
  CHECK(result.rewound_turn_ids == std::vector<std::string>{second});
  REQUIRE(result.files);
  CHECK(result.files->size() == 2);
  REQUIRE(result.checkpoint_id);
  CHECK(read(w.tree.path() / "notes.txt") == "second version\n");
  CHECK_FALSE(fs::exists(w.tree.path() / "later.txt"));
  CHECK(read(w.tree.path() / "src/made.c") == "int x;\n");
  const auto events = w.all<p::SessionRewoundEvent>();
  REQUIRE(events.size() == 1);
  CHECK(events[0].files);
  CHECK_FALSE(events[0].conversation);
  CHECK(events[0].checkpoint_id == result.checkpoint_id);
  // What the rewound turn did stays visible: its checkpoint against the tree as it left it.
  CHECK(w.changed(second) == std::vector<std::string>{"later.txt", "notes.txt"});

  // And to before the first (it was not rewound yet): the tree as the session found it.
  auto again = w.rewind(first, false, true);
  if (const auto* error = std::get_if<engine::EngineError>(&again)) FAIL(error->message);
  CHECK(read(w.tree.path() / "notes.txt") == "first version\n");
  CHECK(read(w.tree.path() / "old.txt") == "will be deleted\n");
  CHECK_FALSE(fs::exists(w.tree.path() / "src"));
}

TEST_CASE("turn checkpoints: a files rewind while a turn runs is refused and changes nothing", "[checkpoint][engine]") {
  World w;
  write(w.tree.path() / "a.txt", "a\n");
  w.control->turns.push_back({ScriptedAdapter::End{}});
  w.control->turns.push_back({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
  w.send("one");
  REQUIRE(w.run_until([&] { return w.all<p::TurnStoppedEvent>().size() == 1; }));
  write(w.tree.path() / "a.txt", "a changed\n");
  w.send("two");
  REQUIRE(w.run_until([&] { return static_cast<bool>(w.control->resume); }));

  auto refused = w.rewind(turn_id(w, 0), false, true);
  REQUIRE(std::holds_alternative<engine::EngineError>(refused));
  CHECK(std::get<engine::EngineError>(refused).code == p::ErrorCode::SessionBusy);
  CHECK(read(w.tree.path() / "a.txt") == "a changed\n");
  CHECK(w.all<p::SessionRewoundEvent>().empty());
  w.turn_runs("true");
  REQUIRE(w.run_until([&] { return w.all<p::TurnStoppedEvent>().size() == 2; }));
}

// Where the first event of type T (after `from`) is in the recorded events; events.size() when there is none.
template <class T>
std::size_t index_of(const World& w, std::size_t from = 0) {
  for (std::size_t i = from; i < w.events.size(); ++i) {
    if (std::holds_alternative<T>(w.events[i].payload)) return i;
  }
  return w.events.size();
}

TEST_CASE("turn checkpoints: a prompt sent as a files rewind is accepted waits for it, and its turn starts after "
          "session.rewound",
          "[checkpoint][engine]") {
  World w;
  w.control->capabilities.compact = true;
  write(w.tree.path() / "a.txt", "one\n");
  w.control->turns.push_back({ScriptedAdapter::Hold{}, ScriptedAdapter::End{}});
  w.send("one");
  w.turn_runs("echo two > a.txt");
  REQUIRE(w.run_until([&] { return w.all<p::TurnStoppedEvent>().size() == 1; }));
  const auto first = turn_id(w, 0);

  // The rewind is accepted at once; whether the turn has a checkpoint is read from the store's log meanwhile.
  p::SessionRewindParams params;
  params.session_id = w.session;
  params.turn_id = first;
  params.files = true;
  params.conversation = false;
  std::optional<engine::Outcome<p::SessionRewindResult>> rewound;
  w.engine->rewind(params, [&](engine::Outcome<p::SessionRewindResult> r) { rewound = std::move(r); });
  w.send("after the rewind");
  std::optional<engine::Outcome<p::SessionInfo>> compacted;
  w.engine->compact(w.session, [&](engine::Outcome<p::SessionInfo> r) { compacted = std::move(r); });
  REQUIRE(w.run_until([&] { return rewound.has_value() && compacted.has_value(); }));
  if (const auto* error = std::get_if<engine::EngineError>(&*rewound)) FAIL(error->message);
  REQUIRE(std::holds_alternative<engine::EngineError>(*compacted));
  CHECK(std::get<engine::EngineError>(*compacted).code == p::ErrorCode::SessionBusy);
  CHECK(w.control->compactions == 0);

  REQUIRE(w.run_until([&] { return w.all<p::TurnStoppedEvent>().size() == 2; }));
  CHECK(w.all<p::TurnQueuedEvent>().size() == 1);
  // The prompt's turn saw the rewound tree, and started only after every client heard of the rewind.
  const auto rewound_at = index_of<p::SessionRewoundEvent>(w);
  const auto second_start = index_of<p::TurnStartedEvent>(w, index_of<p::TurnStartedEvent>(w) + 1);
  REQUIRE(rewound_at < w.events.size());
  CHECK(rewound_at < second_start);
  CHECK(read(w.tree.path() / "a.txt") == "one\n");
  REQUIRE(w.control->inputs.size() == 2);
  CHECK(w.control->inputs.back().text == "after the rewind");
}

TEST_CASE("turn checkpoints: files that cannot be restored after the conversation was rewound leave the rewind "
          "recorded and answer CheckpointUnavailable",
          "[checkpoint][engine]") {
  World w;
  w.control->capabilities.rewind = true;
  write(w.tree.path() / "a.txt", "one\n");
  w.control->turns.push_back({ScriptedAdapter::End{}});
  w.control->turns.push_back({ScriptedAdapter::End{}});
  w.send("one");
  REQUIRE(w.run_until([&] { return w.all<p::TurnStoppedEvent>().size() == 1; }));
  w.send("two");
  REQUIRE(w.run_until([&] { return w.all<p::TurnStoppedEvent>().size() == 2; }));
  const auto second = turn_id(w, 1);

  // Checked before anything changed, the tree goes away while the agent rewinds its conversation.
  w.control->on_rewind = [&] { fs::remove_all(w.tree.path()); };
  auto failed = w.rewind(second, /*conversation=*/true, /*files=*/true);
  REQUIRE(std::holds_alternative<engine::EngineError>(failed));
  CHECK(std::get<engine::EngineError>(failed).code == p::ErrorCode::CheckpointUnavailable);
  CHECK(w.control->rewinds == std::vector<std::string>{"ref-2"});

  // What was done is recorded: the conversation was rewound, the files were not.
  const auto events = w.all<p::SessionRewoundEvent>();
  REQUIRE(events.size() == 1);
  CHECK(events[0].conversation);
  CHECK_FALSE(events[0].files);
  CHECK(events[0].rewound_turn_ids == std::vector<std::string>{second});
  auto again = w.rewind(second, true, false);
  REQUIRE(std::holds_alternative<engine::EngineError>(again));
  CHECK(std::get<engine::EngineError>(again).code == p::ErrorCode::UnknownTurn);
  CHECK(w.control->rewinds.size() == 1);
}

TEST_CASE("turn checkpoints: a restore that stopped part way names the checkpoint of the tree before it", "[checkpoint][engine]") {
  checkpoint::CheckpointError partial{checkpoint::CheckpointError::Code::RestoreIncomplete, "could not write a.txt", "c-before"};
  const auto error = engine::checkpoint_error(partial);
  CHECK(error.code == p::ErrorCode::CheckpointUnavailable);
  CHECK(error.message.find("could not write a.txt") != std::string::npos);
  CHECK(error.message.find("c-before") != std::string::npos);
}

TEST_CASE("turn checkpoints: without a store, turns run and diff and files rewind are CheckpointUnavailable",
          "[checkpoint][engine]") {
  World w(/*with_store=*/false);
  w.control->turns.push_back({ScriptedAdapter::End{}});
  w.send("one");
  REQUIRE(w.run_until([&] { return w.all<p::TurnStoppedEvent>().size() == 1; }));
  auto diff = w.diff(std::nullopt);
  REQUIRE(std::holds_alternative<engine::EngineError>(diff));
  CHECK(std::get<engine::EngineError>(diff).code == p::ErrorCode::CheckpointUnavailable);
  auto rewound = w.rewind(turn_id(w, 0), false, true);
  REQUIRE(std::holds_alternative<engine::EngineError>(rewound));
  CHECK(std::get<engine::EngineError>(rewound).code == p::ErrorCode::CheckpointUnavailable);
  CHECK(w.all<p::SessionRewoundEvent>().empty());
}

TEST_CASE("turn checkpoints: a session deleted while its turn's checkpoint is taken leaves no record behind",
          "[checkpoint][engine]") {
  World w;
  write(w.tree.path() / "a.txt", "a\n");
  w.control->turns.push_back({ScriptedAdapter::End{}});
  w.send("one");
  // Deleted before the store's thread has taken the checkpoint the turn waits for.
  std::optional<std::optional<engine::EngineError>> deleted;
  w.engine->delete_session(w.session, [&](std::optional<engine::EngineError> error) { deleted = std::move(error); });
  REQUIRE(w.run_until([&] { return deleted.has_value(); }));
  CHECK_FALSE(deleted->has_value());
  // Every write the completions could queue is behind this read on the store's one thread.
  const auto settle = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  REQUIRE(w.run_until([&] { return std::chrono::steady_clock::now() > settle; }));
  std::optional<checkpoint::CheckpointResult<std::vector<std::string>>> lines;
  w.store->read_log(w.session, [&](checkpoint::CheckpointResult<std::vector<std::string>> r) { lines = std::move(r); });
  REQUIRE(w.run_until([&] { return lines.has_value(); }));
  REQUIRE(lines->has_value());
  CHECK((*lines)->empty());
  CHECK_FALSE(fs::exists(w.data.path() / "checkpoints" / "logs" / (w.session + ".log")));
}

}  // namespace turn_checkpoints_tests
