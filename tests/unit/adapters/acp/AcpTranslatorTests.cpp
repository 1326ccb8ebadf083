#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acp/AcpAdapter.h"
#include "acp/AcpContent.h"
#include "acp/AcpTranslator.h"
#include "support/CodexRecording.h"
#include "support/SourceTree.h"

// The ACP translator fed recorded `grok agent stdio` conversations (tests/fixtures/grok/, Grok Build 1.0.41
// against the project's Chat Completions mock; paths written as <scratch>): each line the agent wrote goes where
// the adapter's JSON-RPC endpoint would send it, and the lines we wrote say when a prompt went out and which
// requests of the agent we answered. The recording sink is the generic one the Codex tests also use.

namespace acp_translator_tests {

using nlohmann::json;
using switchboard::adapters::JsonRpcEndpoint;
using switchboard::adapters::acp::AcpTranslator;
using switchboard::testing::CodexRecordingSink;
namespace acp = switchboard::adapters::acp;

struct Recording {
  std::vector<json> lines;  // {"dir": "in" | "out", "line": ...}
};

Recording recorded(const std::string& name) {
  std::ifstream in(switchboard::testing::source_path("tests/fixtures/grok/") + name);
  REQUIRE(in.good());
  Recording recording;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) recording.lines.push_back(json::parse(line));
  }
  return recording;
}

// Plays a recording into `translator`: the session of the first session/new answer or session/load, our prompts
// (each a turn), the agent's notifications and permission requests, and the answers to our prompts. What the
// translator replied to a permission request is kept by the request's id.
struct Player {
  AcpTranslator& translator;
  std::map<std::string, json> replies;  // the agent's request id (dumped) → our answer
  std::map<std::int64_t, std::string> prompts;  // our request id → "prompt" | "load" | "new"

  void play(const Recording& recording) {
    int turns = 0;
    for (const auto& entry : recording.lines) {
      const json message = json::parse(entry.at("line").get<std::string>());
      if (entry.at("dir") == "in") {
        const std::string method = message.value("method", "");
        if (method == "session/prompt") {
          prompts[message.at("id").get<std::int64_t>()] = "prompt";
          translator.turn_started("turn" + std::to_string(++turns));
        } else if (method == "session/load") {
          prompts[message.at("id").get<std::int64_t>()] = "load";
          translator.set_session(message.at("params").at("sessionId").get<std::string>());
          translator.set_replaying(true);
        } else if (method == "session/new") {
          prompts[message.at("id").get<std::int64_t>()] = "new";
        }
        continue;
      }
      if (message.contains("method") && message.contains("id")) {
        const std::string id = message.at("id").dump();
        translator.on_permission_request(message.at("id"), message.at("params"),
                                         [this, id](JsonRpcEndpoint::Outcome outcome) { replies[id] = std::get<json>(outcome); });
      } else if (message.contains("method")) {
        const std::string method = message.at("method").get<std::string>();
        if (method == "session/update") {
          translator.on_update(message.at("params"));
        } else {
          translator.on_extension(method, message.at("params"));
        }
      } else if (message.contains("id") && message.at("id").is_number_integer()) {
        const auto it = prompts.find(message.at("id").get<std::int64_t>());
        if (it == prompts.end()) continue;
        if (it->second == "new") translator.set_session(message.at("result").at("sessionId").get<std::string>());
        if (it->second == "load") translator.set_replaying(false);
        if ((it->second == "new" || it->second == "load") && message.contains("result")) {
          translator.on_session_opened(message.at("result"), it->second == "load");
        }
        if (it->second == "prompt") {
          if (message.contains("error")) {
            translator.on_prompt_answer(JsonRpcEndpoint::Error{message["error"].value("code", 0), message["error"].value("message", ""), nullptr});
          } else {
            translator.on_prompt_answer(message.at("result"));
          }
        }
      }
    }
  }
};

std::vector<std::string> without_deltas(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const auto& line : lines) {
    if (line.rfind("delta ", 0) != 0) out.push_back(line);
  }
  return out;
}

