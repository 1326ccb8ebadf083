#include "http/WebPage.h"

namespace switchboard::http {

std::string_view web_page() {
  static constexpr std::string_view kPage = R"page(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Switchboard</title>
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; color: #222; }
  code, pre { font: 12px/1.4 ui-monospace, monospace; }
  #events { background: #f6f6f6; padding: 1rem; max-height: 70vh; overflow: auto; }
  .muted { color: #777; }
</style>
</head>
<body>
<h1>Switchboard</h1>
<p id="who" class="muted">connecting…</p>
<p id="state" class="muted"></p>
<pre id="events"></pre>
<script>
"use strict";
const token = new URLSearchParams(location.hash.slice(1)).get("token");
const state = document.getElementById("state");
const out = document.getElementById("events");
fetch("/.well-known/switchboard").then(r => r.json()).then(id => {
  document.getElementById("who").textContent =
    `${id.name} ${id.version}, protocol ${id.protocolVersion}, pid ${id.pid}`;
});
if (!token) {
  state.textContent = "Open the URL that `switchboard serve` printed (it ends in #token=…).";
} else {
  // EventSource cannot send headers: the token goes in the query (the daemon redacts it from its logs). There is
  // no cookie: a browser would send it to every server on this host, whatever the port.
  const source = new EventSource("/events?token=" + encodeURIComponent(token));
  source.onopen = () => { state.textContent = "live"; };
  source.onerror = () => { state.textContent = "reconnecting…"; };
  source.onmessage = (message) => {
    out.textContent += message.data + "\n";
    out.scrollTop = out.scrollHeight;
  };
  source.addEventListener("gap", (message) => {
    out.textContent += "(events " + message.data + " are no longer retained)\n";
  });
}
</script>
</body>
</html>
)page";
  return kPage;
}

}  // namespace switchboard::http
