// What the page knows, rebuilt from events alone: the sessions, and for each session it has opened, the
// transcript. Applying an event only changes data and marks what changed; view.js draws the marked parts once
// per animation frame, so a thousand deltas a second cost one DOM update per frame.

export class Transcript {
  constructor(sessionId) {
    this.sessionId = sessionId;
    this.lastSeq = 0;       // the newest event applied; older and equal seqs are dropped (no doubles)
    this.loaded = false;    // the stored events are in; until then live ones wait in `pending`
    this.pending = [];
    this.turns = [];
    this.turnById = new Map();
    this.items = new Map(); // messageId / toolCallId -> item
    this.requests = new Map(); // requestId -> { kind, request, state, resolved }
    this.queue = [];        // QueuedPrompt, oldest first
    this.status = null;     // the latest agent.status, until the turn ends
    this.interrupted = null;
    this.dirty = new Set(); // items, turns and the strings "requests", "queue", "status"
    // The page reads a session from its end: `olderBefore` is the cursor (session.events nextBeforeSeq) of the
    // events before the ones applied, null once the start is in; until then `events` keeps what was applied, for
    // the rebuild that puts the earlier events in front of them (after it, nothing is kept: no growth).
    this.events = [];
    this.olderBefore = null;
  }

  // Whether every stored event of the session is in (the transcript is then what the whole log says).
  get complete() { return this.loaded && this.olderBefore === null; }

  // Events older than every one applied so far (a page read backward, oldest first): the transcript is built
  // again from the start, so a turn, message or tool call that began before the newest page gets its start
  // (its prompt, its first words, its tool name). What the page knows from session.attach rather than from
  // events (the open requests, the queue, the interrupted prompt) and the latest status stay as they are.
  prependOlder(older, olderBefore) {
    const events = older.concat(this.events);
    const keep = { queue: this.queue, status: this.status, interrupted: this.interrupted };
    this.turns = [];
    this.turnById = new Map();
    this.items = new Map();
    this.events = [];
    this.lastSeq = 0;
    for (const event of events) this.apply(event);  // requests: applying again only adds what was missing
    Object.assign(this, keep);
    this.olderBefore = olderBefore;
    if (olderBefore === null) this.events = [];
    this.dirty.add("all").add("older");
  }

  turn(turnId, seed = {}) {
    let turn = this.turnById.get(turnId);
    if (!turn) {
      turn = { kind: "turn", turnId, text: seed.text ?? "", attachments: seed.attachments ?? [], children: [],
               end: null, errors: [], rewound: null };
      this.turnById.set(turnId, turn);
      this.turns.push(turn);
    }
    return turn;
  }

  // Where a message or tool call goes: under the tool call that runs its sub-agent, else in its turn.
  parentOf(turnId, parentToolCallId) {
    const parent = parentToolCallId && this.items.get(parentToolCallId);
    return parent || this.turn(turnId);
  }

  apply(event) {
    if (event.seq <= this.lastSeq) return false;
    this.lastSeq = event.seq;
    if (this.olderBefore !== null) this.events.push(event);
    const d = event.data;
    switch (event.type) {
      case "turn.queued":
        if (!this.queue.some((q) => q.queueId === d.prompt.queueId)) this.queue.push(d.prompt);
        this.dirty.add("queue");
        break;
      case "turn.started": {
        const turn = this.turn(d.turnId, d);
        turn.text = d.text;
        this.queue = this.queue.filter((q) => q.queueId !== d.queueId);
        if (this.interrupted && this.interrupted.queueId === d.queueId) this.interrupted = null;
        this.dirty.add("queue").add(turn);
        break;
      }
      case "message.delta":
      case "message.completed": {
        if (d.role === "user") break;  // the prompt is the turn's own text
        let item = this.items.get(d.messageId);
        if (!item) {
          item = { kind: "message", id: d.messageId, messageKind: d.kind, text: "", done: false };
          this.items.set(d.messageId, item);
          const parent = this.parentOf(d.turnId, d.parentToolCallId);
          parent.children.push(item);
          this.dirty.add(parent);
        }
        if (event.type === "message.delta") item.text += d.text;
        else { item.text = d.text; item.done = true; }
        this.dirty.add(item);
        break;
      }
      case "tool.started": {
        let item = this.items.get(d.toolCallId);
        if (!item) {
          item = { kind: "tool", id: d.toolCallId, tool: d.tool, input: d.input, diffs: d.diffs ?? [], output: "",
                   state: "running", children: [] };
          this.items.set(d.toolCallId, item);
          const parent = this.parentOf(d.turnId, d.parentToolCallId);
          parent.children.push(item);
          this.dirty.add(parent);
        }
        this.dirty.add(item);
        break;
      }
      case "tool.output": {
        const item = this.items.get(d.toolCallId);
        if (item) { item.output += d.text; this.dirty.add(item); }
        break;
      }
      case "tool.completed": {
        const item = this.items.get(d.toolCallId);
        if (item) {
          item.output = d.output;
          item.state = d.isError ? "error" : "done";
          this.dirty.add(item);
        }
        break;
      }
      case "turn.stopped": {
        const turn = this.turn(d.turnId);
        turn.end = d;
        this.status = null;
        this.dirty.add(turn).add("status");
        break;
      }
      case "agent.status":
        // "compacted" is news once: it ends the compaction the bar showed, and the next turn clears it.
        this.status = d.status === "working" ? null : d;
        this.dirty.add("status");
        break;
      case "session.rewound": {
        // The rewound turns stay in the transcript, marked: the event log keeps them, and so does the page.
        for (const turnId of d.rewoundTurnIds) {
          const turn = this.turnById.get(turnId);
          if (!turn) continue;
          turn.rewound = { conversation: Boolean(turn.rewound?.conversation || d.conversation),
                           files: Boolean(turn.rewound?.files || d.files) };
          this.dirty.add(turn);
        }
        break;
      }
      case "agent.error": {
        const turn = d.turnId ? this.turn(d.turnId) : this.turns[this.turns.length - 1];
        if (turn) { turn.errors.push(d); this.dirty.add(turn); }
        break;
      }
      case "permission.requested":
      case "question.requested": {
        const r = d.request;
        if (!this.requests.has(r.requestId)) {
          this.requests.set(r.requestId, { kind: event.type.split(".")[0], request: r, resolved: null, answering: null });
        }
        this.dirty.add("requests");
        break;
      }
      case "permission.responding": {
        const entry = this.requests.get(d.requestId);
        if (entry) { entry.request = { ...entry.request, state: "responding" }; this.dirty.add("requests"); }
        break;
      }
      case "permission.resolved":
      case "question.resolved": {
        const entry = this.requests.get(d.requestId);
        if (entry) { entry.resolved = d; this.dirty.add("requests"); }
        break;
      }
      default:
        return false;
    }
    return true;
  }