TEST_CASE("acp translator: Grok's recorded text turn, allowed shell command and mid-stream cancel become our events", "[acp]") {
  // The recording answered allow-once: the sink does not answer, so the test answers as the engine would.
  struct Allowing : CodexRecordingSink {
    AcpTranslator* translator = nullptr;
    void on_permission_request(switchboard::adapters::PermissionAsk ask) override {
      const auto id = ask.native_id;
      CodexRecordingSink::on_permission_request(std::move(ask));
      translator->answer_permission(id, true);
    }
  } allowing;
  AcpTranslator answered(allowing, "grok");
  allowing.translator = &answered;
  Player answering{answered, {}, {}};
  answering.play(recorded("permission-allowed-and-cancel.ndjson"));

  const auto events = without_deltas(allowing.lines);
  INFO(json(allowing.lines).dump(1));
  REQUIRE(events.size() == 11);
  CHECK(events[0] == R"(message turn1-1 text "Hello from the mock.")");
  CHECK(events[1].rfind(R"(turn_end end_turn "Hello from the mock.")", 0) == 0);
  CHECK(events[2] == R"(message turn2-1 text "Running it.")");
  CHECK(events[3] == R"(tool_started call_mock_0002 execute {"command":"echo grok-made","description":"test command"})");
  CHECK(events[4] == R"(permission 0 execute "echo grok-made")");
  // The running output, decoded from Grok's array of byte values, then the whole of it once more at the end.
  CHECK(events[5] == R"(tool_output call_mock_0002 "grok-made\n")");
  CHECK(events[6] == R"(tool_completed call_mock_0002 ok "grok-made\n")");
  CHECK(events[7] == R"(message turn2-2 text "It printed grok-made.")");
  CHECK(events[8].rfind(R"(turn_end end_turn "It printed grok-made.")", 0) == 0);
  // The slow stream cancelled mid-way: what came is a message of its own, and the turn ends cancelled.
  CHECK(events[9].rfind(R"(message turn3-1 text "tick tick )", 0) == 0);
  CHECK(events[10].rfind("turn_end cancelled", 0) == 0);
  REQUIRE(answering.replies.size() == 1);
  CHECK(answering.replies["0"] == json{{"outcome", {{"outcome", "selected"}, {"optionId", "allow-once"}}}});
  REQUIRE(allowing.turns.size() == 3);
  REQUIRE(allowing.turns[0].usage);
  CHECK(allowing.turns[0].usage->input_tokens == 14410);
  CHECK(allowing.turns[0].usage->output_tokens == 3);
  CHECK(answered.stats().malformed == 0);
  CHECK(answered.stats().unknown == 0);
  CHECK_FALSE(answered.turn_running());
  // session/new's answer listed Grok's models; the session's current one ("mock", the test's provider) is the
  // default.
  REQUIRE(allowing.offers.size() == 1);
  const auto& models = allowing.offers[0].models;
  REQUIRE(models.size() == 3);
  CHECK(models[0].id == "grok-4.6");
  CHECK(models[0].name == "Grok 4.6");
  CHECK(models[0].description == "SpaceXAI's latest frontier model");
  CHECK_FALSE(models[0].is_default.has_value());
  CHECK(models[2].id == "mock");
  CHECK(models[2].is_default == true);
}

TEST_CASE("acp translator: models come from the config option of category model when the agent sends no model state", "[acp]") {
  const json answer = json::parse(R"({"sessionId":"s1","configOptions":[
      {"id":"effort","name":"Effort","category":"thought_level","type":"select","currentValue":"low","options":[{"value":"low","name":"Low"}]},
      {"id":"m","name":"Model","category":"model","type":"select","currentValue":"b","options":[
        {"group":"fast","name":"Fast","options":[{"value":"a","name":"A","description":"quick"}]},
        {"value":"b","name":"B"},{"name":"no value"}]}]})");
  const auto models = acp::offered_models(answer, true);
  REQUIRE(models.size() == 2);
  CHECK(models[0].id == "a");
  CHECK(models[0].description == "quick");
  CHECK_FALSE(models[0].is_default.has_value());
  CHECK(models[1].id == "b");
  CHECK(models[1].is_default == true);
  // A loaded session's current model is its own, not the agent's default.
  const auto loaded = acp::offered_models(answer, false);
  REQUIRE(loaded.size() == 2);
  CHECK_FALSE(loaded[1].is_default.has_value());
  CHECK(acp::offered_models(json::parse(R"({"sessionId":"s1"})"), true).empty());
  CHECK(acp::offered_models(json::parse(R"({"models":{"availableModels":"none"},"configOptions":7})"), true).empty());

  // A later config_option_update replaces the offer; an update naming no models offers nothing new.
  CodexRecordingSink sink;
  AcpTranslator translator(sink, "acp");
  translator.set_session("s1");
  translator.on_update(json{{"sessionId", "s1"}, {"update", json::parse(R"({"sessionUpdate":"config_option_update","configOptions":[
      {"id":"model","name":"Model","category":"model","type":"select","currentValue":"x","options":[{"value":"x","name":"X"}]}]})")}});
  translator.on_update(json{{"sessionId", "s1"}, {"update", {{"sessionUpdate", "config_option_update"}, {"configOptions", json::array()}}}});
  REQUIRE(sink.offers.size() == 1);
  REQUIRE(sink.offers[0].models.size() == 1);
  CHECK(sink.offers[0].models[0].id == "x");
  CHECK_FALSE(sink.offers[0].models[0].is_default.has_value());  // the session's current model, not the default
  CHECK(translator.stats().unknown == 0);
}

