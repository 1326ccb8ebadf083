// The web console: wires the API, the event stream, the store and the view. See docs/console.md.
import { Api, ErrorCode, RpcError, Unauthorized, errorText } from "./api.js";
import { Attention } from "./attention.js";
import { EventStream } from "./events.js";
import { Store } from "./store.js";
import { installSearch } from "./search.js";
import { TranscriptView, badge, drawSessionList, el, fileChangesNode, resolutionText, sessionTitle, stateLabel } from "./view.js";

const $ = (id) => document.getElementById(id);
const kTokenKey = "switchboard.token";

// The token comes in the URL fragment (#token=…), which browsers never send to a server; it is kept in this
// tab's sessionStorage (gone with the tab, not shared with other sites or ports) and removed from the address
// bar, so it does not end up in bookmarks, screenshots or the history.
function takeFragment() {
  const params = new URLSearchParams(location.hash.slice(1));
  const token = params.get("token");
  if (token) sessionStorage.setItem(kTokenKey, token);
  const session = params.get("session");
  history.replaceState(null, "", location.pathname + (session ? `#session=${encodeURIComponent(session)}` : ""));
  return { tokenChanged: Boolean(token), session };
}
const token = () => sessionStorage.getItem(kTokenKey) || "";

const api = new Api(token);
const store = new Store();
const transcriptView = new TranscriptView($("transcript"));
transcriptView.onRedraw = () => scheduleDraw();
const ui = { selectedId: null, streamOpen: false, loading: new Map(), cards: new Map(), agents: [] };
const attention = new Attention({ baseTitle: document.title, onOpen: (sessionId) => { setDrawer(false); select(sessionId); } });

// ---- connection -----------------------------------------------------------------------------------------

function setConnection(state, text) {
  const node = $("connection");
  node.dataset.state = state;
  node.textContent = text;
}

function notice(text) {
  const node = $("notice");
  node.hidden = !text;
  node.textContent = text || "";
}

function failed(error) {
  if (error instanceof Unauthorized) return unauthorized();
  notice(errorText(error));
}

function unauthorized() {
  ui.streamOpen = false;
  setConnection("unauthorized", "token refused");
  notice("The daemon refused this page's token. It makes a new token every time it starts: open the URL it printed " +
         "(…/#token=…) and this page picks up where it left off.");
}

const stream = new EventStream({
  tokenSource: token,
  onOpen: () => {
    ui.streamOpen = true;
    setConnection("live", "live");
    notice("");
    resync().catch(failed);
  },
  onEvent: (event) => {
    store.apply(event);
    if (event.type === "permission.requested" || event.type === "question.requested") {
      attention.announce(event, store.sessions.get(event.sessionId));
    }
    if (event.type === "daemon.shutdown") setConnection("reconnecting", "daemon stopped");
  },
  onGap: (gap) => {
    // Events in this range cannot be replayed: read the open sessions' transcripts again from the event log.
    for (const transcript of store.transcripts.values()) {
      if (transcript.loaded) loadTranscript(transcript.sessionId, transcript.lastSeq).catch(failed);
    }
    console.warn("switchboard: events", gap.from, "to", gap.to, "were not replayed");
  },
  onDown: (why) => {
    ui.streamOpen = false;
    setConnection("reconnecting", "reconnecting…");
    console.info("switchboard: event stream down:", why);
  },
  onUnauthorized: unauthorized,
});

// After every (re)connect: the session list and the open session's snapshot (its open requests, its queue,
// whether a restart interrupted it). The stream itself resumed from the last seq this tab applied.
async function resync() {
  const agents = ui.agents.length ? null : api.call("agents.list").then(({ agents: list }) => {
    ui.agents = list;
    $("agent-filter").replaceChildren(el("option", { value: "", text: "all agents" }),
                                      ...ui.agents.map((a) => el("option", { value: a.agent, text: a.agent })));
  });
  // The agents, the list and the open session are read side by side: a long session's end waits for none of
  // them (its transcript is drawn once the agents' capabilities are known, which its turns' actions follow).
  await Promise.all([agents, loadSessions(), ui.selectedId ? openSession(ui.selectedId, agents) : null]);
}

// The session list, a page at a time (session.list pages cost the same however many sessions there are): the
// first page now, the next one when the end of the list scrolls into view. The filters go to the daemon
// (agent; text in the title or directory), and the same test keeps live changes in step with them.
const kSessionPage = 100;
const listing = { cursor: null, loading: null, generation: 0 };

function listFilters() {
  const filters = {};
  if ($("show-archived").checked) filters.archived = true;
  if ($("agent-filter").value) filters.agent = $("agent-filter").value;
  const text = $("session-filter").value.trim();
  if (text) filters.text = text;
  return filters;
}

export function sessionMatches(session, filters) {
  if (Boolean(session.archived) !== Boolean(filters.archived)) return false;
  if (filters.agent && session.agent !== filters.agent) return false;
  const needle = (filters.text || "").toLowerCase();
  return !needle || (session.title || "").toLowerCase().includes(needle) || session.cwd.toLowerCase().includes(needle);
}

async function loadSessions() {
  const generation = ++listing.generation;  // a newer filter makes older answers moot
  const page = await api.call("session.list", { limit: kSessionPage, ...listFilters() });
  if (generation !== listing.generation) return;
  const open = ui.selectedId && store.sessions.get(ui.selectedId);  // the open session's header keeps its data
  store.sessions.clear();
  if (open) store.sessions.set(open.sessionId, open);
  listing.cursor = page.nextCursor || null;
  store.setSessions(page.sessions);
}

async function loadMoreSessions() {
  if (!listing.cursor || listing.loading) return;
  const generation = listing.generation;
  listing.loading = api.call("session.list", { limit: kSessionPage, cursor: listing.cursor, ...listFilters() });
  try {
    const page = await listing.loading;
    if (generation !== listing.generation) return;
    listing.cursor = page.nextCursor || null;
    store.setSessions(page.sessions);
  } finally {
    listing.loading = null;
  }
}

// ---- one session ----------------------------------------------------------------------------------------

// The stored events after `afterSeq`, every page (a gap: what the live stream could not replay).
async function loadTranscript(sessionId, afterSeq) {
  const transcript = store.transcript(sessionId);
  transcript.loaded = false;  // live events wait in `pending` while the stored ones are read
  const events = await api.allSessionEvents(sessionId, afterSeq);
  store.loadTranscript(sessionId, events);
}

