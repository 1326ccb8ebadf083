#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "client/DaemonLink.h"
#include "daemon/DataDirectory.h"
#include "support/TempDir.h"

// The attach-or-host decision every client command shares (client/DaemonLink.h): the user's daemon when one listens
// for the data directory; never for an ephemeral daemon, nor for a command that must host its own.

namespace daemon_link_tests {

using namespace switchboard;
using switchboard::testing::TempDir;

// What a running daemon leaves for its clients: a listening Unix socket, named in the data directory's runtime file.
class ListeningStandIn {
 public:
  explicit ListeningStandIn(const std::filesystem::path& data_dir) {
    const auto path = (data_dir / "d.sock").string();
    m_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(m_fd >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    REQUIRE(path.size() < sizeof address.sun_path);
    std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
    REQUIRE(::bind(m_fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
    REQUIRE(::listen(m_fd, 4) == 0);
    std::ofstream(daemon::RuntimeFile::path_in(data_dir)) << nlohmann::json{{"socket", path}}.dump();
  }
  ~ListeningStandIn() { ::close(m_fd); }
  ListeningStandIn(const ListeningStandIn&) = delete;
  ListeningStandIn& operator=(const ListeningStandIn&) = delete;

 private:
  int m_fd = -1;
};

daemon::DaemonOptions options_for(const std::filesystem::path& data_dir) {
  daemon::DaemonOptions options;
  options.data_dir = data_dir;
  return options;
}

TEST_CASE("client: with no daemon listening for the data directory, a command hosts its own", "[client]") {
  TempDir tmp("link");
  CHECK_FALSE(client::running_daemon(options_for(tmp.path()), client::Attach::IfRunning));
}

TEST_CASE("client: a command attaches to the daemon listening for its data directory, unless it must host its own",
          "[client]") {
  TempDir tmp("link");
  ListeningStandIn running(tmp.path());
  auto options = options_for(tmp.path());
  SECTION("the user's daemon") {
    const auto socket = client::running_daemon(options, client::Attach::IfRunning);
    REQUIRE(socket);
    CHECK(*socket >= 0);
    ::close(*socket);
  }
  SECTION("never with --standalone or `stdio --http`") {
    CHECK_FALSE(client::running_daemon(options, client::Attach::Never));
  }
  SECTION("never for an ephemeral daemon, which shares nothing with the user's") {
    options.ephemeral = true;
    CHECK_FALSE(client::running_daemon(options, client::Attach::IfRunning));
  }
}

}  // namespace daemon_link_tests