TEST_CASE("acp translator: a denied command fails its tool and ends the turn end_turn though Grok says cancelled, and a cancel answers the open request cancelled", "[acp]") {
  struct Deciding : CodexRecordingSink {
    AcpTranslator* translator = nullptr;
    int asks = 0;
    void on_permission_request(switchboard::adapters::PermissionAsk ask) override {
      const auto id = ask.native_id;
      CodexRecordingSink::on_permission_request(std::move(ask));
      // The first is denied; the second stays open until the recording's cancel.
      if (++asks == 1) translator->answer_permission(id, false);
    }
  } sink;
  AcpTranslator translator(sink, "grok");
  sink.translator = &translator;
  Player player{translator, {}, {}};
  // The recorded cancel: the adapter's cancel() sends the notification, then calls cancel_turn().
  Recording recording = recorded("permission-denied-and-cancelled.ndjson");
  Recording before_cancel;
  Recording after_cancel;
  bool cancelled = false;
  for (const auto& line : recording.lines) {
    if (line.at("dir") == "in" && line.at("line").get<std::string>().find("session/cancel") != std::string::npos) cancelled = true;
    (cancelled ? after_cancel : before_cancel).lines.push_back(line);
  }
  REQUIRE(cancelled);
  player.play(before_cancel);
  translator.cancel_turn();
  player.play(after_cancel);

  const auto events = without_deltas(sink.lines);
  INFO(json(sink.lines).dump(1));
  REQUIRE(events.size() == 10);
  CHECK(events[0] == R"(message turn1-1 text "Removing it.")");
  CHECK(events[1] == R"(tool_started call_mock_0002 execute {"command":"rm -f nothing.txt","description":"test command"})");
  CHECK(events[2] == R"(permission 0 execute "rm -f nothing.txt")");
  CHECK(events[3].rfind(R"(tool_completed call_mock_0002 error "User rejected)", 0) == 0);
  // Grok answers the prompt `cancelled` after a deny; nobody cancelled: the turn is over, as for every agent.
  CHECK(events[4].rfind("turn_end end_turn", 0) == 0);
  CHECK(events[5] == R"(message turn2-1 text "Removing again.")");
  CHECK(events[6].rfind("tool_started call_mock_0003 execute", 0) == 0);
  CHECK(events[7] == R"(permission 1 execute "rm -f nothing2.txt")");
  CHECK(events[8] == "withdrawn 1");
  CHECK(events[9].rfind("turn_end cancelled", 0) == 0);
  CHECK(player.replies["0"] == json{{"outcome", {{"outcome", "selected"}, {"optionId", "reject-once"}}}});
  CHECK(player.replies["1"] == json{{"outcome", {{"outcome", "cancelled"}}}});
  CHECK(translator.stats().unknown == 0);
}

TEST_CASE("acp translator: after a cancel the turn ends cancelled whatever stopReason the agent answers", "[acp]") {
  // OpenCode's ACP answers end_turn when it took the cancelled permission for a reject before it saw the cancel.
  CodexRecordingSink sink;
  AcpTranslator translator(sink, "opencode");
  translator.turn_started("turn1");
  translator.cancel_turn();
  translator.on_prompt_answer(JsonRpcEndpoint::Outcome{json{{"stopReason", "end_turn"}}});
  // The next turn's end_turn is its own.
  translator.turn_started("turn2");
  translator.on_prompt_answer(JsonRpcEndpoint::Outcome{json{{"stopReason", "end_turn"}}});
  const auto events = without_deltas(sink.lines);
  INFO(json(sink.lines).dump(1));
  REQUIRE(events.size() == 2);
  CHECK(events[0].rfind("turn_end cancelled", 0) == 0);
  CHECK(events[1].rfind("turn_end end_turn", 0) == 0);
}

TEST_CASE("acp translator: the replay of session/load is not reported, and the next turn is", "[acp]") {
  CodexRecordingSink sink;
  AcpTranslator translator(sink, "grok");
  Player player{translator, {}, {}};
  player.play(recorded("load-replay.ndjson"));
  const auto events = without_deltas(sink.lines);
  INFO(json(sink.lines).dump(1));
  REQUIRE(events.size() == 2);
  CHECK(events[0] == R"(message turn1-1 text "I remember.")");
  CHECK(events[1].rfind(R"(turn_end end_turn "I remember.")", 0) == 0);
  CHECK(translator.stats().unknown == 0);
  CHECK(translator.stats().dropped > 0);
}

TEST_CASE("acp translator: updates and requests naming another ACP session are not this session's", "[acp]") {
  CodexRecordingSink sink;
  AcpTranslator translator(sink, "acp");
  translator.set_session("mine");
  translator.turn_started("t");
  const json chunk{{"sessionUpdate", "agent_message_chunk"}, {"content", {{"type", "text"}, {"text", "hi"}}}};
  translator.on_update(json{{"sessionId", "other"}, {"update", chunk}});
  json reply;
  translator.on_permission_request(0, json{{"sessionId", "other"}, {"toolCall", {{"toolCallId", "c"}}}, {"options", json::array()}},
                                   [&reply](JsonRpcEndpoint::Outcome outcome) { reply = std::get<json>(outcome); });
  CHECK(sink.lines.empty());
  CHECK(reply == json{{"outcome", {{"outcome", "cancelled"}}}});
  translator.on_update(json{{"sessionId", "mine"}, {"update", chunk}});
  CHECK(sink.lines == std::vector<std::string>{R"(delta t-1 text "hi")"});
}

// The controls' events besides the recording sink's lines: plans, usage, commands, options and MCP states.
struct ControlsSink : CodexRecordingSink {
  std::vector<switchboard::adapters::PlanUpdate> plans;
  std::vector<switchboard::protocol::ContextUsage> usages;
  std::vector<switchboard::adapters::CommandsOffered> commands;
  std::vector<switchboard::adapters::OptionsOffered> options;
  std::vector<switchboard::adapters::McpStatusReport> mcp;
  void on_plan(switchboard::adapters::PlanUpdate e) override { plans.push_back(std::move(e)); }
  void on_usage(switchboard::adapters::UsageUpdate e) override { usages.push_back(e.usage); }
  void on_commands(switchboard::adapters::CommandsOffered e) override { commands.push_back(std::move(e)); }
  void on_options(switchboard::adapters::OptionsOffered e) override { options.push_back(std::move(e)); }
  void on_mcp_status(switchboard::adapters::McpStatusReport e) override { mcp.push_back(std::move(e)); }
};

TEST_CASE("acp translator: thoughts, a plan and a usage_update become our events, the plan once per change", "[acp]") {
  ControlsSink sink;
  AcpTranslator translator(sink, "acp");
  translator.set_session("s");
  translator.turn_started("t");
  auto update = [&](json body) { translator.on_update(json{{"sessionId", "s"}, {"update", std::move(body)}}); };
  update({{"sessionUpdate", "agent_thought_chunk"}, {"content", {{"type", "text"}, {"text", "hmm"}}}});
  const json plan{{"sessionUpdate", "plan"},
                  {"entries", json::array({json{{"content", "read"}, {"status", "in_progress"}, {"priority", "high"}},
                                           json{{"content", "write"}, {"status", "pending"}}})}};
  update(plan);
  update(plan);  // a repeat (Grok Build re-sends its plan after every model response) is not news
  json done = plan;
  done["entries"][0]["status"] = "completed";
  done["entries"][1]["status"] = "cancelled";
  update(done);
  update({{"sessionUpdate", "agent_message_chunk"}, {"content", {{"type", "text"}, {"text", "done"}}}});
  update({{"sessionUpdate", "usage_update"}, {"used", 10}, {"size", 100}, {"cost", {{"amount", 0.25}, {"currency", "USD"}}}});
  update({{"sessionUpdate", "usage_update"}, {"used", 30}, {"size", 100}, {"cost", {{"amount", 2}, {"currency", "EUR"}}}});
  for (const auto* dropped : {"current_mode_update", "session_info_update", "user_message_chunk"}) update({{"sessionUpdate", dropped}});
  translator.on_prompt_answer(json{{"stopReason", "end_turn"}, {"usage", {{"inputTokens", 5}, {"outputTokens", 2}}}});
  INFO(json(sink.lines).dump(1));
  REQUIRE(sink.lines.size() == 5);
  CHECK(sink.lines[0] == R"(delta t-1 thinking "hmm")");
  CHECK(sink.lines[1] == R"(message t-1 thinking "hmm")");
  CHECK(sink.lines[2] == R"(delta t-2 text "done")");
  CHECK(sink.lines[4].rfind(R"(turn_end end_turn "done")", 0) == 0);

  using switchboard::protocol::PlanEntryStatus;
  REQUIRE(sink.plans.size() == 2);
  REQUIRE(sink.plans[0].entries.size() == 2);
  CHECK(sink.plans[0].entries[0].content == "read");
  CHECK(sink.plans[0].entries[0].status == PlanEntryStatus::InProgress);
  CHECK(sink.plans[0].entries[0].priority == switchboard::protocol::PlanEntryPriority::High);
  CHECK(sink.plans[0].entries[1].status == PlanEntryStatus::Pending);
  CHECK_FALSE(sink.plans[0].entries[1].priority.has_value());
  CHECK(sink.plans[1].entries[0].status == PlanEntryStatus::Completed);
  CHECK(sink.plans[1].entries[1].status == PlanEntryStatus::Completed);  // cancelled: the agent is done with it

  REQUIRE(sink.usages.size() == 2);
  CHECK(sink.usages[0].used_tokens == 10);
  CHECK(sink.usages[0].window_tokens == 100);
  CHECK(sink.usages[0].cost_usd == 0.25);
  CHECK(sink.usages[1].used_tokens == 30);
  REQUIRE(sink.turns.size() == 1);
  REQUIRE(sink.turns[0].usage);
  CHECK(sink.turns[0].usage->input_tokens == 5);
  CHECK(sink.turns[0].usage->cost_usd == 0.25);
  CHECK_FALSE(sink.turns[0].native_turn_ref.has_value());  // the agent named no prompt id
  CHECK(translator.stats().unknown == 0);
}

TEST_CASE("acp translator: Grok's per-response usage gives the context used and the session model's window, unless the agent sends usage_update", "[acp]") {
  ControlsSink sink;
  AcpTranslator translator(sink, "grok");
  translator.set_session("s");
  translator.on_session_opened(json::parse(R"({"sessionId":"s","models":{"currentModelId":"small","availableModels":[
      {"modelId":"big","name":"Big","_meta":{"totalContextTokens":500000}},
      {"modelId":"small","name":"Small","_meta":{"totalContextTokens":64000}}]}})"), false);
  translator.turn_started("t");
  auto vendor = [&](json usage) {
    translator.on_extension("_x.ai/session_notification",
                            json{{"sessionId", "s"}, {"update", {{"sessionUpdate", "response_completed"}, {"usage", std::move(usage)}}}});
  };
  vendor({{"input_tokens", 1000}, {"output_tokens", 20}, {"cache_read_input_tokens", 0}});
  vendor({{"input_tokens", 1100}, {"output_tokens", 30}, {"cache_read_input_tokens", 900}});
  translator.set_current_model("big");
  vendor({{"input_tokens", 1200}, {"output_tokens", 5}});
  translator.on_prompt_answer(json{{"stopReason", "end_turn"}, {"_meta", {{"promptId", "p-1"}}}});
  REQUIRE(sink.usages.size() == 3);
  CHECK(sink.usages[0].used_tokens == 1020);
  CHECK(sink.usages[0].window_tokens == 64000);
  CHECK(sink.usages[1].used_tokens == 1130);
  CHECK(sink.usages[1].input_tokens == 2100);
  CHECK(sink.usages[1].output_tokens == 50);
  CHECK(sink.usages[1].cache_read_tokens == 900);
  CHECK(sink.usages[2].window_tokens == 500000);
  REQUIRE(sink.turns.size() == 1);
  CHECK(sink.turns[0].native_turn_ref == "p-1");

  // Once the agent speaks ACP's usage_update, that is what counts.
  translator.turn_started("t2");
  translator.on_update(json{{"sessionId", "s"}, {"update", {{"sessionUpdate", "usage_update"}, {"used", 7}, {"size", 9}}}});
  vendor({{"input_tokens", 1300}, {"output_tokens", 5}});
  REQUIRE(sink.usages.size() == 4);
  CHECK(sink.usages[3].used_tokens == 7);
  CHECK(translator.stats().unknown == 0);
}