// A session opened for the first time is read from its end: the newest page is drawn at once, and the pages
// before it are read after that, in the background (a session of 10,000 events shows its end as fast as one of
// 300). The first page is read below any seq there can be, so it needs no other answer first; events after it
// come from the stream, which was open first, and the overlap is dropped by seq. The first page is about what
// the view draws first (view.js: the newest 100 items); the others are as large as allowed.
const kFirstPage = 300;
const kEventPage = 1000;
const kAboveEverySeq = Number.MAX_SAFE_INTEGER;

async function loadNewest(sessionId, ready) {
  const transcript = store.transcript(sessionId);
  transcript.loaded = false;
  const page = await api.sessionEventsBefore(sessionId, kAboveEverySeq, kFirstPage);
  performance.mark("transcript-fetched");
  await ready;
  store.loadTranscript(sessionId, page.events, page.olderBefore);
  performance.mark("transcript-applied");
  // After the frame that shows the end: the earlier pages' parsing must not delay it.
  if (transcript.olderBefore !== null) {
    requestAnimationFrame(() => setTimeout(() => loadOlder(sessionId).catch(failed), 0));
  }
}

// Every page before the ones applied, newest first, then the transcript built again from the start, once (a
// rebuild redraws the transcript; the reader's place in it is kept).
async function loadOlder(sessionId) {
  const transcript = store.transcript(sessionId);
  if (transcript.loadingOlder) return;
  transcript.loadingOlder = true;
  try {
    const pages = [];
    let before = transcript.olderBefore;
    while (before !== null) {
      const page = await api.sessionEventsBefore(sessionId, before, kEventPage);
      pages.unshift(page.events);
      before = page.olderBefore;
    }
    transcript.prependOlder(pages.flat(), null);
    store.onChange();
  } finally {
    transcript.loadingOlder = false;
  }
}

// `ready`: what must be in before the transcript is drawn (the agents' capabilities, at start).
async function openSession(sessionId, ready = null) {
  const transcript = store.transcript(sessionId);
  const snapshot = api.call("session.attach", { sessionId });
  if (!transcript.loaded && !ui.loading.has(sessionId)) {
    const loading = loadNewest(sessionId, ready).finally(() => ui.loading.delete(sessionId));
    ui.loading.set(sessionId, loading);
  }
  await ui.loading.get(sessionId);
  const attached = await snapshot;
  store.sessions.set(sessionId, attached.session);
  store.listDirty = true;
  transcript.mergeOpenRequests("permission", attached.permissions);
  transcript.mergeOpenRequests("question", attached.questions);
  transcript.queue = attached.queue;
  transcript.interrupted = attached.interrupted || null;
  transcript.dirty.add("queue");
  store.onChange();
}

// Opens a session (null: none); with `turnId`, scrolled to that turn (a search hit).
function select(sessionId, turnId = null) {
  setDrawer(false);
  if (ui.selectedId === sessionId) {
    if (turnId) transcriptView.reveal(turnId);
    return;
  }
  ui.selectedId = sessionId;
  history.replaceState(null, "", location.pathname + (sessionId ? `#session=${encodeURIComponent(sessionId)}` : ""));
  for (const card of ui.cards.values()) card.remove();
  ui.cards.clear();
  $("requests").replaceChildren();
  store.listDirty = true;
  if (!sessionId) {
    transcriptView.reset(null);
    scheduleDraw();
    return;
  }
  const transcript = store.transcript(sessionId);
  transcriptView.reset(transcript);
  if (turnId) transcriptView.reveal(turnId);
  transcript.dirty.add("all").add("queue").add("requests").add("status");
  if (ui.streamOpen) openSession(sessionId).catch(failed);  // else resync() opens it once the stream is up
  scheduleDraw();
  $("prompt").focus();
}

// ---- drawing, once per animation frame ------------------------------------------------------------------

let frameRequested = false;
function scheduleDraw() {
  if (frameRequested) return;
  frameRequested = true;
  requestAnimationFrame(() => {
    frameRequested = false;
    draw();
  });
}
store.onChange = scheduleDraw;

function draw() {
  if (store.listDirty) {
    store.listDirty = false;
    attention.setWaiting([...store.sessions.values()].filter((s) => s.state === "awaiting_input").length);
    drawSessionList($("session-list"), store.sessions, { selectedId: ui.selectedId, filters: listFilters(), matches: sessionMatches,
                                                          more: Boolean(listing.cursor), onMore: () => loadMoreSessions().catch(failed),
                                                          onSelect: select });
  }
  const session = ui.selectedId && store.sessions.get(ui.selectedId);
  $("empty-pane").hidden = Boolean(ui.selectedId);
  $("session-view").hidden = !ui.selectedId;
  if (!ui.selectedId) return;
  if (session) {
    drawHeader(session);
    drawControls(session);
  }
  $("interrupted-bar").hidden = !(session && session.state === "interrupted");
  const transcript = store.transcript(ui.selectedId);
  if (!transcript.loaded) return;
  const firstPaint = transcript.dirty.has("all");
  const olderIn = transcript.dirty.has("older");
  transcriptView.draw();
  if (transcript.dirty.has("queue")) drawQueue(transcript);
  if (transcript.dirty.has("requests")) drawRequests(transcript);
  if (transcript.dirty.has("status")) drawStatus(transcript);
  transcript.dirty.clear();
  // For the first-paint measurement (tests/browser): the frame that shows the transcript (its end, first), and
  // the one that shows it built from all of its events.
  if (firstPaint) performance.mark("transcript-drawn");
  if (olderIn) performance.mark("transcript-complete");
  // For the tests: the session on the page, and whether its transcript holds every stored event yet.
  document.body.dataset.transcriptDrawn = ui.selectedId;
  document.body.dataset.transcriptComplete = transcript.complete ? ui.selectedId : "";
}

function drawHeader(session) {
  $("session-title").textContent = sessionTitle(session);
  $("session-badge").replaceWith(Object.assign(badge(session.state), { id: "session-badge" }));
  $("session-meta").textContent = `${session.agent} · ${session.cwd}${session.model ? " · " + session.model : ""}`;
  $("archive-button").textContent = session.archived ? "Unarchive" : "Archive";
  const agent = ui.agents.find((a) => a.agent === session.agent);
  fillPicker($("model-select"), modelChoices(session.models || agent?.models, session.model), session.model || "");
  fillPicker($("mode-select"), modeChoices(agent?.modes, session.mode), session.mode || "");
  const busy = session.state === "running" || session.state === "awaiting_input";
  $("cancel-button").disabled = !busy;
  $("send-button").textContent = busy ? "Queue" : "Send";
}

