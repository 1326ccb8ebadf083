"""What the scripted mock providers share: the script (rules, turns, exhausted), the request log, id counters,
request-body reading and the command line. Each provider module supplies its own request predicates
(`mismatch(match, body)`) and its own wire format. Python 3 standard library only.
"""

import argparse
import gzip
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET_HEADERS = {"x-api-key", "authorization", "proxy-authorization", "cookie"}


def error_reply(status, message):
    return {"error": {"status": status, "message": message}}


class Script:
    """The replies for one test: `rules` answer any request they match (side requests such as titles), `turns`
    are taken in order by the other model requests. Shared by the handler threads, so guarded by a lock.
    `mismatch(match, body)` says why a request does not satisfy a `match` object, or None if it does."""

    def __init__(self, doc, mismatch):
        self.turns = list(doc.get("turns", []))
        self.rules = list(doc.get("rules", []))
        self.exhausted = doc.get("exhausted")
        self.mismatch = mismatch
        self.next_turn = 0
        self.rule_uses = [0] * len(self.rules)
        self.lock = threading.Lock()

    def pick(self, body):
        """Returns (label, reply) for a model request."""
        with self.lock:
            for i, rule in enumerate(self.rules):
                times = rule.get("times")
                if (times is None or self.rule_uses[i] < times) and self.mismatch(rule.get("match", {}), body) is None:
                    self.rule_uses[i] += 1
                    return f"rule {i}", rule["reply"]
            if self.next_turn >= len(self.turns):
                return "exhausted", self.exhausted or error_reply(
                    400, f"mock: script exhausted ({len(self.turns)} turns served)")
            k = self.next_turn
            turn = self.turns[k]
            why = self.mismatch(turn.get("match", {}), body)
            if why is not None:
                # The turn stays in place: a stray request fails loudly, the scripted one can still come.
                return f"mismatch turn {k}", error_reply(400, f"mock: request does not match turn {k}: {why}")
            self.next_turn += 1
            return f"turn {k}", turn


def check_predicates(checks, match):
    """Why `match` fails against the named checks (all keys must hold), or None."""
    for key, value in match.items():
        check = checks.get(key)
        if check is None:
            return f"unknown predicate {key!r}"
        if not check(value):
            return f"{key}={json.dumps(value)} does not hold"
    return None


def split(text, chunks):
    """`text` in `chunks` nearly equal pieces (at least one, none empty unless text is)."""
    chunks = max(1, min(int(chunks), len(text) or 1))
    size, extra = divmod(len(text), chunks)
    pieces, at = [], 0
    for i in range(chunks):
        n = size + (1 if i < extra else 0)
        pieces.append(text[at:at + n])
        at += n
    return pieces


def pieces_of(block, text_key="text"):
    """The pieces a text block streams in: `deltas`, or `repeat` x `times`, or its text in `chunks`."""
    if "deltas" in block:
        return list(block["deltas"])
    if "repeat" in block:
        return [block["repeat"]] * int(block.get("times", 1))
    return split(block.get(text_key, ""), block.get("chunks", 1))


class Ids:
    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}

    def next(self, prefix):
        with self.lock:
            self.counts[prefix] = self.counts.get(prefix, 0) + 1
            return f"{prefix}_mock_{self.counts[prefix]:04d}"


class MockHandler(BaseHTTPRequestHandler):
    """What every mock's request handler shares: its log lines only with --verbose."""

    def log_message(self, fmt, *args):
        if self.server.verbose:
            sys.stderr.write("mock: " + (fmt % args) + "\n")


class MockServer(ThreadingHTTPServer):
    """A mock on 127.0.0.1 (`port` 0: a free one) with its script, request log and id counters; `handler`, its
    request handler class, is set by each provider's module."""

    daemon_threads = True
    handler = None

    def __init__(self, port, script, recorder, verbose=False):
        super().__init__(("127.0.0.1", port), self.handler)
        self.script, self.recorder, self.verbose, self.ids = script, recorder, verbose, Ids()


class Recorder:
    """Appends one JSON object per line to the log, flushed at once so a test can read it while we run."""

    def __init__(self, path):
        self.file = open(path, "a", encoding="utf-8") if path else None
        self.lock = threading.Lock()
        self.seq = 0

    def next_seq(self):
        with self.lock:
            self.seq += 1
            return self.seq

    def close(self):
        if self.file:
            self.file.close()

    def write(self, record):
        if self.file:
            with self.lock:
                self.file.write(json.dumps(record) + "\n")
                self.file.flush()