  // Open requests from session.attach: a tab that loads (or reconnects) shows what waits for an answer, even
  // when the event that asked is older than anything it read.
  mergeOpenRequests(kind, requests) {
    for (const request of requests) {
      if (!this.requests.has(request.requestId)) {
        this.requests.set(request.requestId, { kind, request, resolved: null, answering: null });
      }
    }
    this.dirty.add("requests");
  }
}

export class Store {
  constructor() {
    this.sessions = new Map();       // sessionId -> SessionInfo
    this.transcripts = new Map();    // sessionId -> Transcript (only sessions this tab opened)
    this.listDirty = true;
    this.onChange = () => {};
  }

  setSessions(list) {
    for (const session of list) this.sessions.set(session.sessionId, session);
    this.listDirty = true;
    this.onChange();
  }

  transcript(sessionId) {
    let t = this.transcripts.get(sessionId);
    if (!t) { t = new Transcript(sessionId); this.transcripts.set(sessionId, t); }
    return t;
  }

  // One event from the stream.
  apply(event) {
    const id = event.sessionId;
    const d = event.data;
    switch (event.type) {
      case "session.created":
      case "session.updated":
        this.sessions.set(id, d.session);
        this.listDirty = true;
        break;
      case "session.deleted":
        this.sessions.delete(id);
        this.listDirty = true;
        break;
      case "session.state": {
        const s = this.sessions.get(id);
        if (s) { this.sessions.set(id, { ...s, state: d.state, updatedAt: event.ts }); this.listDirty = true; }
        break;
      }
      // What the agent reports beside the transcript: the session info holds the latest of each (session.get
      // and session.attach answer with it), and each event replaces it.
      case "plan.updated": this.patchSession(id, { plan: d.entries }); break;
      case "usage.updated": this.patchSession(id, { usage: d.usage }); break;
      case "commands.updated": this.patchSession(id, { commands: d.commands }); break;
      case "mcp.status": this.patchSession(id, { mcpServers: d.servers }); break;
      default:
        break;
    }
    const t = id && this.transcripts.get(id);
    if (t) {
      if (t.loaded) t.apply(event);
      else t.pending.push(event);
    }
    this.onChange();
  }

  patchSession(sessionId, fields) {
    const s = this.sessions.get(sessionId);
    if (s) this.sessions.set(sessionId, { ...s, ...fields });
  }

  // The stored events of a session, read after the stream was open: they end where the stream's live events
  // begin or overlap them, and the overlap is dropped by seq. `olderBefore`, for the newest page of a session
  // read from its end, is the cursor of the events before it.
  loadTranscript(sessionId, events, olderBefore) {
    const t = this.transcript(sessionId);
    if (olderBefore !== undefined) t.olderBefore = olderBefore;
    for (const event of events) t.apply(event);
    for (const event of t.pending) t.apply(event);
    t.pending = [];
    t.loaded = true;
    t.dirty.add("all");
    this.onChange();
    return t;
  }
}