// ---- model and mode pickers ------------------------------------------------------------------------------

// What the agent reported: a session's models once it started (else the agent's, from agents.list), and the
// agent's modes. The value in force is listed even when the agent does not report it (a name given at creation).
function modelChoices(models, current) {
  const choices = (models || []).map((m) => ({ value: m.id, text: m.name && m.name !== m.id ? `${m.name} (${m.id})` : m.id }));
  if (current && !choices.some((c) => c.value === current)) choices.unshift({ value: current, text: current });
  if (!current) choices.unshift({ value: "", text: "(the agent's default)" });
  return choices;
}
function modeChoices(modes, current) {
  const choices = (modes || []).map((m) => ({ value: m, text: m }));
  if (current && !choices.some((c) => c.value === current)) choices.unshift({ value: current, text: current });
  if (!current) choices.unshift({ value: "", text: modes?.length ? "(the agent's default)" : "(none reported)" });
  return choices;
}
// Rebuilt only when the choices change, and never under the person's hand (an open or focused menu).
function fillPicker(select, choices, value) {
  const key = JSON.stringify(choices);
  if (select.dataset.choices !== key && document.activeElement !== select) {
    select.dataset.choices = key;
    select.replaceChildren(...choices.map((c) => el("option", { value: c.value, text: c.text })));
  }
  if (document.activeElement !== select) select.value = value;
  select.disabled = choices.length < 2 && choices[0]?.value === "";
}

function drawQueue(transcript) {
  $("queue").replaceChildren(...transcript.queue.map((q) => el("li", { "data-queue-id": q.queueId, text: q.text })));
}

function drawStatus(transcript) {
  const s = transcript.status;
  $("agent-status").hidden = !s;
  if (!s) return;
  let text = s.status;
  if (s.status === "retrying") text = `retrying${s.attempt ? ` (attempt ${s.attempt}${s.maxAttempts ? ` of ${s.maxAttempts}` : ""})` : ""}`;
  $("agent-status").textContent = s.message ? `${text}: ${s.message}` : text;
}

// ---- permission and question cards ----------------------------------------------------------------------

function drawRequests(transcript) {
  for (const [id, entry] of transcript.requests) {
    const open = !entry.resolved && !entry.elsewhere;
    let card = ui.cards.get(id);
    if (!card) {
      if (!open) continue;  // closed before this tab showed it: it belongs to the history, not to the screen
      card = entry.kind === "permission" ? permissionCard(entry) : questionCard(entry);
      ui.cards.set(id, card);
      $("requests").append(card);
      if (entry.kind === "permission") card.querySelector(".allow-once").focus();
    }
    const outcome = resolutionText(entry);
    card.dataset.state = open ? entry.request.state || "open" : "resolved";
    if (outcome !== null) {
      card.querySelector(".outcome").textContent = outcome;
      for (const control of card.querySelectorAll("button, input, textarea")) control.disabled = true;
    }
  }
}

async function answer(entry, method, params) {
  entry.answeredHere = true;
  markRequests();
  try {
    await api.call(method, { requestId: entry.request.requestId, ...params });
  } catch (error) {
    entry.answeredHere = false;
    // Another client was first: that is the request's state now, not a failure of this tab.
    if (error instanceof RpcError && (error.code === ErrorCode.AlreadyAnswered || error.code === ErrorCode.UnknownRequest)) {
      entry.elsewhere = true;
    } else {
      failed(error);
    }
  }
  markRequests();
}

function markRequests() {
  const transcript = ui.selectedId && store.transcript(ui.selectedId);
  if (transcript) transcript.dirty.add("requests");
  scheduleDraw();
}

// The phone layout's breakpoint (console.css).
const phoneQuery = window.matchMedia("(max-width: 760px)");

function permissionCard(entry) {
  const r = entry.request;
  const suggested = r.suggestedRule || { tool: r.tool };
  const ruleTool = el("input", { class: "rule-tool", value: suggested.tool, size: "10", "aria-label": "rule tool" });
  const rulePattern = el("input", { class: "rule-pattern", value: suggested.pattern || "", size: "24",
                                    placeholder: "any input", "aria-label": "rule pattern" });
  const denyMessage = el("input", { class: "deny-message", placeholder: "why (told to the agent)", size: "24",
                                    "aria-label": "deny message" });
  const rule = () => ({ tool: ruleTool.value.trim() || r.tool, ...(rulePattern.value.trim() ? { pattern: rulePattern.value.trim() } : {}) });
  const allow = (decision) => () =>
    answer(entry, "permission.respond", { decision, ...(decision === "allow_once" ? {} : { rule: rule() }) });
  // The answers most requests get come first; the input, the reason, the rules and the message for a denial are
  // its details: open on a wide screen, a tap away on a phone, where the card must leave the transcript readable.
  const details = el("details", { class: "request-details", open: !phoneQuery.matches },
    el("summary", { text: "Input, reason, rules" }),
    el("pre", { class: "request-input", text: JSON.stringify(r.input, null, 2) }),
    r.reason ? el("div", { class: "muted reason", text: r.reason }) : null,
    el("div", { class: "actions" },
      el("button", { type: "button", class: "allow-session", onclick: allow("allow_session"), text: "Allow for session" }),
      el("button", { type: "button", class: "allow-project", onclick: allow("allow_project"), text: "Allow for project" }),
      el("button", { type: "button", class: "allow-always", onclick: allow("allow_always"), text: "Always allow" }),
      el("span", { class: "muted", text: "rule:" }), ruleTool, rulePattern),
    el("div", { class: "actions" }, el("span", { class: "muted", text: "if denied:" }), denyMessage));
  return el("div", { class: "request-card permission", "data-request-id": r.requestId, role: "group",
                     "aria-label": `permission for ${r.tool}` },
    el("div", { class: "request-summary" }, el("strong", { text: `${r.tool}: ` }), el("span", { class: "description", text: r.description })),
    el("div", { class: "actions" },
      el("button", { type: "button", class: "primary allow-once", onclick: allow("allow_once"), text: "Allow once" }),
      el("button", { type: "button", class: "danger deny", text: "Deny",
                     onclick: () => answer(entry, "permission.respond", { decision: "deny", ...(denyMessage.value.trim() ? { message: denyMessage.value.trim() } : {}) }) })),
    details,
    el("div", { class: "outcome" }));
}

