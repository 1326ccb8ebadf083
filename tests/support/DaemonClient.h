#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/FdIo.h"
#include "support/SpawnedDaemon.h"

namespace switchboard::testing {

// A stdio client of a spawned switchboard: writes requests, and a reader thread collects every line (responses
// and `event` notifications) so a test can wait for a response or for an event with a deadline. Test-only.
class DaemonClient {
 public:
  using Json = nlohmann::json;

  // `stderr_fd`: where the daemon's stderr goes (the test keeps its own copy); by default nowhere.
  DaemonClient(std::vector<std::string> args, const std::vector<std::string>& extra_env,
               const std::string& binary = SWITCHBOARD_BINARY, int stderr_fd = -1) {
    int in[2];
    int out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) return;
    const int null_err = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    int err = std::getenv("SWITCHBOARD_TEST_DAEMON_LOGS") ? 2 : null_err;  // set it to see the daemon's log
    if (stderr_fd >= 0) err = stderr_fd;
    m_daemon = std::make_unique<SpawnedDaemon>(std::move(args), in[0], out[1], err, extra_env, binary);
    ::close(in[0]);
    ::close(out[1]);
    ::close(null_err);
    m_in = in[1];
    m_out = out[0];
    m_reader = std::thread([this] { read_loop(); });
  }
  ~DaemonClient() {
    close_stdin();
    if (m_daemon) m_daemon->wait(std::chrono::seconds(30));
    if (m_reader.joinable()) m_reader.join();
    if (m_out >= 0) ::close(m_out);
  }
  DaemonClient(const DaemonClient&) = delete;
  DaemonClient& operator=(const DaemonClient&) = delete;

  SpawnedDaemon& daemon() { return *m_daemon; }

  void close_stdin() {
    if (m_in >= 0) ::close(std::exchange(m_in, -1));
  }

  // Sends a request; returns its id.
  std::int64_t send(const std::string& method, const Json& params = Json::object()) {
    const std::int64_t id = ++m_next_id;
    const Json request{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
    write_all(m_in, request.dump() + "\n");
    return id;
  }

  // Sends one line as it is (a request the test built itself, with its own id).
  void send_line(const std::string& line) { write_all(m_in, line + "\n"); }

  // The response to request `id` (the whole object), or null after the deadline.
  Json response(std::int64_t id, std::chrono::milliseconds timeout = std::chrono::seconds(90)) {
    std::unique_lock lock(m_mutex);
    const bool got = m_changed.wait_for(lock, timeout, [&] {
      for (const auto& message : m_responses) {
        if (message.value("id", Json()) == id) return true;
      }
      return m_eof;
    });
    if (!got) return nullptr;
    for (const auto& message : m_responses) {
      if (message.value("id", Json()) == id) return message;
    }
    return nullptr;
  }

  // Every response line with id `id`, as the daemon wrote it, once at least one has arrived (or after the
  // deadline: then none). A test that wants "exactly one" waits a little and counts.
  std::vector<std::string> response_lines(std::int64_t id, std::chrono::milliseconds timeout = std::chrono::seconds(90)) {
    response(id, timeout);
    std::lock_guard lock(m_mutex);
    std::vector<std::string> lines;
    for (std::size_t i = 0; i < m_responses.size(); ++i) {
      if (m_responses[i].value("id", Json()) == id) lines.push_back(m_response_lines[i]);
    }
    return lines;
  }

  Json call(const std::string& method, const Json& params = Json::object(),
            std::chrono::milliseconds timeout = std::chrono::seconds(90)) {
    return response(send(method, params), timeout);
  }

  // The first event after position `from` (an index into events()) that satisfies `match`, or null after the
  // deadline. `from` is moved past it, so successive waits walk forward through the stream.
  Json wait_event(const std::function<bool(const Json&)>& match, std::size_t& from,
                  std::chrono::milliseconds timeout = std::chrono::seconds(90)) {
    std::unique_lock lock(m_mutex);
    std::optional<Json> found;
    m_changed.wait_for(lock, timeout, [&] {
      for (; from < m_events.size(); ++from) {
        if (match(m_events[from])) {
          found = m_events[from++];
          return true;
        }
      }
      return m_eof;
    });
    return found ? *found : Json(nullptr);
  }
  Json wait_event(const std::string& type, std::size_t& from, std::chrono::milliseconds timeout = std::chrono::seconds(90)) {
    return wait_event([&](const Json& e) { return e.value("type", "") == type; }, from, timeout);
  }

  // Every event so far (the `params` of each `event` notification), in arrival order.
  std::vector<Json> events() const {
    std::lock_guard lock(m_mutex);
    return m_events;
  }
  std::vector<std::string> event_lines() const {
    std::lock_guard lock(m_mutex);
    return m_event_lines;
  }

 private:
  void read_loop() {
    std::string buffer;
    char chunk[65536];
    for (;;) {
      const ssize_t n = ::read(m_out, chunk, sizeof chunk);
      if (n <= 0) break;
      buffer.append(chunk, static_cast<std::size_t>(n));
      std::size_t newline;
      while ((newline = buffer.find('\n')) != std::string::npos) {
        std::string line = buffer.substr(0, newline);
        buffer.erase(0, newline + 1);
        auto message = Json::parse(line, nullptr, false);
        std::lock_guard lock(m_mutex);
        if (message.is_object() && message.value("method", "") == "event") {
          m_events.push_back(message.at("params"));
          const std::string prefix = R"({"jsonrpc":"2.0","method":"event","params":)";
          m_event_lines.push_back(line.substr(prefix.size(), line.size() - prefix.size() - 1));
        } else {
          m_responses.push_back(std::move(message));
          m_response_lines.push_back(line);
        }
        m_changed.notify_all();
      }
    }
    std::lock_guard lock(m_mutex);
    m_eof = true;
    m_changed.notify_all();
  }

  std::unique_ptr<SpawnedDaemon> m_daemon;
  int m_in = -1;
  int m_out = -1;
  std::int64_t m_next_id = 0;
  std::thread m_reader;
  mutable std::mutex m_mutex;
  std::condition_variable m_changed;
  std::vector<Json> m_responses;
  std::vector<std::string> m_response_lines;  // the same responses, as written
  std::vector<Json> m_events;
  std::vector<std::string> m_event_lines;
  bool m_eof = false;
};

}  // namespace switchboard::testing