TEST_CASE("acp translator: commands are offered without the hidden ones, once per change, with their hints", "[acp]") {
  ControlsSink sink;
  AcpTranslator translator(sink, "grok");
  translator.set_session("s");
  translator.set_hidden_commands({"always-approve"});
  const json update = json::parse(R"({"sessionUpdate":"available_commands_update","availableCommands":[
      {"name":"compact","description":"Compress conversation history","input":{"hint":"what to keep"}},
      {"name":"always-approve","description":"skip permission prompts","input":{"hint":"on|off"}},
      {"name":"context","description":"Show context","input":null},{"description":"no name"}]})");
  translator.on_update(json{{"sessionId", "s"}, {"update", update}});
  translator.on_update(json{{"sessionId", "s"}, {"update", update}});
  REQUIRE(sink.commands.size() == 1);
  const auto& commands = sink.commands[0].commands;
  REQUIRE(commands.size() == 2);
  CHECK(commands[0].name == "compact");
  CHECK(commands[0].description == "Compress conversation history");
  CHECK(commands[0].argument_hint == "what to keep");
  CHECK(commands[1].name == "context");
  CHECK_FALSE(commands[1].argument_hint.has_value());
  translator.on_update(json{{"sessionId", "s"}, {"update", {{"sessionUpdate", "available_commands_update"}, {"availableCommands", json::array()}}}});
  REQUIRE(sink.commands.size() == 2);
  CHECK(sink.commands[1].commands.empty());
}