function questionCard(entry) {
  const r = entry.request;
  const fields = r.questions.map((q, i) => {
    const name = `${r.requestId}-${i}`;
    const options = (q.options || []).map((option) => el("label", { class: "inline" },
      el("input", { type: q.multiSelect ? "checkbox" : "radio", name, value: option }), document.createTextNode(option)));
    const free = el("input", { type: "text", class: "free-answer", placeholder: "answer", "data-index": String(i) });
    return { q, name, free, node: el("fieldset", {}, el("legend", { text: q.header || `question ${i + 1}` }),
                                     el("div", { text: q.question }), ...options, free) };
  });
  const collect = () => fields.map(({ name, free }) => {
    const picked = [...document.querySelectorAll(`input[name="${CSS.escape(name)}"]:checked`)].map((n) => n.value);
    return free.value.trim() || picked.join(", ");
  });
  return el("div", { class: "request-card question", "data-request-id": r.requestId, role: "group" },
    ...fields.map((f) => f.node),
    el("div", { class: "actions" },
      el("button", { type: "button", class: "primary submit-answer", text: "Answer",
                     onclick: () => answer(entry, "question.respond", { answers: collect() }) }),
      el("button", { type: "button", class: "reject", text: "Reject",
                     onclick: () => answer(entry, "question.respond", { reject: true }) })),
    el("div", { class: "outcome" }));
}

// ---- composer and session controls ----------------------------------------------------------------------

async function send() {
  const text = $("prompt").value;
  if (!ui.selectedId || !text.trim()) return;
  const attachments = $("attach-input").value.split(",").map((p) => p.trim()).filter(Boolean).map((path) => ({ path }));
  $("prompt").value = "";
  $("attach-input").value = "";
  try {
    await api.call("session.send", { sessionId: ui.selectedId, text, wait: false, ...(attachments.length ? { attachments } : {}) });
  } catch (error) {
    $("prompt").value = text;  // not lost
    $("attach-input").value = attachments.map((a) => a.path).join(", ");
    failed(error);
  }
}

function cancelTurn() {
  if (!ui.selectedId) return;
  api.call("session.cancel", { sessionId: ui.selectedId }).catch(failed);
}

$("composer").addEventListener("submit", (e) => { e.preventDefault(); send(); });
$("prompt").addEventListener("keydown", (e) => {
  if (paletteKey(e)) return;
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
});
document.addEventListener("keydown", (e) => {
  const dialogOpen = ["new-session-dialog", "rewind-dialog", "diff-dialog", "pair-dialog"].some((id) => $(id).open);
  if (e.key === "Escape" && ui.selectedId && !dialogOpen && !e.defaultPrevented) {
    const session = store.sessions.get(ui.selectedId);
    if (session && (session.state === "running" || session.state === "awaiting_input")) { e.preventDefault(); cancelTurn(); }
  }
});
$("cancel-button").addEventListener("click", cancelTurn);
$("resume-button").addEventListener("click", () =>
  api.call("session.resume", { sessionId: ui.selectedId, wait: false }).catch(failed));
$("model-select").addEventListener("change", () => {
  const model = $("model-select").value;
  if (model) api.call("session.setModel", { sessionId: ui.selectedId, model }).catch(failed);
});
$("mode-select").addEventListener("change", () => {
  const mode = $("mode-select").value;
  if (mode) api.call("session.setMode", { sessionId: ui.selectedId, mode }).catch(failed);
});
$("rename-button").addEventListener("click", () => {
  const session = store.sessions.get(ui.selectedId);
  const input = el("input", { type: "text", id: "rename-input", value: session ? session.title || "" : "", size: "30" });
  const title = $("session-title");
  title.replaceChildren(input);
  input.focus();
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      api.call("session.rename", { sessionId: ui.selectedId, title: input.value }).catch(failed);
      input.blur();
    } else if (e.key === "Escape") { e.stopPropagation(); input.blur(); }
  });
  input.addEventListener("blur", () => { store.listDirty = true; scheduleDraw(); });
});
$("archive-button").addEventListener("click", () => {
  const session = store.sessions.get(ui.selectedId);
  if (session) api.call("session.archive", { sessionId: ui.selectedId, archived: !session.archived }).catch(failed);
});
$("delete-button").addEventListener("click", (e) => {
  const button = e.currentTarget;
  if (button.dataset.confirm !== "yes") {
    button.dataset.confirm = "yes";
    button.textContent = "Really delete?";
    setTimeout(() => { button.dataset.confirm = ""; button.textContent = "Delete"; }, 4000);
    return;
  }
  const id = ui.selectedId;
  api.call("session.delete", { sessionId: id }).then(() => { if (ui.selectedId === id) select(null); }).catch(failed);
});
let filterTimer = null;
$("session-filter").addEventListener("input", () => {
  clearTimeout(filterTimer);
  filterTimer = setTimeout(() => loadSessions().catch(failed), 200);
});
$("show-archived").addEventListener("change", () => loadSessions().catch(failed));
$("agent-filter").addEventListener("change", () => loadSessions().catch(failed));

// ---- what the agent reports and offers beside the transcript (plan, context, commands, options, MCP) ------------
// Each control follows the agent's capabilities from agents.list: what the agent cannot do is hidden or shown
// disabled, never guessed from an error. Each part of the DOM is rebuilt only when its data changed.

function capabilitiesOf(session) {
  const agent = session && ui.agents.find((a) => a.agent === session.agent);
  return agent ? agent.capabilities : null;
}

const drawnKeys = new Map();  // part -> the key of what it shows now
function changed(part, ...data) {
  const key = JSON.stringify(data);
  if (drawnKeys.get(part) === key) return false;
  drawnKeys.set(part, key);
  return true;
}

function drawControls(session) {
  const caps = capabilitiesOf(session) || {};
  const busy = session.state === "running" || session.state === "awaiting_input";
  if (changed("origin", session.sessionId, session.forkedFrom, session.forkedFrom && store.sessions.get(session.forkedFrom.sessionId)?.title)) {
    drawForkOrigin(session);
  }
  if (changed("worktree", session.sessionId, session.worktree)) drawWorktree(session);
  if (changed("plan", session.sessionId, caps.plans, session.plan)) drawPlan(caps.plans ? session.plan : null);
  if (changed("usage", session.sessionId, caps.contextUsage, session.usage)) drawContextMeter(caps.contextUsage ? session.usage : null);
  if (changed("mcp", session.sessionId, session.mcpServers)) drawMcpServers(session.mcpServers || []);
  if (changed("options", session.sessionId, caps.options, session.options)) drawOptions(session, caps.options);
  const compact = $("compact-button");
  compact.disabled = !caps.compact || busy;
  compact.title = !caps.compact ? "This agent cannot compact its conversation on request"
    : busy ? "Wait for the turn to end" : "Ask the agent to summarize its conversation now";
  if (!caps.commands) closePalette();
}

