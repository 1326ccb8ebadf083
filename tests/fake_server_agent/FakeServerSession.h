#pragma once

#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>

#include "switchboard/adapters/AgentAdapter.h"

namespace switchboard::testing::fake_server {

class FakeServerRuntime;

// One session of the fake server agent: requests go to the shared server over the runtime's HTTP client, and the
// runtime hands this session the events that name it. Modes: "ask" (a shell command asks first, the default) and
// "auto".
class FakeServerSession final : public adapters::AgentAdapter {
 public:
  FakeServerSession(boost::asio::io_context& io, FakeServerRuntime& runtime, adapters::AdapterListener& listener);
  ~FakeServerSession() override;

  static protocol::AgentCapabilities static_capabilities();

  protocol::AgentCapabilities capabilities() const override { return static_capabilities(); }
  void start(const adapters::StartOptions& options, adapters::Completion done) override;
  void send(adapters::TurnInput input) override;
  void cancel() override;
  void answer_permission(const std::string& native_id, adapters::PermissionAnswer answer, adapters::Completion done) override;
  void answer_question(const std::string& native_id, adapters::QuestionAnswer answer, adapters::Completion done) override;
  void set_model(const std::string& model, adapters::Completion done) override;
  void set_mode(const std::string& mode, adapters::Completion done) override;
  void stop() override;

  // From the runtime: one event of the server's stream for this session, and the server's end.
  void on_server_event(const std::string& type, const nlohmann::json& data);
  void server_lost(const std::string& reason);

 private:
  void open_session(const adapters::StartOptions& options, adapters::Completion done);
  void post_to_session(const std::string& action, const nlohmann::json& body,
                       std::function<void(std::optional<std::string> failure, unsigned status)> then);
  void fail_turn(const std::string& why);
  void become_unavailable(const std::string& reason);

  boost::asio::io_context& m_io;
  FakeServerRuntime& m_runtime;
  adapters::AdapterListener& m_listener;
  std::string m_id;  // the server's session id, once started
  std::string m_mode = "ask";
  std::optional<std::string> m_model;
  std::string m_turn_id;
  int m_message_index = 0;  // the turn's messages: "<turn>:<n>"
  bool m_turn_running = false;
  bool m_unavailable = false;
  // Requests in flight hold a weak_ptr to it, so a session destroyed meanwhile is left alone.
  std::shared_ptr<FakeServerSession*> m_self;
};

}  // namespace switchboard::testing::fake_server
