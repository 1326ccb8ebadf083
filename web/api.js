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
});

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