function drawForkOrigin(session) {
  const link = $("fork-origin");
  const origin = session.forkedFrom;
  link.hidden = !origin;
  if (!origin) return;
  const from = store.sessions.get(origin.sessionId);
  link.dataset.sessionId = origin.sessionId;
  link.textContent = `forked from ${from ? sessionTitle(from) : origin.sessionId}${origin.turnId ? " (up to a turn)" : ""}`;
  link.title = origin.turnId ? `turn ${origin.turnId} of ${origin.sessionId}` : origin.sessionId;
}
// A worktree session: its branch, and review (session.diff against base), merge and discard.
function drawWorktree(session) {
  const worktree = session.worktree;
  $("worktree-bar").hidden = !worktree;
  if (!worktree) return;
  $("worktree-branch").textContent = worktree.branch;
  $("worktree-branch").title = `${worktree.path}, from ${worktree.base} of ${worktree.repository}`;
}
async function showWorktreeOutcome(heading, call) {
  $("diff-heading").textContent = heading;
  const body = $("diff-body");
  body.dataset.state = "loading";
  body.replaceChildren(el("p", { class: "muted", text: "asking git…" }));
  $("diff-dialog").showModal();
  try {
    body.replaceChildren(...(await call()));
    body.dataset.state = "loaded";
  } catch (error) {
    if (error instanceof Unauthorized) return unauthorized();
    const files = error.data && Array.isArray(error.data.files) ? error.data.files : [];
    body.replaceChildren(el("p", { class: "error", role: "alert", text: errorText(error) }),
      ...files.map((file) => el("p", { class: "file-path", text: file })));
    body.dataset.state = "failed";
  }
}
$("worktree-review").addEventListener("click", () => {
  const session = store.sessions.get(ui.selectedId);
  if (!session || !session.worktree) return;
  showWorktreeOutcome(`Changes on ${session.worktree.branch} against ${session.worktree.base}`, async () =>
    [fileChangesNode(await api.call("session.diff", { sessionId: session.sessionId, against: "base" }))]);
});
$("worktree-merge").addEventListener("click", () => {
  const session = store.sessions.get(ui.selectedId);
  if (!session || !session.worktree) return;
  showWorktreeOutcome(`Merge ${session.worktree.branch} into ${session.worktree.base}`, async () => {
    const result = await api.call("session.merge", { sessionId: session.sessionId });
    return [el("p", { text: `Merged: ${session.worktree.base} is now at ${result.commit.slice(0, 12)}.` }), fileChangesNode(result)];
  });
});
$("worktree-discard").addEventListener("click", (e) => {
  const button = e.currentTarget;
  if (button.dataset.confirm !== "yes") {
    button.dataset.confirm = "yes";
    button.textContent = "Really discard?";
    setTimeout(() => { button.dataset.confirm = ""; button.textContent = "Discard worktree"; }, 4000);
    return;
  }
  api.call("session.removeWorktree", { sessionId: ui.selectedId, force: true })
    .then(({ session }) => store.setSessions([session])).catch(failed);
});
$("fork-origin").addEventListener("click", (e) => {
  e.preventDefault();
  const id = e.currentTarget.dataset.sessionId;
  if (id) select(id);
});

const kPlanMark = { completed: "done", in_progress: "doing", pending: "to do" };
function drawPlan(entries) {
  $("plan").hidden = !entries || entries.length === 0;
  $("plan-entries").replaceChildren(...(entries || []).map((entry) => {
    const box = el("input", { type: "checkbox", disabled: true, "aria-label": kPlanMark[entry.status] || entry.status });
    box.checked = entry.status === "completed";
    box.indeterminate = entry.status === "in_progress";
    return el("li", { "data-status": entry.status, "data-priority": entry.priority },
      box, el("span", { class: "plan-text", text: entry.content }),
      entry.priority ? el("span", { class: "plan-priority", text: entry.priority }) : null);
  }));
}

function tokens(n) {
  return n >= 1000 ? `${(n / 1000).toFixed(n >= 100000 ? 0 : 1)}k` : String(n);
}

function drawContextMeter(usage) {
  $("context-meter").hidden = !usage;
  if (!usage) return;
  const bar = $("context-bar");
  bar.hidden = !usage.windowTokens;
  if (usage.windowTokens) {
    bar.max = usage.windowTokens;
    bar.value = Math.min(usage.usedTokens, usage.windowTokens);
    bar.high = usage.windowTokens * 0.8;
    bar.optimum = 0;
  }
  const parts = [usage.windowTokens
    ? `${tokens(usage.usedTokens)} / ${tokens(usage.windowTokens)} tokens (${Math.round(100 * usage.usedTokens / usage.windowTokens)}%)`
    : `${tokens(usage.usedTokens)} tokens`];
  if (usage.costUsd !== undefined) parts.push(`$${usage.costUsd.toFixed(4)}`);
  $("context-text").textContent = parts.join(" · ");
}

function drawMcpServers(servers) {
  const node = $("mcp-status");
  node.hidden = servers.length === 0;
  node.replaceChildren(el("span", { class: "muted", text: "MCP" }), ...servers.map((server) => {
    let text = `${server.name}: ${server.status}`;
    if (server.status === "connected" && server.tools !== undefined) text += ` (${server.tools} tool${server.tools === 1 ? "" : "s"})`;
    if (server.status === "failed" && server.error) text += ` — ${server.error}`;
    return el("span", { class: "mcp-server", "data-name": server.name, "data-status": server.status,
                        title: `${server.transport} server${server.error ? ": " + server.error : ""}`, text });
  }));
}

