#!/usr/bin/python3
"""The web console in a real browser: Debian's headless Chromium driven through Debian's python3-selenium and
chromium-driver, against the real `switchboard serve` hosting the real Claude Code CLI, which talks to the
project's mock model provider (tests/mock_provider/anthropic_mock.py), never the network.

    test_console.py --binary build/dev/switchboard [-k PATTERN] [--screenshots DIR]

Exits 77 (CTest's "skipped") when Chromium, chromedriver, selenium or the Claude CLI is missing, unless $CI is
set: then that is a failure. Screenshots of the main states go to --screenshots (default
./browser-screenshots; not committed). The first-paint figure for a 10,000-event session is printed and
written to first-paint.json there."""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
MOCK = os.path.join(REPO, "tests", "mock_provider", "anthropic_mock.py")
# Debian's chromium and chromium-driver packages (scripts/setup --test), found on PATH; CHROMIUM / CHROMEDRIVER
# name others.
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "chromium"
CHROMEDRIVER = os.environ.get("CHROMEDRIVER") or shutil.which("chromedriver") or "chromedriver"
SKIP = 77
WAIT = 45  # seconds for any one expected state; a healthy turn against the mock takes a couple of seconds

ARGS = None  # set by main()

TOUCH = {"command": "touch created_by_tool.txt && echo made", "description": "Create a file (mock)"}
XSS_TEXT = ('Here: <img src=x onerror="window.__xss=1"> and <script>window.__xss=2</script> '
            '[a link](javascript:window.__xss=3) <svg onload="window.__xss=4"></svg> **bold stays**')
XSS_COMMAND = "echo '<img src=x onerror=\"window.__xss=5\">' xss-tool-output"

# One mock for the whole run: rules only (rules are not used up), keyed by the prompt, so scenarios need no order.
MOCK_SCRIPT = {"rules": [
    {"match": {"system_contains": "sentence-case title"}, "reply": {"text": '{"title": "Console test"}'}},
    {"match": {"last_user_has_tool_result": True, "tool_result_is_error": True,
               "tool_result_contains": "Denied from the console"}, "reply": {"text": "The tool was denied."}},
    {"match": {"last_user_has_tool_result": True, "tool_result_contains": "xss-tool-output"},
     "reply": {"text": 'Final: <img src=x onerror="window.__xss=6"> done.'}},
    {"match": {"last_user_has_tool_result": True, "tool_result_contains": "made"}, "reply": {"text": "The tool ran."}},
    {"match": {"last_user_has_tool_result": True}, "reply": {"text": "Tool result seen."}},
    {"match": {"last_user_text_contains": "please create a file"},
     "reply": {"text": "I will create the file.", "tool_use": {"name": "Bash", "input": TOUCH}}},
    {"match": {"last_user_text_contains": "edit the notes"},
     "reply": {"tool_use": {"name": "Edit", "input": {"file_path": "NOTES_PATH", "old_string": "old line",
                                                      "new_string": "new line"}}}},
    {"match": {"last_user_text_contains": "flood"},
     "reply": {"content": [{"type": "text", "repeat": "w ", "times": 4000}], "delay_ms": 1}},
    {"match": {"last_user_text_contains": "say hello"},
     "reply": {"text": "Hello from the **mock** console, streamed in pieces.", "chunks": 12, "delay_ms": 80}},
    {"match": {"last_user_text_contains": "xss please"},
     "reply": {"text": XSS_TEXT, "tool_use": {"name": "Bash", "input": {"command": XSS_COMMAND,
                                                                       "description": "Print markup"}}}},
    {"match": {"last_user_text_contains": "talk slowly"},
     "reply": {"content": [{"type": "text", "repeat": "tick ", "times": 600}], "delay_ms": 50}},
    {"match": {"last_user_text_contains": "marathon"}, "times": 1,
     "reply": {"content": [{"type": "text", "repeat": "lap ", "times": 600}], "delay_ms": 50}},
    {"match": {"last_user_text_contains": "marathon"}, "reply": {"text": "Marathon finished."}},
]}


def claude_path():
    found = subprocess.run([os.path.join(REPO, "scripts", "agent-path"), "claude"], capture_output=True, text=True)
    path = found.stdout.strip()
    return path if found.returncode == 0 and path and os.path.exists(path) else None


def missing_prerequisites():
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not os.path.exists(p)]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("python3-selenium")
    if not claude_path():
        missing.append("the Claude Code CLI (scripts/install-agents claude)")
    return missing


class Mock:
    def __init__(self, scratch, notes):
        script = os.path.join(scratch, "mock.script.json")
        port_file = os.path.join(scratch, "mock.port")
        with open(notes, "w") as f:
            f.write("old line\n")
        with open(script, "w") as f:
            f.write(json.dumps(MOCK_SCRIPT).replace("NOTES_PATH", notes))
        self.proc = subprocess.Popen([sys.executable, MOCK, "--script", script, "--log",
                                      os.path.join(scratch, "mock.requests.ndjson"), "--port-file", port_file],
                                     stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while not os.path.exists(port_file):
            assert self.proc.poll() is None and time.monotonic() < deadline, "the mock did not start"
            time.sleep(0.02)
        with open(port_file) as f:
            self.port = int(f.read())

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)