TEST_CASE("acp translator: whether the agent offers a command (what compact() asks) counts hidden ones and is unknown before a list", "[acp]") {
  ControlsSink sink;
  AcpTranslator translator(sink, "grok");
  translator.set_session("s");
  translator.set_hidden_commands({"compact"});
  CHECK_FALSE(translator.offers_command("compact").has_value());
  const auto offer = [&](json commands) {
    translator.on_update(json{{"sessionId", "s"}, {"update", {{"sessionUpdate", "available_commands_update"}, {"availableCommands", std::move(commands)}}}});
  };
  offer(json::array({json{{"name", "compact"}}, json{{"name", "goal"}}}));
  CHECK(translator.offers_command("compact") == true);  // hidden from clients, still the agent's
  CHECK(translator.offers_command("loop") == false);
  offer(json::array({json{{"name", "goal"}}}));
  CHECK(translator.offers_command("compact") == false);
}

TEST_CASE("acp translator: config options other than model and mode are our options, thought_level named effort", "[acp]") {
  ControlsSink sink;
  AcpTranslator translator(sink, "acp");
  translator.set_session("s");
  translator.on_session_opened(json::parse(R"({"sessionId":"s","configOptions":[
      {"id":"model","name":"Model","category":"model","type":"select","currentValue":"a","options":[{"value":"a","name":"A"}]},
      {"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"ask","options":[{"value":"ask"}]},
      {"id":"reasoning_effort","name":"Reasoning Effort","category":"thought_level","type":"select","currentValue":"low",
       "options":[{"group":"g","name":"G","options":[{"value":"low","name":"Low"}]},{"value":"high","name":"High","description":"slow"}]},
      {"id":"web","name":"Web search","type":"boolean","currentValue":true},
      {"id":"odd","type":"slider","currentValue":3}]})"), false);
  REQUIRE(sink.options.size() == 1);
  const auto& options = sink.options[0].options;
  REQUIRE(options.size() == 2);
  CHECK(options[0].id == "effort");
  CHECK(options[0].name == "Reasoning Effort");
  CHECK(options[0].kind == switchboard::protocol::SessionOptionKind::Select);
  REQUIRE(options[0].values.size() == 2);
  CHECK(options[0].values[0].value == "low");
  CHECK(options[0].values[1].description == "slow");
  CHECK(options[0].current_value == "low");
  CHECK(options[1].id == "web");
  CHECK(options[1].kind == switchboard::protocol::SessionOptionKind::Boolean);
  CHECK(options[1].current_value == "true");
  CHECK(translator.options().config_ids.at("effort") == "reasoning_effort");
  CHECK(acp::config_value(options[1], "false") == json(false));
  CHECK(acp::config_value(options[0], "high") == json("high"));

  // The answer to session/set_config_option (or a config_option_update) is the whole list with the new value.
  translator.on_config_options(json::parse(R"({"configOptions":[
      {"id":"reasoning_effort","name":"Reasoning Effort","category":"thought_level","type":"select","currentValue":"high",
       "options":[{"value":"low"},{"value":"high"}]}]})"));
  REQUIRE(sink.options.size() == 2);
  REQUIRE(sink.options[1].options.size() == 1);
  CHECK(sink.options[1].options[0].current_value == "high");
}

