// JSON-RPC over POST /rpc. The token rides in the Authorization header of every call; the page never puts it
// in a URL (the fragment it came in is cleared at start) and never in a cookie.

export class RpcError extends Error {
  constructor(error) {
    super(error.message);
    this.code = error.code;
    this.data = error.data;
  }
}

// The daemon refused the token (HTTP 401): it makes a new one every run, so after a restart the page needs the
// URL the daemon printed.
export class Unauthorized extends Error {}

export const ErrorCode = Object.freeze({
  AlreadyAnswered: -32002,
  UnknownRequest: -32011,
  UnknownSession: -32010,
  Unsupported: -32015,
  SessionBusy: -32022,
  UnknownTurn: -32023,
  CheckpointUnavailable: -32024,
});

// What a refusal means to the person who clicked, for the errors the session controls can meet; the daemon's own
// message follows it (it names the detail: which checkpoint, which turn).
const kErrorMeaning = {
  [-32015]: "Unsupported: this agent cannot do that",
  [-32022]: "Session busy: a turn is running or queued; wait for it to end or cancel it first",
  [-32023]: "Unknown turn: that turn is gone (rewound already?)",
  [-32024]: "No checkpoint: the daemon has no file checkpoint for that point",
  [-32013]: "Agent unavailable",
  [-32602]: "Invalid value",
};

export function errorText(error) {
  if (!(error instanceof RpcError)) return String(error && error.message || error);
  const meaning = kErrorMeaning[error.code];
  return meaning ? `${meaning}. ${error.message} (${error.code})` : `${error.message} (${error.code})`;
}

export class Api {
  constructor(tokenSource) {
    this.tokenSource = tokenSource;
    this.nextId = 1;
  }

  async call(method, params = {}) {
    const id = this.nextId++;
    const response = await fetch("/rpc", {
      method: "POST",
      headers: { "Authorization": "Bearer " + this.tokenSource(), "Content-Type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id, method, params }),
      cache: "no-store",
      credentials: "omit",
    });
    if (response.status === 401) throw new Unauthorized("the daemon refused the token");
    if (!response.ok) throw new Error(`${method}: HTTP ${response.status}`);
    const answer = await response.json();
    if (answer.error) throw new RpcError(answer.error);
    return answer.result;
  }

  // The newest `limit` stored events of a session below `beforeSeq`, oldest first, and the cursor of the ones
  // before them (absent once the page reaches the session's start).
  async sessionEventsBefore(sessionId, beforeSeq, limit = 1000) {
    const page = await this.call("session.events", { sessionId, beforeSeq, limit });
    return { events: page.events, olderBefore: page.nextBeforeSeq ?? null };
  }

  // Every page of a session's stored events, oldest first.
  async allSessionEvents(sessionId, afterSeq = 0) {
    const events = [];
    let after = afterSeq;
    for (;;) {
      const page = await this.call("session.events", { sessionId, afterSeq: after, limit: 1000 });
      events.push(...page.events);
      if (page.nextAfterSeq === undefined) return events;
      after = page.nextAfterSeq;
    }
  }
}