class Daemon:
    """`switchboard serve` on a data directory; restartable on the same port (the page's origin)."""

    def __init__(self, scratch, env, name="daemon", binary=None, extra_args=()):
        self.binary = binary or ARGS.binary
        self.extra_args = list(extra_args)  # after `serve`, e.g. --allow-host NAME
        self.scratch = scratch
        self.env = env
        self.data = os.path.join(scratch, name + ".data")
        self.log_path = os.path.join(scratch, name + ".stderr.txt")
        self.port = 0
        self.proc = None
        self.start()

    def start(self):
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([self.binary, "--log-level", "info", "serve", "--data-dir", self.data,
                                      "--port", str(self.port), *self.extra_args], env=self.env, stdout=subprocess.PIPE,
                                     stderr=self.log, stdin=subprocess.DEVNULL)
        self.proc.stdout.readline()  # "switchboard X listening on URL"
        line = self.proc.stdout.readline().decode().strip()  # "open URL#token=T"
        assert line.startswith("open "), f"unexpected serve output {line!r}"
        self.url, token = line[len("open "):].split("#token=")
        self.token = token
        self.port = int(self.url.rstrip("/").rsplit(":", 1)[1])

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.proc.stdout.close()
        self.log.close()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc.stdout.close()
        self.log.close()

    def call(self, method, params=None):
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}).encode()
        request = urllib.request.Request(self.url + "rpc", data=body, headers={
            "Authorization": "Bearer " + self.token, "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            answer = json.loads(response.read())
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def events(self, session_id):
        out, after = [], 0
        while True:
            page = self.call("session.events", {"sessionId": session_id, "afterSeq": after, "limit": 1000})
            out += page["events"]
            if "nextAfterSeq" not in page:
                return out
            after = page["nextAfterSeq"]


def daemon_env(scratch, mock_port, claude):
    home = os.path.join(scratch, "home")
    os.makedirs(home, exist_ok=True)
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
            "CLAUDE_CONFIG_DIR": os.path.join(home, ".claude"),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{mock_port}", "ANTHROPIC_API_KEY": "sk-mock",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "CLAUDE_CODE_MAX_RETRIES": "2",
            "SWITCHBOARD_CLAUDE_BIN": claude,
            # The replay agent (docs/agents/replay.md), for the scenario that needs neither the CLI nor the mock.
            "SWITCHBOARD_REPLAY_RECORDING": os.path.join(REPO, "tests", "fixtures", "claude-code",
                                                         "recorded-exchange-stdio-permission.ndjson"),
            "SWITCHBOARD_REPLAY_SLOWDOWN": "5"}


def new_browser(extra_flags=()):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,900", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-default-apps", *extra_flags):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)


class ConsoleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp(prefix="switchboard-browser-")
        cls.work = os.path.join(cls.scratch, "work")
        os.makedirs(cls.work)
        cls.shots = os.path.abspath(ARGS.screenshots)
        os.makedirs(cls.shots, exist_ok=True)
        cls.mock = Mock(cls.scratch, notes=os.path.join(cls.work, "notes.txt"))
        cls.daemon = Daemon(cls.scratch, daemon_env(cls.scratch, cls.mock.port, claude_path()))
        cls.browser = new_browser()
        cls.browser.set_script_timeout(30)

    @classmethod
    def tearDownClass(cls):
        cls.browser.quit()
        cls.daemon.stop()
        cls.mock.stop()
        if not ARGS.keep:
            shutil.rmtree(cls.scratch, ignore_errors=True)

    def tearDown(self):
        # Each scenario leaves one tab behind; extra tabs of a scenario are closed here.
        handles = self.browser.window_handles
        for handle in handles[1:]:
            self.browser.switch_to.window(handle)
            self.browser.close()
        self.browser.switch_to.window(handles[0])

    # ---- helpers --------------------------------------------------------------------------------------------

    def js(self, script, *args):
        return self.browser.execute_script(script, *args)

    def wait(self, what, predicate, timeout=WAIT):
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                self.shot("timeout-" + what.replace(" ", "-"))
                self.fail(f"timed out waiting for {what}; page log: {self.page_log()}")
            time.sleep(0.05)

    def page_log(self):
        try:
            return [entry["message"] for entry in self.browser.get_log("browser")][-10:]
        except Exception:  # noqa: BLE001 (a log we cannot read is not the failure being reported)
            return []

    def shot(self, name):
        self.browser.save_screenshot(os.path.join(self.shots, name + ".png"))

    def open_console(self, session_id=None, daemon=None):
        daemon = daemon or self.daemon
        fragment = "#token=" + daemon.token + (f"&session={session_id}" if session_id else "")
        # A URL that differs from the current one only in its fragment would not load the page again.
        self.browser.get("about:blank")
        self.browser.get(daemon.url + fragment)
        self.wait_live()

    def wait_live(self):
        self.wait("the live indicator", lambda: self.js("return document.getElementById('connection').dataset.state") == "live")

    def create_session(self, title):
        return self.daemon.call("session.create", {"agent": "claude", "cwd": self.work, "title": title})["session"]["sessionId"]

    def state_badge(self):
        return self.js("return document.getElementById('session-badge').dataset.state")

    def type_prompt(self, text):
        from selenium.webdriver.common.keys import Keys
        box = self.browser.find_element("id", "prompt")
        box.click()
        box.send_keys(text)
        box.send_keys(Keys.ENTER)

    def assistant_texts(self):
        return self.js("return [...document.querySelectorAll('#transcript .assistant')].map(n => n.textContent)")

    def wait_text(self, text):
        return self.wait(f"assistant text {text!r}", lambda: any(text in t for t in self.assistant_texts()))

    def wait_idle(self):
        self.wait("the session to be idle", lambda: self.state_badge() == "idle")

    def card(self, selector="#requests .request-card.permission"):
        return self.wait("a permission card", lambda: self.js(
            f"const c = [...document.querySelectorAll('{selector}')].find(n => n.dataset.state !== 'resolved');"
            "return c ? c.dataset.requestId : null;"))

    def assert_transcript_matches_log(self, session_id):
        """What the page shows is what the event log holds: every turn once, every message once, same text."""
        events = self.daemon.events(session_id)
        turns = [e["data"]["turnId"] for e in events if e["type"] == "turn.started"]
        page_turns = self.js("return [...document.querySelectorAll('#transcript .turn')].map(n => n.dataset.turnId)")
        self.assertEqual(page_turns, turns)
        completed = [e["data"] for e in events if e["type"] == "message.completed" and e["data"]["role"] == "assistant"
                     and e["data"]["kind"] == "text"]
        page_messages = self.js("return [...document.querySelectorAll('#transcript .assistant')].map(n => n.dataset.messageId)")
        self.assertEqual(len(page_messages), len(set(page_messages)), "a message is shown twice")
        for message in completed:
            self.assertIn(message["messageId"], page_messages)
        # Text: a completed message exactly; one a kill cut off may have shown a few deltas the log never stored,
        # but never less than the log has, and never a piece twice.
        logged = {}
        for e in events:
            if e["type"] == "message.delta":
                logged[e["data"]["messageId"]] = logged.get(e["data"]["messageId"], "") + e["data"]["text"]
        for message in completed:
            logged[message["messageId"]] = message["text"]
        page_text = self.js("return Object.fromEntries([...document.querySelectorAll('#transcript .assistant')]"
                            ".map(n => [n.dataset.messageId, n.textContent.trim()]))")
        done = {m["messageId"] for m in completed}
        plain = lambda text: " ".join(text.replace("*", "").replace("`", "").split())  # as the Markdown shows it
        for message_id, text in page_text.items():
            expected, shown = plain(logged.get(message_id, "")), plain(text)
            if message_id in done:
                self.assertEqual(shown, expected, f"message {message_id}")
            else:
                self.assertTrue(shown.startswith(expected) and len(shown) - len(expected) < 200,
                                f"message {message_id}: page {shown[:80]!r}… log {expected[:80]!r}…")
        tools = [e["data"]["toolCallId"] for e in events if e["type"] == "tool.started"]
        page_tools = self.js("return [...document.querySelectorAll('#transcript .tool')].map(n => n.dataset.toolCallId)")
        self.assertEqual(page_tools, tools)

    # ---- scenarios ------------------------------------------------------------------------------------------

    def test_01_open_with_token_lists_sessions(self):
        listed = self.create_session("Listed before the page opened")
        self.open_console()
        self.wait("the session in the list", lambda: self.js(
            "return !!document.querySelector(`#session-list li[data-session-id='${arguments[0]}']`)", listed))
        self.assertEqual(self.js("return location.hash"), "", "the token must leave the address bar")
        self.assertTrue(self.js("return sessionStorage.getItem('switchboard.token') === arguments[0]", self.daemon.token))
        later = self.create_session("Created while the page is open")
        self.wait("a session created elsewhere", lambda: self.js(
            "return !!document.querySelector(`#session-list li[data-session-id='${arguments[0]}']`)", later))
        self.shot("01-sessions")

    def test_02_new_session_prompt_streams(self):
        self.open_console()
        self.browser.find_element("id", "new-session-button").click()
        self.wait("the agent list", lambda: self.js("return document.getElementById('new-agent').options.length > 0"))
        self.assertEqual(self.js("return document.getElementById('new-agent').value"), "claude")
        cwd = self.browser.find_element("id", "new-cwd")
        cwd.clear()
        cwd.send_keys(self.work)
        self.browser.find_element("id", "new-title").send_keys("Streaming")
        self.browser.find_element("id", "new-session-create").click()
        self.wait("the new session to open", lambda: self.js("return document.getElementById('session-title').textContent") == "Streaming")
        self.type_prompt("say hello")
        full = "Hello from the mock console, streamed in pieces."
        partial = self.wait("a partly streamed answer", lambda: next(
            (t for t in self.assistant_texts() if t.strip() and t.strip() != full), None), timeout=WAIT)
        self.assertTrue(full.startswith(partial.strip()[:5]), partial)
        self.wait_text(full)
        self.assertTrue(self.js("return !!document.querySelector('#transcript .assistant strong')"), "Markdown not rendered")
        self.wait("the turn's usage", lambda: "out" in self.js(
            "const u = document.querySelector('#transcript .turn-end .usage'); return u ? u.textContent : ''"))
        self.wait_idle()
        self.shot("02-streamed")

    def test_03_permission_allow_then_tool_output(self):
        session = self.create_session("Permission allow")
        self.open_console(session)
        self.type_prompt("please create a file")
        request = self.card()
        focused = self.js("return document.activeElement.className")
        self.assertIn("allow-once", focused, "Allow once must be focused, never Always")
        # The card comes with permission.requested, the badge with the session.state that follows it in the stream.
        self.wait("the awaiting-input badge", lambda: self.state_badge() == "awaiting_input", timeout=10)
        self.assertEqual(self.js("return document.querySelector('.request-card .rule-tool').value"), "Bash")
        self.shot("03-permission-card")
        self.browser.find_element("css selector", f".request-card[data-request-id='{request}'] .allow-once").click()
        self.wait("the tool's output", lambda: "made" in self.js(
            "return [...document.querySelectorAll('#transcript .tool .tool-output')].map(n => n.textContent).join()"))
        self.wait_text("The tool ran.")
        self.assertIn("You allowed", self.js(f"return document.querySelector(\".request-card[data-request-id='{request}'] .outcome\").textContent"))
        self.wait_idle()
        self.shot("03-after-allow")

    def test_04_permission_deny_with_message(self):
        session = self.create_session("Permission deny")
        self.open_console(session)
        self.type_prompt("please create a file, which I will deny")
        request = self.card()
        self.browser.find_element("css selector", f".request-card[data-request-id='{request}'] .deny-message").send_keys("Denied from the console")
        self.browser.find_element("css selector", f".request-card[data-request-id='{request}'] .deny").click()
        self.wait_text("The tool was denied.")
        self.assertIn("You denied", self.js(f"return document.querySelector(\".request-card[data-request-id='{request}'] .outcome\").textContent"))
        self.wait("the tool card in error", lambda: self.js("return document.querySelector('#transcript .tool').dataset.state") == "error")
        self.wait_idle()

    def test_05_second_tab_answers_first(self):
        session = self.create_session("Two tabs")
        self.open_console(session)
        first = self.browser.current_window_handle
        self.type_prompt("please create a file from the first tab")
        request = self.card()
        # A tab opened while the request waits shows it from its first load.
        self.browser.switch_to.new_window("tab")
        self.open_console(session)
        second = self.browser.current_window_handle
        self.assertEqual(self.card(), request, "the second tab shows the open request on load")
        self.browser.find_element("css selector", f".request-card[data-request-id='{request}'] .allow-once").click()
        self.browser.switch_to.window(first)
        outcome = self.wait("answered elsewhere", lambda: self.js(
            f"const o = document.querySelector(\".request-card[data-request-id='{request}'] .outcome\"); return o && o.textContent"))
        self.assertIn("Answered elsewhere", outcome)
        self.assertTrue(self.js(f"return document.querySelector(\".request-card[data-request-id='{request}'] .allow-once\").disabled"))
        self.assertFalse(self.js("return document.getElementById('notice').hidden === false"), "the race is not an error")
        self.wait_text("The tool ran.")
        self.shot("05-answered-elsewhere")

    def test_06_markup_in_agent_text_and_tool_output_stays_inert(self):
        session = self.create_session("XSS")
        self.open_console(session)
        self.type_prompt("xss please")

        def settled():
            pending = self.js("const c = [...document.querySelectorAll('#requests .request-card.permission')]"
                              ".find(n => n.dataset.state !== 'resolved'); return c ? c.dataset.requestId : null;")
            if pending:  # the CLI may ask before running echo; allow it
                self.browser.find_element("css selector", f".request-card[data-request-id='{pending}'] .allow-once").click()
            return any("Final:" in t for t in self.assistant_texts())
        self.wait("the final answer", settled)
        self.wait_idle()
        self.assertIsNone(self.js("return window.__xss === undefined ? null : window.__xss"))
        transcript = "document.getElementById('transcript')"
        self.assertEqual(self.js(f"return {transcript}.querySelectorAll('script, svg, iframe, [onerror], [onload]').length"), 0)
        self.assertEqual(self.js(f"return [...{transcript}.querySelectorAll('a')].filter(a => /^javascript:/i.test(a.getAttribute('href') || '')).length"), 0)
        self.assertTrue(self.js(f"return !!{transcript}.querySelector('.assistant strong')"), "harmless Markdown still renders")
        output = self.js(f"return [...{transcript}.querySelectorAll('.tool .tool-output')].map(n => n.textContent).join()")
        self.assertIn("<img src=x onerror=", output, "tool output is shown as text")
        self.assertEqual(self.js(f"return {transcript}.querySelectorAll('.tool-output *').length"), 0)
        self.shot("06-xss-inert")

    def test_07_escape_cancels_the_turn(self):
        session = self.create_session("Cancel")
        self.open_console(session)
        self.type_prompt("talk slowly")
        self.wait("ticks streaming", lambda: any("tick tick" in t for t in self.assistant_texts()))
        self.browser.find_element("id", "prompt").send_keys("\ue00c")  # Escape
        self.wait("the cancelled turn", lambda: self.js(
            "const s = document.querySelector('#transcript .turn-end .stop-reason'); return s && s.dataset.stopReason") == "cancelled")
        self.wait_idle()

    def test_08_prompt_sent_while_busy_is_queued(self):
        session = self.create_session("Queue")
        self.open_console(session)
        self.type_prompt("talk slowly")
        self.wait("ticks streaming", lambda: any("tick" in t for t in self.assistant_texts()))
        self.type_prompt("say hello after the ticks")
        self.wait("the queued prompt", lambda: self.js(
            "return [...document.querySelectorAll('#queue li')].map(n => n.textContent).join()") == "say hello after the ticks")
        self.shot("08-queued")
        self.browser.find_element("id", "cancel-button").click()
        self.wait_text("Hello from the mock console")
        self.assertEqual(self.js("return document.querySelectorAll('#queue li').length"), 0)
        self.assertEqual(self.js("return document.querySelectorAll('#transcript .turn').length"), 2)
        self.wait_idle()
        self.assert_transcript_matches_log(session)

    def test_09_daemon_killed_mid_turn_and_restarted(self):
        session = self.create_session("Restart")
        self.open_console(session)
        self.type_prompt("marathon")
        self.wait("laps streaming", lambda: any("lap lap lap" in t for t in self.assistant_texts()))
        self.daemon.kill()
        self.wait("the reconnecting indicator", lambda: self.js("return document.getElementById('connection').dataset.state") in ("reconnecting", "unauthorized"))
        self.shot("09-reconnecting")
        self.daemon.start()
        # A new run has a new token: the old one is refused, and the page says what to do.
        self.wait("the token refusal", lambda: self.js("return document.getElementById('connection').dataset.state") == "unauthorized")
        self.shot("09-token-refused")
        # The user opens the URL the daemon printed, in the same tab: the page keeps its state and resumes.
        self.js("location.hash = '#token=' + arguments[0]", self.daemon.token)
        self.wait_live()
        self.wait("the interrupted badge", lambda: self.state_badge() == "interrupted")
        self.wait("the resume bar", lambda: not self.js("return document.getElementById('interrupted-bar').hidden"))
        self.shot("09-interrupted")
        self.assert_transcript_matches_log(session)
        self.browser.find_element("id", "resume-button").click()
        self.wait_text("Marathon finished.")
        self.wait_idle()
        self.assert_transcript_matches_log(session)
        self.shot("09-resumed")
        # Once more, with a turn that runs while the page is cut off: it comes from the replay after the last seq
        # the page applied (Last-Event-ID), not from a reload.
        self.daemon.stop()
        self.daemon.start()
        self.wait("the token refusal", lambda: self.js("return document.getElementById('connection').dataset.state") == "unauthorized")
        self.daemon.call("session.send", {"sessionId": session, "text": "say hello while the page is away"})
        self.js("location.hash = '#token=' + arguments[0]", self.daemon.token)
        self.wait_live()
        self.wait_text("Hello from the mock console")
        self.wait_idle()
        self.assert_transcript_matches_log(session)

    def test_11_file_edit_shows_as_a_diff(self):
        session = self.create_session("Edit")
        self.open_console(session)
        self.type_prompt("edit the notes")
        diff = self.wait("the diff", lambda: self.js(
            "const d = document.querySelector('#transcript .tool .diff'); return d && [...d.children].map(n => [n.className, n.textContent])"))
        self.assertIn(["del", "-old line\n"], diff)
        self.assertIn(["add", "+new line\n"], diff)
        # Claude Code refuses to edit a file it has not read: the card shows that error, as the tool's output.
        self.wait("the tool's error", lambda: self.js("return document.querySelector('#transcript .tool').dataset.state") == "error")
        self.assertIn("has not been read", self.js("return document.querySelector('#transcript .tool .tool-output').textContent"))
        self.wait_idle()
        self.shot("11-diff-and-tool-error")

    def test_12_import_from_the_agents_history(self):
        spent = self.create_session("Spent")
        self.daemon.call("session.send", {"sessionId": spent, "text": "say hello for the history"})
        self.open_console()
        self.browser.find_element("id", "new-session-button").click()
        self.wait("the agent list", lambda: self.js("return document.getElementById('new-agent').options.length > 0"))
        cwd = self.browser.find_element("id", "new-cwd")
        cwd.clear()
        cwd.send_keys(self.work)
        self.browser.find_element("css selector", "#history-section summary").click()
        self.browser.find_element("id", "history-button").click()
        self.wait("the agent's sessions", lambda: self.js("return document.querySelectorAll('#history-list li[data-provider-session-id]').length"))
        self.shot("12-history")
        before = set(self.js("return [...document.querySelectorAll('#session-list li')].map(n => n.dataset.sessionId)"))
        self.browser.find_element("css selector", "#history-list li[data-provider-session-id] button").click()
        self.wait("the imported session", lambda: set(self.js(
            "return [...document.querySelectorAll('#session-list li')].map(n => n.dataset.sessionId)")) - before)
        self.assertFalse(self.js("return document.getElementById('new-session-dialog').open"))

    def test_12b_a_session_in_a_new_worktree_is_reviewed_and_merged(self):
        repo = os.path.join(self.scratch, "worktree-repo")
        os.makedirs(repo, exist_ok=True)
        with open(os.path.join(repo, "app.txt"), "w") as f:
            f.write("one\n")
        git = ["git", "-c", "user.name=Tester", "-c", "user.email=tester@example.com"]
        for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
            subprocess.run(git + args, cwd=repo, check=True)
        self.open_console()
        self.browser.find_element("id", "new-session-button").click()
        self.wait("the agent list", lambda: self.js("return document.getElementById('new-agent').options.length > 0"))
        cwd = self.browser.find_element("id", "new-cwd")
        cwd.clear()
        cwd.send_keys(repo)
        self.browser.find_element("id", "new-title").send_keys("Worktree try")
        self.browser.find_element("id", "new-worktree").click()
        self.browser.find_element("id", "new-session-create").click()
        self.wait("the branch badge", lambda: self.js(
            "return !document.getElementById('worktree-bar').hidden && document.getElementById('worktree-branch').textContent")
            == "switchboard/worktree-try")
        session = self.daemon.call("session.list", {})["sessions"][0]
        self.assertEqual(session["worktree"]["branch"], "switchboard/worktree-try")
        with open(os.path.join(session["worktree"]["path"], "app.txt"), "w") as f:
            f.write("two\n")
        self.browser.find_element("id", "worktree-review").click()
        self.wait("the review", lambda: self.js("return document.getElementById('diff-body').dataset.state") == "loaded")
        self.assertEqual(self.js("return [...document.querySelectorAll('#diff-body .file-change')].map(n => n.dataset.path)"), ["app.txt"])
        self.shot("12b-worktree-review")
        self.browser.find_element("id", "diff-close").click()
        self.browser.find_element("id", "worktree-merge").click()
        self.wait("the merge", lambda: self.js("return document.getElementById('diff-body').dataset.state") == "loaded")
        self.assertIn("Merged", self.js("return document.getElementById('diff-body').textContent"))
        with open(os.path.join(repo, "app.txt")) as f:
            self.assertEqual(f.read(), "two\n")
        self.browser.find_element("id", "diff-close").click()

    def test_13_a_flood_of_deltas_keeps_the_page_responsive(self):
        """Measured and recorded in flood.json: 4,000 deltas as fast as the CLI relays them; the page draws once per
        frame, so frames keep coming and no task blocks the main thread for long."""
        session = self.create_session("Flood")
        self.open_console(session)
        self.js("""window.__long = []; window.__frames = 0;
                   new PerformanceObserver((list) => window.__long.push(...list.getEntries().map((e) => e.duration)))
                     .observe({ type: 'longtask' });
                   const tick = () => { window.__frames++; requestAnimationFrame(tick); }; tick();""")
        self.type_prompt("flood")
        self.wait("the first words", lambda: any("w w" in t for t in self.assistant_texts()))
        started, frames0 = time.monotonic(), self.js("return window.__frames")
        self.wait_idle()
        seconds = time.monotonic() - started
        frames = self.js("return window.__frames") - frames0
        text = " ".join(self.assistant_texts()[-1].split())
        self.assertEqual(text, " ".join(["w"] * 4000), "every delta once, in order")
        long_tasks = self.js("return window.__long")
        figure = {"deltas": 4000, "seconds": round(seconds, 2), "deltas_per_s": round(4000 / seconds),
                  "frames_per_s": round(frames / seconds), "long_tasks": len(long_tasks),
                  "longest_task_ms": round(max(long_tasks, default=0))}
        with open(os.path.join(self.shots, "flood.json"), "w") as f:
            json.dump(figure, f)
        print(f"\nflood: {figure}", file=sys.stderr)
        self.assertGreater(frames / seconds, 10, "the page stopped drawing frames")

    def test_14_session_list_pages_and_filters_on_the_daemon(self):
        for i in range(130):
            title = f"needle {i}" if i % 10 == 0 else f"hay {i}"
            self.daemon.call("session.create", {"agent": "claude", "cwd": self.work, "title": title})
        total = len(self.all_session_ids())
        self.open_console()
        rows = lambda: self.js("return document.querySelectorAll('#session-list li[data-session-id]').length")
        self.wait("the first page", lambda: rows() == 100)
        self.assertTrue(self.js("return !!document.querySelector('#session-list li.more')"))
        self.js("document.querySelector('#session-list li.more').scrollIntoView()")
        self.wait("the next page", lambda: rows() > 100)
        while self.js("return !!document.querySelector('#session-list li.more')"):
            self.js("document.querySelector('#session-list li.more').scrollIntoView()")
            time.sleep(0.1)
        self.wait("every session", lambda: rows() == total)
        box = self.browser.find_element("id", "session-filter")
        box.send_keys("NEEDLE")
        self.wait("the filtered list", lambda: rows() == 13 and all(
            "needle" in t for t in self.js("return [...document.querySelectorAll('#session-list li .title')].map(n => n.textContent)")))
        self.shot("14-filtered")
        box.clear()
        box.send_keys(" ")  # an input event with an empty filter again
        self.wait("the unfiltered first page", lambda: rows() == 100)

    def test_15_replay_agent_plays_its_recording(self):
        # A recorded Claude Code exchange through the real adapter: a streamed answer, a permission card that
        # holds the turn until it is answered, the recorded tool output, then the recording's second turn.
        work = os.path.join(self.scratch, "replay-work")  # not the real CLI's: its scenarios create files there
        os.makedirs(work, exist_ok=True)
        session = self.daemon.call("session.create", {"agent": "replay", "cwd": work, "title": "Replay"})["session"]["sessionId"]
        self.open_console(session)
        self.type_prompt("anything: the recording decides")
        request = self.card()
        # The card comes with permission.requested, the badge with the session.state that follows it in the stream.
        self.wait("the awaiting-input badge", lambda: self.state_badge() == "awaiting_input", timeout=10)
        self.browser.find_element("css selector", f".request-card[data-request-id='{request}'] .allow-once").click()
        self.wait_text("Mock model: the tool returned: made")
        self.wait_idle()
        self.assertFalse(os.path.exists(os.path.join(work, "created_by_tool.txt")), "a replay must run nothing")
        # A tool card holds elements only: no stray text (a null once rendered as the word "null").
        self.assertFalse(self.js("return [...document.querySelectorAll('#transcript .tool')].some("
                                 "t => [...t.childNodes].some(c => c.nodeType === Node.TEXT_NODE))"), "stray text in a tool card")
        self.type_prompt("and the next one")
        self.wait_text("second turn ok")
        self.wait_idle()
        self.assert_transcript_matches_log(session)
        self.shot("15-replay")

    # Installed before the page's own scripts (DevTools, so the page's CSP does not apply): the event stream's
    # chunks are held while window.__holdEvents is true, so a test can make this tab answer a request that
    # another client has answered already, before the tab has heard of it.
    HOLD_EVENTS = """
      (() => {
        const realFetch = window.fetch.bind(window);
        window.__holdEvents = false;
        window.fetch = async (input, init) => {
          const response = await realFetch(input, init);
          if (!String(input).endsWith("/events") || !response.body) return response;
          const reader = response.body.getReader();
          const held = [];
          let reading = null;  // one read at a time: a second read() would take the chunk the first awaits
          const body = new ReadableStream({
            async pull(controller) {
              for (;;) {
                if (!window.__holdEvents && held.length) return controller.enqueue(held.shift());
                reading = reading || reader.read();
                const next = await Promise.race([reading, new Promise((r) => setTimeout(() => r(null), 50))]);
                if (next === null) continue;
                reading = null;
                if (next.done) return controller.close();
                if (window.__holdEvents || held.length) held.push(next.value); else return controller.enqueue(next.value);
              }
            },
            cancel(reason) { return reader.cancel(reason); },
          });
          return new Response(body, { status: response.status, headers: response.headers });
        };
      })();
    """

    def test_16_own_answer_after_another_client_won_is_answered_elsewhere(self):
        work = os.path.join(self.scratch, "replay-race")
        os.makedirs(work, exist_ok=True)
        session = self.daemon.call("session.create", {"agent": "replay", "cwd": work, "title": "Race"})["session"]["sessionId"]
        script = self.browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": self.HOLD_EVENTS})
        try:
            self.open_console(session)
            self.type_prompt("a request two clients answer")
            request = self.card()
            self.js("window.__holdEvents = true;")
            # Another client answers first; this tab has not heard of it and answers too.
            self.daemon.call("permission.respond", {"requestId": request, "decision": "deny"})
            self.browser.find_element("css selector", f".request-card[data-request-id='{request}'] .allow-once").click()
            outcome = f"document.querySelector(\".request-card[data-request-id='{request}'] .outcome\").textContent"
            self.wait("the refused answer shown as answered elsewhere",
                      lambda: self.js(f"return {outcome}") == "Answered elsewhere")
            self.assertTrue(self.js("return document.getElementById('notice').hidden"),
                            "the -32002 of a lost race is state, not an error: " + self.js("return document.getElementById('notice').textContent"))
            self.js("window.__holdEvents = false;")
            self.wait("the winner's answer", lambda: "denied" in self.js(f"return {outcome}"))
            self.assertIn("Answered elsewhere", self.js(f"return {outcome}"))
            self.assertTrue(self.js(f"return document.querySelector(\".request-card[data-request-id='{request}'] .allow-once\").disabled"))
            self.wait_idle()
            self.shot("16-lost-race")
        finally:
            self.browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script["identifier"]})

    def all_session_ids(self):
        ids, cursor = [], None
        while True:
            page = self.daemon.call("session.list", {"limit": 500, **({"cursor": cursor} if cursor else {})})
            ids += [s["sessionId"] for s in page["sessions"]]
            cursor = page.get("nextCursor")
            if not cursor:
                return ids

    def test_10_first_paint_of_a_10000_event_session(self):
        """Measured, and recorded in first-paint.json: navigation start to the frame that shows the end of a
        session of 10,000 events (its newest page, read first), and to the one that shows all of it."""
        env = dict(self.daemon.env, SWITCHBOARD_CLAUDE_BIN=os.path.join(HERE, "bulk_claude.py"))
        bulk = Daemon(self.scratch, env, name="bulk", binary=ARGS.perf_binary)
        try:
            session = bulk.call("session.create", {"agent": "claude", "cwd": self.work, "title": "Ten thousand"})["session"]["sessionId"]
            bulk.call("session.send", {"sessionId": session, "text": "go"})  # waits for the turn's end
            count = len(bulk.events(session))
            self.assertGreaterEqual(count, 10000)
            times = []
            for _ in range(3):
                self.browser.get("about:blank")
                self.browser.get(bulk.url + f"#token={bulk.token}&session={session}")
                self.wait("the transcript", lambda: self.js("return document.body.dataset.transcriptDrawn") == session, timeout=60)
                # The end first: the session's last tool call is on the page, the earlier events are still read.
                tools = [e["data"]["toolCallId"] for e in bulk.events(session) if e["type"] == "tool.started"]
                self.assertEqual(self.js("return [...document.querySelectorAll('#transcript .tool')].pop().dataset.toolCallId"), tools[-1])
                self.wait("the whole transcript", lambda: self.js("return document.body.dataset.transcriptComplete") == session, timeout=60)
                # The mark is taken in the frame's callback; the paint follows it.
                times.append(self.browser.execute_async_script("""
                    const done = arguments[arguments.length - 1];
                    const at = (name) => performance.getEntriesByName(name)[0].startTime;
                    const paint = performance.getEntriesByName('first-contentful-paint')[0];
                    requestAnimationFrame(() => setTimeout(() => done([at('transcript-drawn'), paint ? paint.startTime : null,
                        at('transcript-fetched'), at('transcript-applied'), at('transcript-complete')]), 0));"""))
            turns = self.js("return document.querySelectorAll('#transcript .tool').length")
            self.shot("10-ten-thousand")
            # Built again from the start once the earlier pages were in: the turn has its prompt, which only the
            # session's first page holds.
            self.assertEqual(self.js("return document.querySelector('#transcript .turn .prompt').textContent"), "go")
            self.assertFalse(self.js("return !!document.querySelector('#transcript .loading-earlier')"))
            # It opened on the newest items; "Show earlier" brings back the rest, every one of them, in order.
            page_tools = lambda: self.js("return [...document.querySelectorAll('#transcript .tool')].map(n => n.dataset.toolCallId)")
            self.assertEqual(page_tools(), tools[-len(page_tools()):])
            # The reader opens the last tool call's input; drawing the earlier items (from scratch) keeps it open.
            self.browser.execute_script("[...document.querySelectorAll('#transcript .tool')].pop().querySelector('details').open = true")
            while self.js("return !!document.querySelector('#transcript .show-earlier')"):
                self.browser.find_element("css selector", "#transcript .show-earlier").click()
                time.sleep(0.2)
            self.assertEqual(page_tools(), tools)
            self.assertEqual(self.js("return [...document.querySelectorAll('#transcript .tool details[open]')].map(n => n.closest('.tool').dataset.toolCallId)"),
                             [tools[-1]])
            # Each with what the events before the newest page said of it: its tool's name and its end.
            self.assertEqual(self.js("return [...new Set([...document.querySelectorAll('#transcript .tool')].map(n => n.dataset.state + ' ' + n.querySelector('.tool-name').textContent))]"),
                             ["done Bash"])
            drawn = sorted(t[0] for t in times)
            figure = {"binary": bulk.binary, "events": count, "tool_cards": turns, "transcript_drawn_ms": [round(t) for t in drawn],
                      "median_ms": round(drawn[1]), "first_contentful_paint_ms": [round(t[1]) for t in times if t[1]],
                      "events_fetched_ms": [round(t[2]) for t in times], "events_applied_ms": [round(t[3]) for t in times],
                      "whole_transcript_ms": [round(t[4]) for t in times]}
            with open(os.path.join(self.shots, "first-paint.json"), "w") as f:
                json.dump(figure, f)
            print(f"\nfirst paint of a {count}-event session: {figure}", file=sys.stderr)
        finally:
            bulk.stop()


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", required=True, help="the switchboard binary")
    parser.add_argument("--screenshots", default="browser-screenshots", help="where screenshots go")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory")
    parser.add_argument("--perf-binary", help="the binary the first-paint measurement runs (default --binary; "
                                              "a release build gives the figure docs/console.md records)")
    parser.add_argument("-k", dest="patterns", action="append", help="only tests matching this substring")
    ARGS, rest = parser.parse_known_args()
    missing = missing_prerequisites()
    if missing:
        print("browser tests: missing " + ", ".join(missing) + " (scripts/setup --test; scripts/install-agents)",
              file=sys.stderr)
        return 1 if os.environ.get("CI") else SKIP
    argv = [sys.argv[0], "-v", *rest] + [x for p in (ARGS.patterns or []) for x in ("-k", p)]
    program = unittest.main(module=sys.modules[ConsoleTest.__module__], argv=argv, exit=False)
    return 0 if program.result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
