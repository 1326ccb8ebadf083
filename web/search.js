// Search across every stored session (session.search) and the export of the open session (session.export).
// The module builds its own controls, so the page's layout stays where it is: a search box above the session
// list, whose hits replace the list while a query is typed (a hit opens its session at its turn), and two
// export buttons in the session header. Untrusted text reaches the DOM only as text. See docs/search.md.
import { el } from "./view.js";

const kHitsPerPage = 20;
const kTypeLabel = { "turn.started": "prompt", "message.completed": "answer", "tool.started": "tool call", "tool.completed": "tool output" };

// The snippet's matches («…») as <mark>, everything as text nodes.
function snippetNode(snippet) {
  const node = el("span", { class: "snippet" });
  const parts = snippet.split(/«|»/);
  parts.forEach((part, i) => node.append(i % 2 === 1 ? el("mark", { text: part }) : document.createTextNode(part)));
  return node;
}

function download(name, type, content) {
  const link = el("a", { href: URL.createObjectURL(new Blob([content], { type })), download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

// How far back a search reaches (session.search `since`), as the menu beside the box offers it.
const kSinceChoices = [["", "any time"], [String(24 * 3600e3), "past day"], [String(7 * 24 * 3600e3), "past week"],
                       [String(30 * 24 * 3600e3), "past 30 days"]];

// `open(sessionId, turnId)` selects a session, scrolled to that turn; `openSessionId()` is the one open now;
// `knownSession(sessionId)` the SessionInfo the page holds, if any; `failed(error)` reports an error. The agent
// chosen in the session list's filter narrows the search too.
export function installSearch({ api, open, openSessionId, knownSession, failed }) {
  const sidebar = document.getElementById("sidebar");
  const list = document.getElementById("session-list");
  const agentFilter = document.getElementById("agent-filter");
  const input = el("input", { id: "history-search", type: "search", placeholder: "Search all sessions",
                              "aria-label": "Search the prompts, answers and tool output of all sessions" });
  const since = el("select", { id: "search-since", "aria-label": "Search how far back" },
                   ...kSinceChoices.map(([value, text]) => el("option", { value, text })));
  const results = el("ul", { id: "search-results", class: "search-results", "aria-label": "Search results", hidden: true });
  sidebar.insertBefore(el("div", { class: "sidebar-search" }, input, since), list);
  sidebar.insertBefore(results, list);
  const state = { query: "", cursor: null, generation: 0, timer: null };
  const titles = new Map();  // sessionId -> a promise of its title, for hits of sessions the page has not listed

  // What a hit says of its session: its title and agent, read once per session when the page does not hold it.
  function sessionLabel(sessionId, node) {
    const describe = (info) => `${info.title || "untitled"} (${info.agent})`;
    const known = knownSession(sessionId);
    if (known) { node.textContent = describe(known); return; }
    node.textContent = sessionId;
    if (!titles.has(sessionId)) {
      titles.set(sessionId, api.call("session.get", { sessionId }).then(({ session }) => describe(session), () => null));
    }
    titles.get(sessionId).then((label) => { if (label) node.textContent = label; });
  }

  // A hit is a button in its list item (a list keeps list items; the button answers a click, Enter and Space).
  function hitNode(hit) {
    const session = el("span", { class: "search-hit-session" });
    sessionLabel(hit.sessionId, session);
    return el("li", {},
              el("button", { type: "button", class: "search-hit", "data-session-id": hit.sessionId,
                             onclick: () => open(hit.sessionId, hit.turnId) },
                 el("span", { class: "muted" }, `${kTypeLabel[hit.type] || hit.type} · `, session),
                 snippetNode(hit.snippet)));
  }

  async function run(more) {
    const generation = more ? state.generation : ++state.generation;
    const params = { query: state.query, limit: kHitsPerPage };
    if (agentFilter && agentFilter.value) params.agent = agentFilter.value;
    if (since.value) params.since = Date.now() - Number(since.value);
    if (more) params.cursor = state.cursor;
    const page = await api.call("session.search", params);
    if (generation !== state.generation) return;  // a newer query answered first
    if (!more) results.replaceChildren();
    results.querySelector(".search-more")?.remove();
    for (const hit of page.hits) results.append(hitNode(hit));
    if (!more && page.hits.length === 0) results.append(el("li", { class: "muted", text: "No match." }));
    state.cursor = page.nextCursor || null;
    if (state.cursor) {
      results.append(el("li", {}, el("button", { type: "button", class: "search-more", text: "More results",
                                                 onclick: () => run(true).catch(failed) })));
    }
  }

  // A narrower or wider search of the same words, at once.
  const rerun = () => { if (state.query) run(false).catch(failed); };
  since.addEventListener("change", rerun);
  if (agentFilter) agentFilter.addEventListener("change", rerun);

  input.addEventListener("input", () => {
    clearTimeout(state.timer);
    state.query = input.value.trim();
    const searching = state.query !== "";
    results.hidden = !searching;
    list.hidden = searching;
    if (!searching) {
      ++state.generation;
      results.replaceChildren();
      return;
    }
    state.timer = setTimeout(() => run(false).catch(failed), 200);
  });

  const header = document.getElementById("session-header");
  const exportAs = (format, extension, type) => async () => {
    const sessionId = openSessionId();
    if (!sessionId) return;
    try {
      const { content } = await api.call("session.export", { sessionId, format });
      download(`${sessionId}.${extension}`, type, content);
    } catch (error) {
      failed(error);
    }
  };
  header.append(
      el("button", { type: "button", id: "export-markdown-button", title: "Download the conversation as Markdown",
                     text: "Export", onclick: exportAs("markdown", "md", "text/markdown") }),
      el("button", { type: "button", id: "export-json-button", title: "Download the session's events as JSON (lossless)",
                     text: "JSON", onclick: exportAs("json", "json", "application/json") }));
}
