#pragma once

#include <string_view>

namespace switchboard::http {

// The page served at GET / (a placeholder for the web console): it takes the token from the URL fragment
// (#token=…, which browsers never send to servers, so it stays out of logs), shows the daemon's identity and
// the live event stream.
std::string_view web_page();

}  // namespace switchboard::http
