// The daemon's event stream (GET /events, Server-Sent Events) read with fetch, so the token goes in the
// Authorization header like every other request (EventSource cannot send headers; it would need ?token= in the
// URL). It resumes with Last-Event-ID from the last seq it handed on, so a reconnect neither skips nor repeats
// an event; the caller still drops seqs it has (a replay after a daemon restart may overlap what it rendered).

const kRetryMs = [250, 500, 1000, 2000, 3000];
// The daemon sends ": ping" after 15 s of silence; twice that with nothing means the connection is dead (a
// laptop that slept, a network that went away without a FIN).
const kSilenceMs = 35000;

export class EventStream {
  constructor({ tokenSource, onOpen, onEvent, onGap, onDown, onUnauthorized }) {
    Object.assign(this, { tokenSource, onOpen, onEvent, onGap, onDown, onUnauthorized });
    this.lastSeq = null;  // null: start live; else resume after it
    this.attempt = 0;
    this.controller = null;
    this.retryTimer = null;
    this.stopped = true;
  }

  start() {
    this.stopped = false;
    this.connect();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    if (this.controller) this.controller.abort();
  }

  // Reconnect now (the token changed, the tab came back from sleep).
  restart() {
    this.stop();
    this.attempt = 0;
    this.start();
  }

  async connect() {
    const controller = new AbortController();
    this.controller = controller;
    const headers = { "Authorization": "Bearer " + this.tokenSource(), "Accept": "text/event-stream" };
    if (this.lastSeq !== null) headers["Last-Event-ID"] = String(this.lastSeq);
    let silence = null;
    const armSilence = () => {
      clearTimeout(silence);
      silence = setTimeout(() => controller.abort(), kSilenceMs);
    };
    try {
      armSilence();
      const response = await fetch("/events", { headers, signal: controller.signal, cache: "no-store", credentials: "omit" });
      if (response.status === 401) {
        clearTimeout(silence);
        this.stopped = true;
        this.onUnauthorized();
        return;
      }
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      this.attempt = 0;
      this.onOpen(this.lastSeq);
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        armSilence();
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          this.handleFrame(frame);
        }
      }
      throw new Error("the stream ended");
    } catch (error) {
      clearTimeout(silence);
      if (this.controller !== controller || this.stopped) return;  // replaced or stopped on purpose
      this.onDown(String(error && error.message || error));
      const delay = kRetryMs[Math.min(this.attempt, kRetryMs.length - 1)];
      this.attempt++;
      this.retryTimer = setTimeout(() => this.connect(), delay);
    }
  }

  handleFrame(frame) {
    let kind = "message";
    let data = "";
    let id = null;
    for (const line of frame.split("\n")) {
      if (line === "" || line.startsWith(":")) continue;  // comments carry the heartbeat
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") kind = value;
      else if (field === "data") data += (data ? "\n" : "") + value;
      else if (field === "id") id = value;
    }
    if (!data) return;
    if (kind === "gap") {
      this.onGap(JSON.parse(data));
      return;
    }
    const event = JSON.parse(data);
    if (this.lastSeq !== null && event.seq <= this.lastSeq) return;
    this.lastSeq = id !== null ? Number(id) : event.seq;
    this.onEvent(event);
  }
}
