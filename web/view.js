// Drawing the store into the DOM. Nothing here runs per event: console.js calls draw() once per animation
// frame, and draw() touches only what the store marked dirty. Untrusted strings reach the DOM only as text
// (textContent) or through renderMarkdown (sanitized).
import { renderMarkdown } from "./markdown.js";

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children) if (child) node.append(child);
  return node;
}

const kStateLabel = { idle: "idle", running: "running", awaiting_input: "awaiting permission", stopped: "stopped",
                      interrupted: "interrupted" };
export const stateLabel = (state) => kStateLabel[state] || state;

export function badge(state) {
  return el("span", { class: "badge", "data-state": state, text: stateLabel(state) });
}

function sessionTitle(session) {
  return session.title || `${session.agent} in ${session.cwd.split("/").filter(Boolean).pop() || "/"}`;
}
export { sessionTitle };

// The loaded sessions that pass the filters, newest first, and a last row that loads the next page when it
// scrolls into view.
let moreObserver = null;
export function drawSessionList(list, sessions, { selectedId, filters, matches, more, onMore, onSelect }) {
  const rows = [...sessions.values()]
    .filter((s) => matches(s, filters))
    .sort((a, b) => b.createdAt - a.createdAt || (a.sessionId < b.sessionId ? 1 : -1));
  const items = rows.map((s) => el("li", {
    "data-session-id": s.sessionId, "aria-current": s.sessionId === selectedId ? "true" : "false",
    tabindex: "0", onclick: () => onSelect(s.sessionId),
    onkeydown: (e) => { if (e.key === "Enter") onSelect(s.sessionId); },
  }, el("span", { class: "title", text: sessionTitle(s) }),
     el("span", { class: "sub" }, badge(s.state), document.createTextNode(` ${s.agent} · ${s.cwd}`),
        s.archived ? document.createTextNode(" · archived") : null)));
  if (moreObserver) moreObserver.disconnect();
  if (more) {
    const sentinel = el("li", { class: "more muted", text: "more…", onclick: onMore });
    items.push(sentinel);
    moreObserver = new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) onMore(); });
    moreObserver.observe(sentinel);
  }
  list.replaceChildren(...items);
}