// One control per option the agent reported (a select for a choice, a checkbox for a boolean), beside model and
// mode. An agent without options gets a disabled effort menu that says so.
function drawOptions(session, supported) {
  const menu = $("options-menu");
  if (!supported) {
    menu.replaceChildren(el("label", { class: "inline", title: "This agent has no options beyond model and mode" },
      document.createTextNode("effort "), el("select", { id: "option-effort", disabled: true }, el("option", { text: "n/a" }))));
    return;
  }
  const options = session.options || [];
  if (options.length === 0) {
    menu.replaceChildren(el("span", { class: "muted", text: "options: once the agent has started" }));
    return;
  }
  menu.replaceChildren(...options.map((option) => {
    const set = (value) => api.call("session.setOption", { sessionId: session.sessionId, optionId: option.id, value })
      .then(({ session: updated }) => store.setSessions([updated]))
      .catch((error) => { drawnKeys.delete("options"); scheduleDraw(); failed(error); });
    if (option.kind === "boolean") {
      const box = el("input", { type: "checkbox", id: `option-${option.id}`, "data-option-id": option.id,
                                onchange: (e) => set(e.target.checked ? "true" : "false") });
      box.checked = option.currentValue === "true";
      return el("label", { class: "inline", title: option.description }, box, document.createTextNode(option.name || option.id));
    }
    const select = el("select", { id: `option-${option.id}`, "data-option-id": option.id, onchange: (e) => set(e.target.value) },
      ...option.values.map((v) => el("option", { value: v.value, text: v.name || v.value, title: v.description })));
    select.value = option.currentValue;
    return el("label", { class: "inline", title: option.description },
      document.createTextNode(`${(option.name || option.id).toLowerCase() === "reasoning effort" ? "effort" : option.name || option.id} `), select);
  }));
}

// ---- slash commands: `/` at the start of the prompt opens the agent's commands -----------------------------------

const palette = { open: false, matches: [], index: 0 };

function closePalette() {
  palette.open = false;
  $("command-palette").hidden = true;
}

// The commands whose name starts with (then contains) what follows the `/`, while the caret is still in the
// command's name.
function updatePalette() {
  const session = ui.selectedId && store.sessions.get(ui.selectedId);
  const caps = capabilitiesOf(session);
  const prompt = $("prompt");
  const text = prompt.value;
  const name = /^\/(\S*)$/.exec(text.slice(0, prompt.selectionStart));
  if (!caps || !caps.commands || !name || /\s/.test(text.slice(0, prompt.selectionEnd))) return closePalette();
  const typed = name[1].toLowerCase();
  const commands = session.commands || [];
  const starts = commands.filter((c) => c.name.toLowerCase().startsWith(typed));
  const contains = commands.filter((c) => !c.name.toLowerCase().startsWith(typed) && c.name.toLowerCase().includes(typed));
  palette.matches = [...starts, ...contains];
  palette.index = Math.min(palette.index, Math.max(palette.matches.length - 1, 0));
  palette.open = true;
  const list = $("command-palette");
  list.hidden = false;
  if (commands.length === 0) {
    list.replaceChildren(el("li", { class: "muted", text: "The agent has not listed its commands yet (it does once it has started)." }));
    return;
  }
  if (palette.matches.length === 0) {
    list.replaceChildren(el("li", { class: "muted", text: `No command starts with /${name[1]}` }));
    return;
  }
  list.replaceChildren(...palette.matches.map((command, i) => el("li", {
    role: "option", "data-command": command.name, "aria-selected": i === palette.index ? "true" : "false",
    onmousedown: (e) => { e.preventDefault(); insertCommand(command); },
  }, el("span", { class: "command-name", text: `/${command.name}` }),
     command.argumentHint ? el("span", { class: "command-hint", text: ` ${command.argumentHint}` }) : null,
     command.description ? el("span", { class: "command-description", text: command.description }) : null)));
}

function insertCommand(command) {
  const prompt = $("prompt");
  const rest = prompt.value.slice(prompt.selectionEnd).replace(/^\S*/, "");
  prompt.value = `/${command.name} ${rest.trimStart()}`;
  const caret = command.name.length + 2;
  prompt.setSelectionRange(caret, caret);
  prompt.focus();
  closePalette();
}

// The palette's keys, while it is open: arrows move, Enter or Tab insert, Escape closes it (and only it).
function paletteKey(e) {
  if (!palette.open) return false;
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    if (palette.matches.length) {
      const step = e.key === "ArrowDown" ? 1 : -1;
      palette.index = (palette.index + step + palette.matches.length) % palette.matches.length;
      updatePalette();
    }
  } else if ((e.key === "Enter" || e.key === "Tab") && !e.shiftKey && palette.matches.length) {
    insertCommand(palette.matches[palette.index]);
  } else if (e.key === "Escape") {
    closePalette();
  } else {
    return false;
  }
  e.preventDefault();
  return true;
}

$("prompt").addEventListener("input", () => { palette.index = 0; updatePalette(); });
$("prompt").addEventListener("click", updatePalette);
$("prompt").addEventListener("blur", () => setTimeout(closePalette, 100));

// ---- fork, rewind, changes, compact ------------------------------------------------------------------------------

transcriptView.actions = {
  capabilities: () => capabilitiesOf(ui.selectedId && store.sessions.get(ui.selectedId)),
  fork: (turn) => forkAt(turn),
  rewind: (turn) => openRewind(turn),
  diff: (turn) => showTurnDiff(turn),
};

async function forkAt(turn) {
  const origin = ui.selectedId;
  try {
    const { session } = await api.call("session.fork", { sessionId: origin, turnId: turn.turnId });
    store.setSessions([session]);
    select(session.sessionId);
  } catch (error) {
    failed(error);
  }
}

// The turns a rewind to before `turn` undoes: it and every later one not rewound already.
function turnsFrom(turn) {
  const transcript = store.transcript(ui.selectedId);
  const at = transcript.turns.indexOf(turn);
  return transcript.turns.slice(at).filter((t) => !t.rewound);
}

const rewind = { turn: null, sessionId: null, generation: 0 };

async function openRewind(turn) {
  const session = store.sessions.get(ui.selectedId);
  const caps = capabilitiesOf(session) || {};
  rewind.turn = turn;
  rewind.sessionId = ui.selectedId;
  const generation = ++rewind.generation;
  const turns = turnsFrom(turn);
  $("rewind-conversation").disabled = !caps.rewind;
  $("rewind-both").disabled = !caps.rewind;
  $("rewind-no-conversation").hidden = Boolean(caps.rewind);
  (caps.rewind ? $("rewind-both") : $("rewind-files")).checked = true;
  $("rewind-error").hidden = true;
  $("rewind-confirm").disabled = false;
  $("rewind-turns").replaceChildren(...turns.map((t) => el("li", { "data-turn-id": t.turnId, text: t.text })));
  showRewindPreview();
  const preview = $("rewind-diff");
  preview.replaceChildren(el("p", { class: "muted", text: "reading the checkpoints…" }));
  $("rewind-dialog").showModal();
  // What the files go back from: each undone turn's own changes (session.diff per turn), newest last.
  const parts = [];
  for (const t of turns) {
    try {
      const result = await api.call("session.diff", { sessionId: rewind.sessionId, turnId: t.turnId });
      parts.push(el("div", { class: "rewind-turn-diff", "data-turn-id": t.turnId },
        el("h4", { text: t.text }), fileChangesNode(result)));
    } catch (error) {
      if (error instanceof Unauthorized) return unauthorized();
      parts.push(el("div", { class: "rewind-turn-diff", "data-turn-id": t.turnId },
        el("h4", { text: t.text }), el("p", { class: "error", text: errorText(error) })));
    }
    if (generation !== rewind.generation) return;
  }
  preview.replaceChildren(...parts);
}