TEST_CASE("acp controls: MCP servers in ACP's form, the agent's own key blanked, HTTP only where the agent takes it", "[acp]") {
  using switchboard::protocol::McpServer;
  using switchboard::protocol::McpTransport;
  McpServer stdio;
  stdio.name = "files";
  stdio.transport = McpTransport::Stdio;
  stdio.command = "python3";
  stdio.args = std::vector<std::string>{"server.py", "--x"};
  stdio.env = json{{"TOKEN", "t"}, {"NUMBER", 3}};
  McpServer http;
  http.name = "web";
  http.transport = McpTransport::Http;
  http.url = "http://127.0.0.1:9/mcp";
  http.headers = json{{"Authorization", "Bearer x"}};
  std::vector<switchboard::protocol::McpServerState> refused;
  const json param = acp::mcp_servers_param({stdio, http}, true, {"SWITCHBOARD_GROK_API_KEY"}, refused);
  CHECK(refused.empty());
  CHECK(param == json::parse(R"([
      {"name":"files","command":"python3","args":["server.py","--x"],
       "env":[{"name":"SWITCHBOARD_GROK_API_KEY","value":""},{"name":"TOKEN","value":"t"}]},
      {"type":"http","name":"web","url":"http://127.0.0.1:9/mcp","headers":[{"name":"Authorization","value":"Bearer x"}]}])"));
  const json without_http = acp::mcp_servers_param({stdio, http}, false, {}, refused);
  REQUIRE(without_http.size() == 1);
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].name == "web");
  CHECK(refused[0].status == switchboard::protocol::McpServerStatusKind::Failed);
  REQUIRE(refused[0].error);
  CHECK(refused[0].error->find("HTTP") != std::string::npos);
}

