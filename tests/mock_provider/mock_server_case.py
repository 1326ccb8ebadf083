"""What the mocks' own tests share: a mock server on a free port for one test, a way to call it, and its log."""

import json
import os
import tempfile
import threading
import unittest
import urllib.error
import urllib.request


class MockServerCase(unittest.TestCase):
    """A mock (`mock`, its module, set by the subclass) on a free port for one test, and a way to call it."""

    mock = None

    def start(self, script):
        self.dir = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.dir.name, "log.ndjson")
        self.server = self.mock.MockServer(0, self.mock.Script(script), self.mock.Recorder(self.log))
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        self.server.recorder.close()
        self.dir.cleanup()

    def request(self, method, path, body=None, headers=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"content-type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, resp.headers, resp.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.headers, e.read().decode()

    def records(self):
        with open(self.log) as f:
            return [json.loads(line) for line in f]