function rewindChoice() {
  const value = document.querySelector("input[name='rewind-what']:checked")?.value || "both";
  return { conversation: value !== "files", files: value !== "conversation" };
}

function showRewindPreview() {
  $("rewind-files-preview").hidden = !rewindChoice().files;
}
for (const id of ["rewind-both", "rewind-conversation", "rewind-files"]) $(id).addEventListener("change", showRewindPreview);

$("rewind-cancel").addEventListener("click", () => { rewind.generation++; $("rewind-dialog").close(); });
$("rewind-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const { conversation, files } = rewindChoice();
  $("rewind-confirm").disabled = true;
  try {
    await api.call("session.rewind", { sessionId: rewind.sessionId, turnId: rewind.turn.turnId, conversation, files });
    rewind.generation++;
    $("rewind-dialog").close();
  } catch (error) {
    if (error instanceof Unauthorized) return unauthorized();
    // Refused (busy, no checkpoint, unsupported): nothing was changed; the dialog stays open and says why.
    $("rewind-error").hidden = false;
    $("rewind-error").textContent = errorText(error);
    $("rewind-confirm").disabled = false;
  }
});

async function showTurnDiff(turn) {
  $("diff-heading").textContent = `Changes in this turn: ${turn.text.length > 60 ? turn.text.slice(0, 60) + "…" : turn.text}`;
  const body = $("diff-body");
  body.dataset.turnId = turn.turnId;
  body.dataset.state = "loading";
  body.replaceChildren(el("p", { class: "muted", text: "reading the checkpoints…" }));
  $("diff-dialog").showModal();
  try {
    const result = await api.call("session.diff", { sessionId: ui.selectedId, turnId: turn.turnId });
    body.replaceChildren(fileChangesNode(result));
    body.dataset.state = "loaded";
  } catch (error) {
    if (error instanceof Unauthorized) return unauthorized();
    body.replaceChildren(el("p", { class: "error", role: "alert", text: errorText(error) }));
    body.dataset.state = "failed";
  }
}
$("diff-close").addEventListener("click", () => $("diff-dialog").close());

$("compact-button").addEventListener("click", () => {
  if (!ui.selectedId) return;
  api.call("session.compact", { sessionId: ui.selectedId }).catch(failed);
});

// ---- new session ----------------------------------------------------------------------------------------

$("new-session-button").addEventListener("click", async () => {
  const dialog = $("new-session-dialog");
  $("new-session-error").hidden = true;
  try {
    ui.agents = (await api.call("agents.list")).agents;
  } catch (error) { return failed(error); }
  $("new-agent").replaceChildren(...ui.agents.map((a) => el("option", {
    value: a.agent, disabled: !a.installed || Boolean(a.problem),
    text: `${a.agent}${a.version ? " " + a.version : ""}${a.installed && !a.problem ? "" : ` (${a.problem || "not installed"})`}`,
  })));
  const usable = ui.agents.find((a) => a.installed && !a.problem);
  if (usable) $("new-agent").value = usable.agent;
  showAgentProblem();
  // The directories of the latest sessions, newest first, offered as the working directory.
  const recent = [...new Set([...store.sessions.values()].sort((a, b) => b.createdAt - a.createdAt).map((s) => s.cwd))].slice(0, 10);
  $("recent-cwds").replaceChildren(...recent.map((cwd) => el("option", { value: cwd })));
  if (!$("new-cwd").value && recent.length) $("new-cwd").value = recent[0];
  dialog.showModal();
});
function showAgentProblem() {
  const agent = ui.agents.find((a) => a.agent === $("new-agent").value);
  const problem = agent && (agent.problem || (!agent.installed ? "not installed" : ""));
  $("new-agent-problem").hidden = !problem;
  $("new-agent-problem").textContent = problem || "";
  fillPicker($("new-model"), modelChoices(agent?.models, ""), "");
  fillPicker($("new-mode"), modeChoices(agent?.modes, ""), "");
}
$("new-agent").addEventListener("change", showAgentProblem);
// The agent's own history for the directory (history.list), each importable as a session of ours.
$("history-button").addEventListener("click", async () => {
  const agent = $("new-agent").value;
  const cwd = $("new-cwd").value.trim();
  const list = $("history-list");
  list.replaceChildren(el("li", { class: "muted", text: "reading…" }));
  try {
    const { sessions } = await api.call("history.list", { agent, cwd });
    list.replaceChildren(...(sessions.length ? sessions.map((h) => el("li", { "data-provider-session-id": h.providerSessionId },
      el("span", { text: h.title || h.providerSessionId }),
      el("small", { class: "muted", text: new Date(h.updatedAt).toLocaleString() }),
      el("button", { type: "button", text: "Import", onclick: async () => {
        try {
          const { session } = await api.call("session.import", { agent, cwd, providerSessionId: h.providerSessionId });
          store.setSessions([session]);
          $("new-session-dialog").close();
          select(session.sessionId);
        } catch (error) { list.prepend(el("li", { class: "error", text: error.message })); }
      } }))) : [el("li", { class: "muted", text: "none" })]));
  } catch (error) {
    list.replaceChildren(el("li", { class: "error", text: error.message }));
  }
});
$("new-session-cancel").addEventListener("click", () => $("new-session-dialog").close());
$("new-session-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const params = { agent: $("new-agent").value, cwd: $("new-cwd").value.trim() };
  for (const [key, id] of [["model", "new-model"], ["mode", "new-mode"], ["title", "new-title"]]) {
    if ($(id).value.trim()) params[key] = $(id).value.trim();
  }
  if ($("new-worktree").checked) params.worktree = $("new-branch").value.trim() ? { branch: $("new-branch").value.trim() } : {};
  try {
    const { session } = await api.call("session.create", params);
    store.setSessions([session]);
    $("new-session-dialog").close();
    $("new-title").value = "";
    select(session.sessionId);
  } catch (error) {
    if (error instanceof Unauthorized) return unauthorized();
    $("new-session-error").hidden = false;
    $("new-session-error").textContent = error.message;
  }
});

