#include "run/ExportCommand.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>

#include "client/DaemonLink.h"
#include "client/RpcConnection.h"
#include "run/RunExitCode.h"
#include "switchboard/protocol/generated/ErrorCodes.h"
#include "switchboard/protocol/generated/Methods.h"
#include "switchboard/version.h"

namespace switchboard::run {
namespace {

using Json = nlohmann::json;
namespace p = protocol;

// After the document is out, how long an attached export waits for the daemon to close the connection.
constexpr auto kExportCloseLimit = std::chrono::seconds(5);

std::string error_text(const Json& response) {
  if (const auto error = response.find("error"); error != response.end() && error->is_object()) {
    return error->value("message", std::string("error"));
  }
  return "no answer";
}

RunExitCode code_of(const Json& response) {
  const auto error = response.find("error");
  if (error == response.end() || !error->is_object()) return kRunFailed;
  const auto code = error->value("code", 0);
  if (code == static_cast<int>(p::ErrorCode::UnknownSession) || code == static_cast<int>(p::ErrorCode::InvalidParams)) {
    return kRunInvalid;
  }
  return kRunFailed;
}

bool write_all(int fd, const std::string& text) {
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<std::size_t>(n);
  }
  return true;
}

// Writes the document where the options say; the exit code.
RunExitCode write_document(const ExportOptions& options, const std::string& content) {
  if (!options.output_file) {
    if (write_all(STDOUT_FILENO, content)) return kRunCompleted;
    std::cerr << "switchboard export: cannot write to standard output\n";
    return kRunFailed;
  }
  std::FILE* file = std::fopen(options.output_file->c_str(), "wb");
  if (file == nullptr) {
    std::cerr << "switchboard export: cannot write " << options.output_file->string() << "\n";
    return kRunInvalid;
  }
  const bool ok = std::fwrite(content.data(), 1, content.size(), file) == content.size();
  if (std::fclose(file) != 0 || !ok) {
    std::cerr << "switchboard export: cannot write " << options.output_file->string() << "\n";
    return kRunFailed;
  }
  return kRunCompleted;
}

}  // namespace

int run_export(const ExportOptions& options, daemon::DaemonOptions daemon_options) {
  std::signal(SIGPIPE, SIG_IGN);  // a closed reader surfaces as a write error
  const auto attach = options.standalone ? client::Attach::Never : client::Attach::IfRunning;
  const auto link = client::DaemonLink::open("export", std::move(daemon_options), attach,
                                             [](daemon::DaemonOptions& hosted) { hosted.engine.defer_discovery = true; });
  if (!link) return kRunFailed;
  auto& io = link->io();
  std::optional<int> exit_code;
  client::RpcConnection connection(io, link->take_client_socket(), [](std::string_view, const Json&) {}, [&exit_code] {
    if (!exit_code) {
      std::cerr << "switchboard export: the daemon closed the connection before answering\n";
      exit_code = kRunFailed;
    }
  });
  const auto finish = [&](int code) {
    exit_code = code;
    connection.finish();
  };
  connection.start();
  Json hello{{"protocolVersion", p::kProtocolVersion}, {"clientInfo", {{"name", "switchboard-export"}, {"version", std::string(kVersion)}}}};
  connection.call("initialize", std::move(hello), [&](const Json& response) {
    link->daemon_answered();
    if (!response.contains("result")) {
      std::cerr << "switchboard export: initialize: " << error_text(response) << "\n";
      return finish(kRunFailed);
    }
    connection.call(p::SessionExportMethod::kName, Json{{"sessionId", options.session_id}, {"format", options.format}},
                    [&](const Json& answer) {
                      const auto result = answer.find("result");
                      if (result == answer.end() || !result->contains("content")) {
                        std::cerr << "switchboard export: " << error_text(answer) << "\n";
                        return finish(code_of(answer));
                      }
                      finish(write_document(options, result->at("content").get<std::string>()));
                    });
  });
  const int daemon_code = link->run([&exit_code] { return exit_code.has_value(); });
  if (link->attached()) {
    io.run_for(kExportCloseLimit);
  } else if (!exit_code) {
    std::cerr << "switchboard export: no daemon could run for the data directory " << link->data_dir().string() << " (exit "
              << daemon_code << ")\n";
    return kRunInvalid;
  }
  return exit_code.value_or(kRunFailed);
}

}  // namespace switchboard::run