TEST_CASE("acp translator: Grok's MCP server status moves the session's server from pending to connected or failed", "[acp]") {
  using switchboard::protocol::McpServerStatusKind;
  ControlsSink sink;
  AcpTranslator translator(sink, "grok");
  translator.set_session("s");
  translator.set_mcp_servers({{"sbt", switchboard::protocol::McpTransport::Stdio, McpServerStatusKind::Pending, std::nullopt, std::nullopt},
                              {"bad", switchboard::protocol::McpTransport::Stdio, McpServerStatusKind::Pending, std::nullopt, std::nullopt}});
  translator.on_extension("_x.ai/mcp/server_status", json::parse(R"({"sessionId":"s","name":"sbt","status":"ready","reason":"initialized","tools":1})"));
  translator.on_extension("_x.ai/mcp/server_status", json::parse(R"({"sessionId":"s","name":"bad","status":"failed","reason":"spawn failed: no such file"})"));
  translator.on_extension("_x.ai/mcp/server_status", json::parse(R"({"sessionId":"s","name":"users-own","status":"ready"})"));
  translator.on_extension("_x.ai/mcp/server_status", json::parse(R"({"sessionId":"other","name":"sbt","status":"failed"})"));
  REQUIRE(sink.mcp.size() == 3);
  CHECK(sink.mcp[0].servers[0].status == McpServerStatusKind::Pending);
  CHECK(sink.mcp[1].servers[0].status == McpServerStatusKind::Connected);
  CHECK(sink.mcp[1].servers[0].tools == 1);
  CHECK(sink.mcp[2].servers[1].status == McpServerStatusKind::Failed);
  CHECK(sink.mcp[2].servers[1].error == "spawn failed: no such file");
  CHECK(translator.stats().unknown == 0);
}

TEST_CASE("acp translator: a failed prompt ends the turn as an error saying why, and a retry is a status", "[acp]") {
  CodexRecordingSink sink;
  AcpTranslator translator(sink, "grok");
  translator.set_session("s");
  translator.turn_started("t");
  translator.on_extension("_x.ai/session_notification",
                          json{{"sessionId", "s"},
                               {"update", {{"sessionUpdate", "retry_state"}, {"type", "retrying"}, {"attempt", 1}, {"max_retries", 3}, {"reason", "Server error; retrying request"}}}});
  JsonRpcEndpoint::Error error{-32603, "Internal error", json{{"message", "API error (status 500)"}, {"http_status", 500}}};
  translator.on_prompt_answer(error);
  REQUIRE(sink.statuses.size() == 1);
  CHECK(sink.statuses[0].attempt == 1);
  CHECK(sink.statuses[0].max_attempts == 3);
  REQUIRE(sink.turns.size() == 1);
  CHECK(sink.turns[0].stop_reason == switchboard::protocol::StopReason::Error);
  CHECK(sink.turns[0].error == "API error (status 500)");
}

TEST_CASE("acp content: the options picked for our decisions are the one-time ones, else the always ones", "[acp]") {
  const json grok = json::parse(R"([{"optionId":"always-allow","kind":"allow_always"},{"optionId":"allow-once","kind":"allow_once"},
                                    {"optionId":"reject-once","kind":"reject_once"},{"optionId":"reject-always","kind":"reject_always"}])");
  CHECK(acp::option_for(grok, true) == "allow-once");
  CHECK(acp::option_for(grok, false) == "reject-once");
  const json always_only = json::parse(R"([{"optionId":"a","kind":"allow_always"},{"optionId":"r","kind":"reject_always"}])");
  CHECK(acp::option_for(always_only, true) == "a");
  CHECK(acp::option_for(always_only, false) == "r");
  const json opencode = json::parse(R"([{"optionId":"once","kind":"allow_once"},{"optionId":"always","kind":"allow_always"}])");
  CHECK(acp::option_for(opencode, false) == std::nullopt);
  CHECK(acp::permission_outcome(std::nullopt) == json{{"outcome", {{"outcome", "cancelled"}}}});
}