// ---- phone layout: the session list as a drawer ---------------------------------------------------------

function setDrawer(open) {
  document.body.classList.toggle("drawer-open", open);
  $("drawer-button").setAttribute("aria-expanded", String(open));
  $("drawer-scrim").hidden = !open;
  // The first control of the drawer (the rows of the list are redrawn as sessions change, and would drop it).
  if (open) $("new-session-button").focus();
}
$("drawer-button").addEventListener("click", () => setDrawer(!document.body.classList.contains("drawer-open")));
$("drawer-scrim").addEventListener("click", () => setDrawer(false));
$("sidebar").addEventListener("keydown", (e) => {
  if (e.key === "Escape" && document.body.classList.contains("drawer-open")) { e.stopPropagation(); setDrawer(false); $("drawer-button").focus(); }
});

// ---- notifications --------------------------------------------------------------------------------------

function drawNotifyButton() {
  const button = $("notify-button");
  button.hidden = !Attention.supported();
  button.textContent = Attention.enabled() ? "Notifying" : "Notify me";
  button.disabled = Attention.enabled() || (Attention.supported() && Notification.permission === "denied");
}
$("notify-button").addEventListener("click", async () => {
  await attention.enable();
  drawNotifyButton();
});
drawNotifyButton();

// ---- pairing a device, rotating the token -----------------------------------------------------------------

// The address the other device opens: this page's own origin to begin with (through a tunnel, the tunnel's
// name), or one made from a host name the daemon allows (daemon.httpInfo), and editable: the page cannot know
// the scheme and port a tunnel serves.
const pairUrl = () => `${($("pair-address").value.trim() || location.origin).replace(/\/+$/, "")}/#token=${token()}`;
function drawPairing() {
  $("pair-url").value = pairUrl();
  drawQrCode($("pair-qr"), $("pair-url").value);
}
// The QR code, made in the page (Debian's qrcode-generator: no network), drawn module by module on a canvas with
// the quiet zone the standard asks for.
function drawQrCode(canvas, text) {
  const code = globalThis.qrcode(0, "M");
  code.addData(text);
  code.make();
  const modules = code.getModuleCount();
  const quiet = 4;
  const scale = Math.max(2, Math.floor(canvas.width / (modules + 2 * quiet)));
  const context = canvas.getContext("2d");
  context.fillStyle = "#fff";
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.fillStyle = "#000";
  const offset = Math.floor((canvas.width - modules * scale) / 2);
  for (let row = 0; row < modules; ++row) {
    for (let column = 0; column < modules; ++column) {
      if (code.isDark(row, column)) context.fillRect(offset + column * scale, offset + row * scale, scale, scale);
    }
  }
}
// The addresses the host menu offers: this page's origin; each allowed name as https://NAME (Tailscale serve and
// a TLS proxy serve it on 443), or as this page's origin when the page came through it; the loopback names with
// the daemon's port (SSH forwarding of that port).
export function pairingAddresses(origin, info) {
  const page = new URL(origin);
  const addresses = [{ address: origin, label: `this page (${page.host})` }];
  for (const name of info.allowedHosts) {
    addresses.push({ address: page.hostname === name ? origin : `https://${name}`, label: `${name} (--allow-host)` });
  }
  for (const name of ["localhost", "127.0.0.1"]) {
    addresses.push({ address: `http://${name}:${info.port}`, label: `${name}:${info.port} (loopback, SSH forwarding)` });
  }
  const seen = new Set();
  return addresses.filter((a) => !seen.has(a.address) && seen.add(a.address));
}
async function drawPairHosts() {
  const info = await api.call("daemon.httpInfo");
  const current = $("pair-address").value;
  const options = pairingAddresses(location.origin, info).map(({ address, label }) =>
    el("option", { value: address, text: `${label}: ${address}` }));
  $("pair-host").replaceChildren(...options);
  $("pair-host").value = options.some((o) => o.value === current) ? current : "";
}
$("pair-button").addEventListener("click", () => {
  if (!$("pair-address").value) $("pair-address").value = location.origin;
  drawPairing();
  $("pair-status").textContent = "";
  $("pair-dialog").showModal();
  drawPairHosts().catch((error) => { $("pair-status").textContent = errorText(error); });
});
$("pair-host").addEventListener("change", () => {
  if ($("pair-host").value) $("pair-address").value = $("pair-host").value;
  drawPairing();
});
$("pair-address").addEventListener("input", () => {
  const address = $("pair-address").value.trim().replace(/\/+$/, "");
  $("pair-host").value = [...$("pair-host").options].some((o) => o.value === address) ? address : "";
  drawPairing();
});
$("pair-copy").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText($("pair-url").value);
    $("pair-status").textContent = "Copied.";
  } catch {
    $("pair-url").select();  // no clipboard (an http:// origin other than localhost): the person copies it
    $("pair-status").textContent = "Selected: copy it with your keyboard or menu.";
  }
});
$("rotate-token-button").addEventListener("click", async () => {
  try {
    const { token: fresh } = await api.call("daemon.rotateToken");
    sessionStorage.setItem(kTokenKey, fresh);
    drawPairing();
    $("pair-status").textContent = "A new token is in force: every other tab and device has lost access.";
    // The daemon closed every event stream, this tab's too: reopen it with the new token, from where it was.
    stream.restart();
  } catch (error) {
    $("pair-status").textContent = errorText(error);
    failed(error);
  }
});
$("pair-close").addEventListener("click", () => $("pair-dialog").close());

// ---- start ----------------------------------------------------------------------------------------------

window.addEventListener("hashchange", () => {
  const { tokenChanged, session } = takeFragment();
  if (tokenChanged) { setConnection("connecting", "connecting…"); stream.restart(); }
  if (session) select(session);
});
document.addEventListener("visibilitychange", () => {
  // Back from a sleep: do not wait for the silence timer to notice a dead connection.
  if (document.visibilityState === "visible" && !ui.streamOpen && token()) stream.restart();
});

fetch("/.well-known/switchboard").then((r) => r.json()).then((id) => {
  $("daemon").textContent = `${id.name} ${id.version} · pid ${id.pid}`;
}).catch(() => {});

// Search over every session, and the export buttons (search.js).
installSearch({ api, open: select, openSessionId: () => ui.selectedId, knownSession: (id) => store.sessions.get(id), failed });

const start = takeFragment();
if (!token()) {
  setConnection("unauthorized", "no token");
  notice("Open the URL that `switchboard serve` printed: it ends in #token=….");
} else {
  stream.start();
}
if (start.session) select(start.session);
scheduleDraw();