// Copies `text`, and says so on `button`. The clipboard API exists only in secure contexts (https, localhost); on
// a plain-http tunnel the text is copied through a selection instead.
export function copyText(text, button) {
  const done = (ok) => {
    button.dataset.state = ok ? "copied" : "failed";
    setTimeout(() => { delete button.dataset.state; }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(() => done(true), () => done(false));
    return;
  }
  const area = el("textarea", { class: "copy-buffer", "aria-hidden": "true", readonly: true });
  area.value = text;
  document.body.append(area);
  area.select();
  let ok = false;
  try { ok = document.execCommand("copy"); } catch { ok = false; }
  area.remove();
  done(ok);
}

// Its label is drawn by the style sheet, so the text of a message (textContent) stays what the agent wrote.
const copyButton = (text) => el("button", { type: "button", class: "copy", "aria-label": "copy",
                                            onclick: (e) => copyText(typeof text === "function" ? text() : text, e.currentTarget) });

// Tool output longer than this many lines is shown collapsed, with "show all".
const kCollapsedLines = 12;

function inputSummary(tool, input) {
  if (!input || typeof input !== "object") return "";
  const line = input.command ?? input.file_path ?? input.path ?? input.pattern ?? input.url ?? input.description;
  return typeof line === "string" ? line : "";
}

// A tool call's file changes (tool.started's `diffs`, the same shape for every agent) as unified-diff lines: per
// change its file, then the lines the old and new text share at the start and at the end as context, the rest
// as removed and added lines.
export function diffLines(diffs) {
  if (!Array.isArray(diffs) || diffs.length === 0) return null;
  const split = (text) => {
    const lines = String(text).split("\n");
    if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
    return lines;
  };
  const lines = [];
  let lastPath = null;
  for (const diff of diffs) {
    const before = typeof diff.oldText === "string" && diff.oldText !== "" ? split(diff.oldText) : [];
    const after = typeof diff.newText === "string" && diff.newText !== "" ? split(diff.newText) : [];
    let head = 0;
    while (head < before.length && head < after.length && before[head] === after[head]) head++;
    let tail = 0;
    while (tail < before.length - head && tail < after.length - head &&
           before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
    if (diff.path !== lastPath) lines.push(["ctx", `--- ${diff.path}`], ["ctx", `+++ ${diff.path}`]);
    lastPath = diff.path;
    for (const line of before.slice(0, head)) lines.push(["ctx", " " + line]);
    for (const line of before.slice(head, before.length - tail)) lines.push(["del", "-" + line]);
    for (const line of after.slice(head, after.length - tail)) lines.push(["add", "+" + line]);
    for (const line of after.slice(after.length - tail)) lines.push(["ctx", " " + line]);
  }
  return lines;
}

function formatUsage(usage) {
  if (!usage) return "";
  const parts = [];
  if (usage.inputTokens !== undefined) parts.push(`${usage.inputTokens} in`);
  if (usage.outputTokens !== undefined) parts.push(`${usage.outputTokens} out`);
  if (usage.cacheReadTokens) parts.push(`${usage.cacheReadTokens} cached`);
  if (usage.costUsd !== undefined) parts.push(`$${usage.costUsd.toFixed(4)}`);
  return parts.join(" · ");
}

// How many items (messages, tool calls) a transcript shows when it opens, counted from its end; "Show earlier"
// multiplies it. A session of 10,000 events opens with the DOM of its last hundred items, not of all of them:
// a few screens, drawn in one frame.
const kInitialItems = 100;

// The transcript pane of one session (reset() on switch).
export class TranscriptView {
  constructor(container) {
    this.container = container;
    this.nodes = new Map(); // item or turn -> { root, body, ... }
    this.transcript = null;
    this.budget = kInitialItems;
    this.drawn = false;       // whether this transcript was drawn since reset (the first draw goes to its end)
    this.revealing = null;    // a turn to scroll to once it is drawn (a search hit), until it is
    this.opened = null;       // while drawAll builds: what the reader had opened, by item (rememberOpened)
  }

  reset(transcript) {
    this.transcript = transcript;
    this.nodes = new Map();
    this.budget = kInitialItems;
    this.drawn = false;
    this.revealing = null;
    this.container.replaceChildren();
  }

  // Scrolls to a turn and marks it for a moment: now if it is drawn, else once the transcript holds it (it may be
  // in a page not read yet, or before the items shown: the budget then grows to reach it).
  reveal(turnId) {
    this.revealing = turnId;
    if (this.transcript) { this.transcript.dirty.add("all"); this.onRedraw(); }
  }

  // The budget that shows `turnId` and everything after it, or null when the transcript has no such turn.
  budgetReaching(t, turnId) {
    let items = 0;
    for (let i = t.turns.length - 1; i >= 0; i--) {
      items += Math.max(t.turns[i].children.length, 1);
      if (t.turns[i].turnId === turnId) return items;
    }
    return null;
  }

  // What the reader opened in the items drawn (a thinking block, a tool's input, a long output shown whole), by
  // the item's kind and id: drawing from scratch (earlier pages read, "Show earlier") builds new nodes, and new
  // items too when the transcript was built again, which would close them all.
  rememberOpened() {
    const opened = new Map();
    for (const [thing, n] of this.nodes) {
      if (thing.kind === "turn") continue;
      const state = { thinking: n.root.tagName === "DETAILS" && n.root.open,
                      input: Boolean(n.inputDetails && n.inputDetails.open), expanded: Boolean(n.expanded) };
      if (state.thinking || state.input || state.expanded) opened.set(`${thing.kind}:${thing.id}`, state);
    }
    return opened;
  }

  // Everything from scratch, the newest `budget` items of it; a button in front of them shows more.
  drawAll(t) {
    this.opened = this.rememberOpened();
    try {
      this.drawAllNodes(t);
    } finally {
      this.opened = null;
    }
  }

  drawAllNodes(t) {
    this.nodes = new Map();
    if (this.revealing) {
      const reaching = this.budgetReaching(t, this.revealing);
      if (reaching !== null) this.budget = Math.max(this.budget, reaching);
      else if (t.complete) this.revealing = null;  // no such turn in the whole session (rewound away): nothing to wait for
    }
    let remaining = this.budget;
    let hidden = 0;
    const shown = [];
    for (let i = t.turns.length - 1; i >= 0; i--) {
      const turn = t.turns[i];
      if (remaining <= 0) { hidden += turn.children.length + 1; continue; }
      const take = Math.min(turn.children.length, remaining);
      remaining -= Math.max(take, 1);
      hidden += turn.children.length - take;
      shown.push([turn, turn.children.length - take]);
    }
    const fragment = document.createDocumentFragment();
    if (t.olderBefore !== null) {
      // The session's earlier events are still being read (from its end: docs/console.md).
      fragment.append(el("p", { class: "loading-earlier muted", role: "status", text: "Reading earlier events…" }));
    }
    if (hidden > 0) {
      fragment.append(el("button", { type: "button", class: "show-earlier", text: `Show earlier (${hidden} more)`,
                                     onclick: () => { this.budget *= 4; t.dirty.add("all"); this.onRedraw(); } }));
    }
    for (let i = shown.length - 1; i >= 0; i--) fragment.append(this.drawTurn(shown[i][0], shown[i][1]));
    this.container.replaceChildren(fragment);
  }

  // Draws what changed; returns whether anything did.
  draw() {
    const t = this.transcript;
    if (!t || !t.loaded || t.dirty.size === 0) return false;
    const fromBottom = this.container.scrollHeight - this.container.scrollTop;
    const atBottom = fromBottom - this.container.clientHeight < 40;
    const redrawn = t.dirty.has("all");
    if (redrawn) {
      this.drawAll(t);
    } else {
      for (const thing of t.dirty) {
        if (typeof thing === "string") continue;
        if (thing.kind === "turn") {
          const fresh = !this.nodes.has(thing);
          const node = this.drawTurn(thing);
          if (fresh) this.container.append(node);
        } else if (this.nodes.has(thing)) {
          this.updateItem(thing);
        }
      }
    }
    if (this.revealing && this.scrollToTurn(this.revealing)) {
      this.revealing = null;
    } else if (atBottom || !this.drawn) {
      this.container.scrollTop = this.container.scrollHeight;
    } else if (redrawn) {
      // Earlier items came in above (Show earlier, older pages): the reader stays where they were.
      this.container.scrollTop = this.container.scrollHeight - fromBottom;
    }
    this.drawn = true;
    return true;
  }

  scrollToTurn(turnId) {
    const turn = [...this.nodes.keys()].find((thing) => thing.kind === "turn" && thing.turnId === turnId);
    if (!turn) return false;
    const node = this.nodes.get(turn).root;
    node.scrollIntoView({ block: "start" });
    node.classList.add("search-target");
    setTimeout(() => node.classList.remove("search-target"), 2000);
    return true;
  }

  // A turn's node, created or brought up to date; a new one shows its children from `from` on.
  drawTurn(turn, from = 0) {
    let n = this.nodes.get(turn);
    if (!n) {
      n = { root: el("div", { class: "turn", "data-turn-id": turn.turnId }), prompt: el("div", { class: "prompt" }),
            marker: el("div", { class: "rewound-marker" }), actions: el("div", { class: "turn-actions" }),
            body: el("div", { class: "turn-body" }), end: el("div", { class: "turn-end" }), drawn: from };
      n.root.append(n.marker, n.prompt, n.body, n.end, n.actions);
      this.nodes.set(turn, n);
    }
    n.prompt.textContent = turn.text;
    n.root.classList.toggle("rewound", Boolean(turn.rewound));
    n.marker.hidden = !turn.rewound;
    n.marker.textContent = turn.rewound ? `rewound: ${rewoundText(turn.rewound)}` : "";
    this.drawTurnActions(turn, n.actions);
    this.appendChildren(turn, n);
    n.end.replaceChildren();
    n.end.className = "turn-end";
    for (const error of turn.errors) {
      n.end.append(el("div", { class: "agent-error", text: `error: ${error.message}` }));
    }
    if (turn.end) {
      const reason = turn.end.stopReason;
      if (reason === "error") n.end.classList.add("error");
      n.end.append(el("span", { class: "stop-reason", "data-stop-reason": reason,
                                text: reason === "end_turn" ? "done" : reason }),
                   el("span", { class: "usage", text: formatUsage(turn.end.usage) ? ` · ${formatUsage(turn.end.usage)}` : "" }));
      if (turn.end.error) n.end.append(el("div", { class: "error", text: turn.end.error }));
    }
    return n.root;
  }

  // Fork, rewind and changes, on a turn that has ended and is not rewound. What the agent cannot do is shown
  // disabled, saying why (its capabilities from agents.list), never guessed at; file checkpoints are the daemon's,
  // so "changes" and a file rewind are there for every agent.
  drawTurnActions(turn, node) {
    const actions = this.actions;
    if (!actions || !turn.end || turn.rewound) { node.replaceChildren(); return; }
    const caps = actions.capabilities() || {};
    node.replaceChildren(
      el("button", { type: "button", class: "fork-turn", text: "Fork from here", disabled: !caps.fork,
                     title: caps.fork ? "A new session continuing the conversation up to this turn" : "This agent cannot fork",
                     onclick: () => actions.fork(turn) }),
      el("button", { type: "button", class: "rewind-turn", text: "Rewind to before this turn…",
                     title: "Undo this turn and every later one: the conversation, the files, or both",
                     onclick: () => actions.rewind(turn) }),
      el("button", { type: "button", class: "diff-turn", text: "Changes in this turn",
                     onclick: () => actions.diff(turn) }));
  }

  appendChildren(parent, n) {
    while (n.drawn < parent.children.length) {
      const item = parent.children[n.drawn++];
      n.body.append(this.createItem(item));
    }
  }

  createItem(item) {
    let n;
    if (item.kind === "message" && item.messageKind === "thinking") {
      n = { root: el("details", { class: "thinking", "data-message-id": item.id }, el("summary", { text: "thinking" })),
            text: el("pre") };
      n.root.append(n.text);
    } else if (item.kind === "message") {
      n = { root: el("div", { class: "assistant", "data-message-id": item.id }) };
    } else {
      n = { root: el("div", { class: "tool", "data-tool-call-id": item.id }), head: el("div", { class: "tool-head" }),
            input: el("pre", { class: "tool-input" }), output: el("pre", { class: "tool-output" }),
            body: el("div", { class: "nested" }), drawn: 0, expanded: false };
      n.outputTools = el("div", { class: "output-tools" },
        copyButton(() => item.output),
        n.more = el("button", { type: "button", class: "show-all", onclick: () => { n.expanded = !n.expanded; this.updateItem(item); } }));
      const details = n.inputDetails = el("details", {}, el("summary", { text: "input" }), n.input);
      const diff = diffLines(item.diffs);
      const diffNode = diff && el("pre", { class: "diff" }, ...diff.map(([kind, line]) => el("span", { class: kind, text: line + "\n" })));
      // append() writes a null as the text "null": only a real diff goes in.
      n.root.append(n.head, ...(diffNode ? [diffNode] : []), details, n.output, n.outputTools, n.body);
    }
    const opened = this.opened && this.opened.get(`${item.kind}:${item.id}`);
    if (opened) {
      if (opened.thinking) n.root.open = true;
      if (opened.input && n.inputDetails) n.inputDetails.open = true;
      if (opened.expanded) n.expanded = true;
    }
    this.nodes.set(item, n);
    this.updateItem(item);
    return n.root;
  }

  updateItem(item) {
    const n = this.nodes.get(item);
    if (item.kind === "message") {
      if (item.messageKind === "thinking") n.text.textContent = item.text;
      else {
        renderMarkdown(n.root, item.text);
        // Each code block gets its own copy button (its text as written, not as drawn).
        for (const pre of n.root.querySelectorAll("pre")) {
          pre.classList.add("code-block");
          pre.prepend(copyButton(pre.textContent));
        }
      }
      return;
    }
    n.root.setAttribute("data-state", item.state);
    n.head.replaceChildren(el("span", { class: "tool-name", text: item.tool }),
                           el("span", { class: "tool-summary", text: inputSummary(item.tool, item.input) }),
                           el("span", { class: "tool-state", text: item.state }));
    n.input.textContent = JSON.stringify(item.input, null, 2);
    n.output.textContent = item.output;
    n.output.hidden = item.output === "";
    n.outputTools.hidden = item.output === "";
    const lines = item.output.split("\n").length;
    const long = lines > kCollapsedLines;
    n.output.classList.toggle("collapsed", long && !n.expanded);
    n.more.hidden = !long;
    n.more.textContent = n.expanded ? "show less" : `show all (${lines} lines)`;
    n.more.setAttribute("aria-expanded", String(n.expanded));
    this.appendChildren(item, n);
  }
}

function rewoundText(rewound) {
  if (rewound.conversation && rewound.files) return "conversation and files";
  return rewound.conversation ? "conversation" : "files";
}

// One file's unified diff (session.diff's FileChange.diff) as lines coloured by their first character.
export function unifiedDiffNode(text) {
  const lines = String(text).split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const kind = (line) => line.startsWith("+++") || line.startsWith("---") ? "ctx"
    : line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "ctx";
  return el("pre", { class: "diff" }, ...lines.map((line) => el("span", { class: kind(line), text: line + "\n" })));
}

// The files of a session.diff answer, each with its status and its diff.
export function fileChangesNode(result) {
  const files = result.files || [];
  const node = el("div", { class: "file-changes" });
  if (files.length === 0) node.append(el("p", { class: "muted no-changes", text: "No file changed." }));
  for (const file of files) {
    node.append(el("div", { class: "file-change", "data-path": file.path, "data-status": file.status },
      el("div", { class: "file-head" }, el("span", { class: "file-status", text: file.status }),
         el("span", { class: "file-path", text: file.path })),
      file.binary ? el("p", { class: "muted", text: "binary file" }) : unifiedDiffNode(file.diff)));
  }
  if (result.skipped && result.skipped.length) {
    node.append(el("p", { class: "muted skipped", text: `Not checkpointed (over the size or count limits): ${result.skipped.join(", ")}` }));
  }
  return node;
}

function decisionText(decision) {
  return { allow_once: "allowed once", allow_session: "allowed for the session", allow_project: "allowed for the project",
           allow_always: "always allowed", deny: "denied" }[decision] || decision;
}

// What a closed request card says. Another client winning the race is a normal outcome, not an error.
export function resolutionText(entry) {
  const r = entry.resolved;
  if (entry.answeredHere && r) return `You ${r.outcome === "answered" ? "answered" : decisionText(r.decision || r.outcome)}`;
  if (entry.answeredHere) return "Sending your answer…";
  if (entry.elsewhere && !r) return "Answered elsewhere";
  if (!r) return null;
  switch (r.resolvedBy) {
    case "client": return `Answered elsewhere (${r.decision ? decisionText(r.decision) : r.outcome})`;
    case "rule": return `${r.outcome === "allowed" ? "Allowed" : "Denied"} by a remembered rule`;
    case "timeout": return "Timed out";
    case "headless": return `${r.outcome} (no client answered)`;
    default: return "Cancelled: the turn ended";
  }
}