def read_body(handler):
    """The request body of a BaseHTTPRequestHandler (Content-Length or chunked), gunzipped if it says gzip."""
    if "chunked" in handler.headers.get("Transfer-Encoding", "").lower():
        parts = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                raw = b"".join(parts)
                break
            parts.append(handler.rfile.read(size))
            handler.rfile.readline()
    else:
        raw = handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
    if handler.headers.get("Content-Encoding", "").lower() == "gzip":
        try:
            raw = gzip.decompress(raw)
        except OSError:
            pass
    return raw


def request_record(handler, seq, raw):
    """The log record of a request (secret headers redacted) and its parsed JSON body (None if not JSON)."""
    try:
        body = json.loads(raw) if raw else None
    except ValueError:
        body = None
    headers = {k.lower(): ("<redacted>" if k.lower() in SECRET_HEADERS else v) for k, v in handler.headers.items()}
    record = {"type": "request", "seq": seq, "time": round(time.time(), 3), "method": handler.command,
              "path": handler.path, "headers": headers, "body": body}
    if body is None and raw:
        record["body_text"] = raw.decode("utf-8", "replace")
    return record, body


def send_json(handler, status, obj, headers=None):
    data = json.dumps(obj).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.send_header("Connection", "close")
    for k, v in (headers or {}).items():
        handler.send_header(k, str(v))
    handler.end_headers()
    handler.close_connection = True
    if handler.command != "HEAD":
        handler.wfile.write(data)


def start_sse(handler, headers=None):
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    for k, v in (headers or {}).items():
        handler.send_header(k, str(v))
    handler.end_headers()
    handler.close_connection = True


_barriers = {}
_barriers_lock = threading.Lock()


def _barrier(server, name, parties):
    """The one threading.Barrier a server's streams share under `name`."""
    with _barriers_lock:
        key = (id(server), name)
        if key not in _barriers:
            _barriers[key] = threading.Barrier(parties)
        return _barriers[key]


def meet_at_barrier(handler, seq, spec):
    """Holds this stream until `parties` streams naming the same barrier got there, so a test can make two
    streams overlap whatever order and delay their requests arrive with. Gives up after `timeout_ms` (default
    60 s) and logs it; the stream then goes on, and the test that relied on the overlap fails on its own."""
    barrier = _barrier(handler.server, spec["name"], int(spec.get("parties", 2)))
    try:
        barrier.wait(spec.get("timeout_ms", 60000) / 1000)
    except threading.BrokenBarrierError:
        handler.server.recorder.write({"type": "barrier_timeout", "seq": seq, "time": round(time.time(), 3),
                                       "barrier": spec["name"]})


def stream_sse(handler, seq, events, reply):
    """Writes (name, data) events as SSE frames with the reply's `delay_ms` / `disconnect_after` / `barrier`,
    then logs how the stream ended. A name of None writes a data-only frame (Chat Completions); data that is a
    string is written as it is (its `[DONE]`)."""
    delay = reply.get("delay_ms", 0) / 1000
    cut = reply.get("disconnect_after")
    barrier = reply.get("barrier")
    sent = 0
    outcome = "complete"
    try:
        for name, data in events:
            if cut is not None and sent >= cut:
                outcome = "disconnected by script"
                break
            if barrier is not None and sent == int(barrier.get("at_event", 0)):
                meet_at_barrier(handler, seq, barrier)
            if sent and delay:
                time.sleep(delay)
            payload = data if isinstance(data, str) else json.dumps(data)
            frame = f"data: {payload}\n\n" if name is None else f"event: {name}\ndata: {payload}\n\n"
            handler.wfile.write(frame.encode())
            handler.wfile.flush()
            sent += 1
    except (BrokenPipeError, ConnectionResetError):
        outcome = "client closed"
    handler.server.recorder.write({"type": "response_end", "seq": seq, "time": round(time.time(), 3),
                                   "outcome": outcome, "events_sent": sent})


def serve_main(description, make_server, make_script):
    """The command line both mocks share: --script, --log, --port, --port-file, --verbose."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--script", help="JSON script (README.md); default: no turns")
    parser.add_argument("--log", help="append every request received to this NDJSON file")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 (default) picks a free one")
    parser.add_argument("--port-file", help="also write the port to this file once listening")
    parser.add_argument("--verbose", action="store_true", help="log each request line on stderr")
    args = parser.parse_args()

    doc = {}
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            doc = json.load(f)
    server = make_server(args.port, make_script(doc), Recorder(args.log), args.verbose)
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{port}\n")
        os.replace(tmp, args.port_file)
    print(port, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