TEST_CASE("acp translator: a tool call's diff content becomes its diffs, a new file without old text", "[acp]") {
  CodexRecordingSink sink;
  AcpTranslator translator(sink, "acp");
  translator.set_session("s1");
  translator.turn_started("t1");
  translator.on_update(json{{"sessionId", "s1"}, {"update", json::parse(R"({"sessionUpdate":"tool_call","toolCallId":"c1","title":"Edit a.txt","kind":"edit",
      "status":"pending","content":[{"type":"diff","path":"/w/a.txt","oldText":"beta","newText":"BETA"},
                                    {"type":"diff","path":"/w/new.txt","newText":"fresh\n"},
                                    {"type":"diff","newText":"no path"},
                                    {"type":"content","content":{"type":"text","text":"editing"}}]})")}});
  translator.on_update(json{{"sessionId", "s1"}, {"update", json::parse(R"({"sessionUpdate":"tool_call","toolCallId":"c2","title":"ls","kind":"execute",
      "status":"pending","rawInput":{"command":"ls"}})")}});
  REQUIRE(sink.tools.size() == 2);
  const auto& diffs = sink.tools[0].diffs;
  REQUIRE(diffs.size() == 2);
  CHECK(diffs[0].path == "/w/a.txt");
  CHECK(diffs[0].old_text == "beta");
  CHECK(diffs[0].new_text == "BETA");
  CHECK(diffs[1].path == "/w/new.txt");
  CHECK_FALSE(diffs[1].old_text.has_value());
  CHECK(sink.tools[1].diffs.empty());
}

TEST_CASE("acp content: raw output as byte values is decoded, and anything else is never mistaken for it", "[acp]") {
  CHECK(acp::raw_output_text(json::parse(R"({"type":"Bash","output":[104,105,10],"output_for_prompt":"exit: 0\nhi\n"})")) == "hi\n");
  CHECK(acp::raw_output_text(json::parse(R"({"output":[104,300]})")).find("output_for_prompt") == std::string::npos);
  CHECK(acp::raw_output_text(json::parse(R"({"output":[104,300],"output_for_prompt":"x"})")) == "x");
  CHECK(acp::raw_output_text(json("plain")) == "plain");
  CHECK(acp::raw_output_text(json(nullptr)).empty());
  CHECK(acp::bytes_of(json::parse("[0,255]")) == std::string("\0\xff", 2));
  CHECK_FALSE(acp::bytes_of(json::parse("[-1]")));
  CHECK_FALSE(acp::bytes_of(json::parse(R"(["a"])")));
}

TEST_CASE("acp content: the tool name is the ACP kind, the subject the command line or path", "[acp]") {
  CHECK(acp::tool_name(json::parse(R"({"kind":"execute","title":"Execute `ls`"})")) == "execute");
  CHECK(acp::tool_name(json::parse(R"({"title":"run_terminal_command","_meta":{"x.ai/tool":{"kind":"execute"}}})")) == "execute");
  CHECK(acp::tool_name(json::parse(R"({"kind":"other","title":"websearch"})")) == "websearch");
  CHECK(acp::tool_name(json::parse(R"({"title":"x"})")) == "x");
  CHECK(acp::tool_subject(json::parse(R"({"kind":"execute","rawInput":{"command":["git","status"]}})")) == "git status");
  CHECK(acp::tool_subject(json::parse(R"({"kind":"edit","locations":[{"path":"/w/a.txt"}]})")) == "/w/a.txt");
  CHECK(acp::tool_subject(json::parse(R"({"kind":"edit","rawInput":{"file_path":"/w/b.txt"}})")) == "/w/b.txt");
  const auto ask = acp::permission_ask("7", json::parse(R"({"toolCall":{"kind":"execute","title":"Execute `ls *`","rawInput":{"command":"ls *"}}})"));
  CHECK(ask.subject == "ls *");
  CHECK(ask.description == "Run: ls *");  // Grok's title only repeats the command
  // The suggested rule matches this command line only: its glob character is escaped.
  REQUIRE(ask.suggested_rule);
  CHECK(ask.suggested_rule->tool == "execute");
  CHECK(ask.suggested_rule->pattern == "ls \\*");
}

TEST_CASE("acp content: a command's permission request shows the command as it runs whatever the tool's title", "[acp]") {
  // OpenCode's ACP titles a shell call with the model's description of it, not the command.
  const auto opencode = acp::permission_ask("1", json::parse(R"({"toolCall":{"kind":"execute","title":"test command",
                                                             "rawInput":{"command":"touch a && echo b","description":"test command"}}})"));
  CHECK(opencode.description == "Run: touch a && echo b — test command");
  const auto untitled = acp::permission_ask("2", json::parse(R"({"toolCall":{"kind":"execute","rawInput":{"command":"echo 'x; y'"}}})"));
  CHECK(untitled.description == "Run: echo 'x; y'");
  // Other tools keep their title.
  const auto edit = acp::permission_ask("3", json::parse(R"({"toolCall":{"kind":"edit","title":"Edit a.txt","locations":[{"path":"/w/a.txt"}]}})"));
  CHECK(edit.description == "Edit a.txt");
}

TEST_CASE("acp: the version is the first version number of the output", "[acp]") {
  CHECK(acp::first_version_in("grok 1.0.41 (4220f3b224a6)\n") == "1.0.41");
  CHECK(acp::first_version_in("1.18.33\n") == "1.18.33");
  CHECK(acp::first_version_in("tool v2.3.") == std::nullopt);  // "v2.3" is part of a word
  CHECK(acp::first_version_in("agent 2 build 3.1") == "3.1");
  CHECK(acp::first_version_in("no version") == std::nullopt);
}

}  // namespace acp_translator_tests
