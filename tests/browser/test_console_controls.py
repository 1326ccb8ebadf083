#!/usr/bin/python3
"""The web console's session controls in a real browser (Debian's headless Chromium through python3-selenium and
chromium-driver, as test_console.py): the plan checklist, the context meter, the slash-command palette, the
options menu, the MCP servers' status, fork, rewind (with the diff it undoes, confirmed first), a turn's changes,
compact, and what an agent without those capabilities shows. The daemon is the test daemon
(`switchboard_test_daemon`), whose `controls` agent (tests/controls_agent/) reports all of them with no CLI and
no model, scripted by the prompt; `controls-bare` is the same agent with none of those capabilities.

    test_console_controls.py --binary build/dev/tests/switchboard_test_daemon [-k PATTERN] [--screenshots DIR]

Exits 77 (CTest's "skipped") when Chromium, chromedriver or selenium is missing, unless $CI is set."""

import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from daemon_console_case import DaemonConsoleCase, run  # noqa: E402  (the daemon, the browser, their helpers)


class ControlsTest(DaemonConsoleCase):
    scratch_prefix = "switchboard-controls-"

    def turn(self, text, answer=None):
        """Sends a prompt from the composer and waits for its turn to end."""
        turns = self.turn_ids()
        self.type_prompt(text)
        self.wait("the turn to start", lambda: len(self.turn_ids()) > len(turns))
        self.wait("the turn to end", lambda: self.js(
            "const t = [...document.querySelectorAll('#transcript .turn')].pop(); return !!t.querySelector('.turn-end .stop-reason')"))
        if answer:
            self.wait_text(answer)
        self.wait_idle()
        return self.turn_ids()[-1]

    def turn_ids(self):
        return self.js("return [...document.querySelectorAll('#transcript .turn')].map(n => n.dataset.turnId)")

    def turn_button(self, turn_id, css):
        return self.browser.find_element("css selector", f"#transcript .turn[data-turn-id='{turn_id}'] .turn-actions .{css}")

    def text_of(self, element_id):
        return self.js(f"return document.getElementById('{element_id}').textContent")

    def hidden(self, element_id):
        """Not drawn at all (no box), whatever made it so: what the person sees."""
        return self.js(f"return document.getElementById('{element_id}').getClientRects().length === 0")

    def session(self, session_id):
        return self.daemon.call("session.get", {"sessionId": session_id})["session"]

    # ---- scenarios ---------------------------------------------------------------------------------------------

    def test_01_plan_checklist_above_the_composer(self):
        session = self.create_session("Plan")
        self.open_console(session)
        self.assertTrue(self.hidden("plan"), "no plan before the agent reports one")
        self.turn("make a plan", "Answer 1")
        entries = lambda: self.js("return [...document.querySelectorAll('#plan-entries li')].map(li => "
                                  "[li.querySelector('.plan-text').textContent, li.dataset.status, "
                                  "li.querySelector('input').checked, li.querySelector('input').indeterminate])")
        # The plan's second report (the fix done, the tests under way) replaced the first.
        self.wait("the updated plan", lambda: entries() == [["Read the code", "completed", True, False],
                                                             ["Write the fix", "completed", True, False],
                                                             ["Run the tests", "in_progress", False, True]])
        self.assertFalse(self.hidden("plan"))
        self.assertEqual(self.js("return document.querySelector('#plan-entries li').dataset.priority"), "high")
        self.assertTrue(self.js("const p = document.getElementById('plan').getBoundingClientRect(), "
                                "c = document.getElementById('prompt').getBoundingClientRect(); return p.bottom <= c.top"),
                        "the checklist is above the composer")
        self.shot("c01-plan")
        # A page opened later shows it from the session info.
        self.open_console(session)
        self.wait("the plan after a reload", lambda: len(entries()) == 3)

    def test_02_context_meter_in_the_header(self):
        session = self.create_session("Meter")
        self.open_console(session)
        self.assertTrue(self.hidden("context-meter"), "no usage before the agent reports any")
        self.turn("one", "Answer 1")
        self.wait("the meter", lambda: self.text_of("context-text") == "1.2k / 200k tokens (1%) · $0.0125")
        self.assertEqual(self.js("const m = document.getElementById('context-bar'); return [m.value, m.max]"), [1200, 200000])
        self.turn("two", "Answer 2")
        self.wait("the meter rising", lambda: self.text_of("context-text") == "2.4k / 200k tokens (1%) · $0.0250")
        self.assertTrue(self.js("return document.getElementById('session-header').contains(document.getElementById('context-meter'))"))
        self.shot("c02-meter")

    def test_03_slash_commands_palette(self):
        from selenium.webdriver.common.keys import Keys
        session = self.create_session("Commands")
        self.open_console(session)
        self.turn("hello", "Answer 1")  # the agent lists its commands once it has started
        box = self.browser.find_element("id", "prompt")
        shown = lambda: self.js("return document.getElementById('command-palette').hidden ? null : "
                                "[...document.querySelectorAll('#command-palette li[data-command]')].map(n => n.dataset.command)")
        selected = lambda: self.js("const n = document.querySelector('#command-palette li[aria-selected=true]'); return n && n.dataset.command")
        box.send_keys("/")
        self.wait("every command", lambda: shown() == ["review", "release-notes", "explain"])
        self.assertIn("<path>", self.text_of("command-palette"))
        self.assertIn("Review the changes so far", self.text_of("command-palette"))
        box.send_keys("re")
        self.wait("the filtered commands", lambda: shown() == ["review", "release-notes"])
        self.assertEqual(selected(), "review")
        box.send_keys(Keys.ARROW_DOWN)
        self.wait("the second selected", lambda: selected() == "release-notes")
        box.send_keys(Keys.ARROW_DOWN)
        self.wait("round to the first", lambda: selected() == "review")
        self.shot("c03-palette")
        box.send_keys(Keys.ENTER)  # inserts the command; sends nothing
        self.wait("the command inserted", lambda: self.js("return document.getElementById('prompt').value") == "/review ")
        self.assertIsNone(shown())
        self.assertEqual(len(self.turn_ids()), 1, "Enter in the palette must not send")
        box.send_keys("src/main.c" + Keys.ENTER)
        self.wait_text("Ran /review with src/main.c.")
        self.wait_idle()
        # Escape closes the palette, and only it; a name nothing matches says so.
        box.send_keys("/zz")
        self.wait("no match", lambda: "No command starts with /zz" in self.text_of("command-palette"))
        box.send_keys(Keys.ESCAPE)
        self.wait("the palette closed", lambda: shown() is None)
        self.assertEqual(self.js("return document.getElementById('prompt').value"), "/zz")

    def test_04_options_menu_sets_the_effort(self):
        from selenium.webdriver.support.ui import Select
        session = self.create_session("Options")
        self.open_console(session)
        self.turn("hello", "Effort: medium.")
        self.wait("the effort menu", lambda: self.js("const s = document.getElementById('option-effort'); return s && !s.disabled && s.value") == "medium")
        self.assertEqual(self.js("return [...document.getElementById('option-effort').options].map(o => o.value)"), ["low", "medium", "high"])
        self.assertTrue(self.js("return document.querySelector('.composer-tools').contains(document.getElementById('option-effort'))"),
                        "beside model and mode")
        Select(self.browser.find_element("id", "option-effort")).select_by_value("high")
        self.wait("session.setOption reaching the daemon", lambda: [
            o["currentValue"] for o in self.session(session).get("options", []) if o["id"] == "effort"] == ["high"])
        self.turn("again", "Effort: high.")
        self.assertEqual(self.js("return document.getElementById('option-effort').value"), "high")
        self.shot("c04-options")

    def test_05_mcp_servers_and_their_status(self):
        servers = [{"name": "echo", "transport": "stdio", "command": "python3", "args": ["echo.py"], "env": {"SECRET": "x"}},
                   {"name": "broken-search", "transport": "http", "url": "http://127.0.0.1:9/mcp"}]
        session = self.create_session("MCP", mcpServers=servers)
        self.open_console(session)
        chips = lambda: self.js("return [...document.querySelectorAll('#mcp-status .mcp-server')].map(n => [n.dataset.name, n.dataset.status, n.textContent])")
        self.wait("the servers, pending", lambda: [c[:2] for c in chips()] == [["echo", "pending"], ["broken-search", "pending"]])
        self.turn("hello", "Answer 1")
        self.wait("their status", lambda: chips() == [
            ["echo", "connected", "echo: connected (1 tool)"],
            ["broken-search", "failed", "broken-search: failed — the server exited before it answered initialize"]])
        self.assertNotIn("SECRET", self.text_of("session-header"))
        self.shot("c05-mcp")

    def test_06_fork_from_a_turn_opens_the_fork_which_links_its_origin(self):
        origin = self.create_session("Origin")
        self.open_console(origin)
        first = self.turn("first", "Answer 1")
        self.turn("second", "Answer 2")
        self.turn_button(first, "fork-turn").click()
        self.wait("the fork opened", lambda: self.js("return document.querySelector('#session-list li[aria-current=true]')?.dataset.sessionId") not in (None, origin))
        fork = self.js("return document.querySelector('#session-list li[aria-current=true]').dataset.sessionId")
        self.assertEqual(self.session(fork)["forkedFrom"], {"sessionId": origin, "turnId": first})
        self.wait("the origin linked", lambda: not self.hidden("fork-origin") and "forked from Origin" in self.text_of("fork-origin"))
        self.shot("c06-fork")
        # The fork holds the conversation up to the first turn only.
        self.turn("in the fork", "Answer 2 of this conversation")
        self.browser.find_element("id", "fork-origin").click()
        self.wait("the origin opened", lambda: self.js("return document.querySelector('#session-list li[aria-current=true]')?.dataset.sessionId") == origin)
        self.wait("the origin has no origin", lambda: self.hidden("fork-origin"))

    def test_07_rewind_shows_what_it_undoes_then_rewinds_conversation_and_files(self):
        work = self.work_dir("rewind")
        session = self.create_session("Rewind", cwd=work)
        self.open_console(session)
        self.turn("write a.txt one", "Answer 1")
        second = self.turn("write b.txt two", "Answer 2")
        third = self.turn("write a.txt three", "Answer 3")
        def read(name):
            path = os.path.join(work, name)
            if not os.path.exists(path):
                return None
            with open(path) as f:
                return f.read()
        self.assertEqual((read("a.txt"), read("b.txt")), ("three\n", "two\n"))

        # Cancelled: nothing changes.
        self.turn_button(second, "rewind-turn").click()
        self.wait("the rewind dialog", lambda: self.js("return document.getElementById('rewind-dialog').open"))
        self.browser.find_element("id", "rewind-cancel").click()
        self.assertFalse(self.js("return document.getElementById('rewind-dialog').open"))
        self.assertEqual((read("a.txt"), read("b.txt")), ("three\n", "two\n"))

        self.turn_button(second, "rewind-turn").click()
        self.wait("the rewind dialog", lambda: self.js("return document.getElementById('rewind-dialog').open"))
        self.assertEqual(self.js("return [...document.querySelectorAll('#rewind-turns li')].map(n => n.dataset.turnId)"), [second, third])
        self.assertTrue(self.js("return document.getElementById('rewind-both').checked"), "both, by default, where the agent can")
        # The diff that will be undone, turn by turn, before anything is confirmed.
        diff = lambda: self.js("return [...document.querySelectorAll('#rewind-diff .rewind-turn-diff')].map(t => [t.dataset.turnId, "
                               "[...t.querySelectorAll('.file-change')].map(f => [f.dataset.path, f.dataset.status, "
                               "[...f.querySelectorAll('.diff .add, .diff .del')].map(l => l.textContent.trim())])])")
        self.wait("the diff to undo", lambda: diff() == [[second, [["b.txt", "added", ["+two"]]]],
                                                         [third, [["a.txt", "modified", ["-one", "+three"]]]]])
        self.shot("c07-rewind-dialog")
        self.browser.find_element("id", "rewind-confirm").click()
        self.wait("the dialog closed", lambda: not self.js("return document.getElementById('rewind-dialog').open"))
        marked = lambda: self.js("return [...document.querySelectorAll('#transcript .turn')].map(n => "
                                 "[n.dataset.turnId, n.classList.contains('rewound'), n.querySelector('.rewound-marker').textContent])")
        self.wait("the rewound turns marked, not hidden", lambda: [m[1:] for m in marked()] == [
            [False, ""], [True, "rewound: conversation and files"], [True, "rewound: conversation and files"]])
        self.assertEqual((read("a.txt"), read("b.txt")), ("one\n", None))
        self.assertEqual(self.js(f"return document.querySelector(\"#transcript .turn[data-turn-id='{third}'] .turn-actions\").children.length"), 0,
                         "a rewound turn offers no action")
        self.shot("c07-rewound")
        # The conversation went back too; and a page opened later still shows the rewound turns, marked.
        self.turn("after the rewind", "Answer 2 of this conversation")
        self.open_console(session)
        self.wait("the marks after a reload", lambda: [m[1] for m in marked()] == [False, True, True, False])

    def test_08_changes_in_a_turn(self):
        session = self.create_session("Changes")
        self.open_console(session)
        turn = self.turn("write notes.txt hello", "Answer 1")
        self.turn_button(turn, "diff-turn").click()
        self.wait("the diff view", lambda: self.js("return document.getElementById('diff-body').dataset.state") == "loaded")
        files = self.js("return [...document.querySelectorAll('#diff-body .file-change')].map(f => [f.dataset.path, f.dataset.status, "
                        "[...f.querySelectorAll('.diff span')].map(l => [l.className, l.textContent.trimEnd()])])")
        self.assertEqual(len(files), 1)
        path, status, lines = files[0]
        self.assertEqual((path, status), ("notes.txt", "added"))
        self.assertIn(["add", "+hello"], lines)
        self.assertTrue(any(kind == "hunk" for kind, _ in lines), lines)
        self.shot("c08-diff")
        self.browser.find_element("id", "diff-close").click()
        # A turn that changed nothing says so.
        quiet = self.turn("just talk", "Answer 2")
        self.turn_button(quiet, "diff-turn").click()
        self.wait("the empty diff", lambda: self.js("return document.getElementById('diff-body').dataset.state") == "loaded")
        self.assertIn("No file changed.", self.text_of("diff-body"))
        self.browser.find_element("id", "diff-close").click()

    def test_09_a_refused_rewind_or_fork_says_why_and_changes_nothing(self):
        session = self.create_session("Busy")
        self.open_console(session)
        first = self.turn("first", "Answer 1")
        self.type_prompt("slow one")
        self.wait("the slow turn running", lambda: self.state_badge() == "running")
        self.turn_button(first, "rewind-turn").click()
        self.wait("the rewind dialog", lambda: self.js("return document.getElementById('rewind-dialog').open"))
        self.browser.find_element("id", "rewind-conversation").click()
        self.browser.find_element("id", "rewind-confirm").click()
        self.wait("the refusal", lambda: not self.js("return document.getElementById('rewind-error').hidden"))
        self.assertIn("Session busy", self.text_of("rewind-error"))
        self.assertIn("-32022", self.text_of("rewind-error"))
        self.assertTrue(self.js("return document.getElementById('rewind-dialog').open"), "the dialog stays, saying why")
        self.shot("c09-busy")
        self.browser.find_element("id", "rewind-cancel").click()
        # A fork of a running conversation is refused the same way, in the page's notice; no session is made.
        sessions = len(self.daemon.call("session.list", {"limit": 500})["sessions"])
        self.turn_button(first, "fork-turn").click()
        self.wait("the fork's refusal", lambda: not self.hidden("notice") and "Session busy" in self.text_of("notice"))
        self.assertIn("-32022", self.text_of("notice"))
        self.assertEqual(len(self.daemon.call("session.list", {"limit": 500})["sessions"]), sessions)
        self.wait_idle()
        self.assertFalse(self.js("return document.querySelector('#transcript .turn.rewound') !== null"))
        self.assertFalse(any(e["type"] == "session.rewound" for e in self.daemon.events(session)))

    def test_10_compact(self):
        session = self.create_session("Compact")
        self.open_console(session)
        self.turn("hello", "Answer 1")
        self.wait("compact enabled", lambda: self.js("return !document.getElementById('compact-button').disabled"))
        self.browser.find_element("id", "compact-button").click()
        self.wait("compacted", lambda: not self.hidden("agent-status") and self.text_of("agent-status").startswith("compacted"))
        self.assertEqual([e["data"]["status"] for e in self.daemon.events(session) if e["type"] == "agent.status"],
                         ["compacting", "compacted"])

    def test_11_an_agent_without_the_capabilities_shows_them_disabled_or_not_at_all(self):
        session = self.create_session("Bare", agent="controls-bare")
        self.open_console(session)
        first = self.turn("make a plan", "Answer 1")
        self.assertTrue(self.hidden("plan"))
        self.assertTrue(self.hidden("context-meter"))
        self.assertTrue(self.hidden("mcp-status"))
        self.assertTrue(self.js("return document.getElementById('compact-button').disabled"))
        self.assertTrue(self.js("return document.getElementById('option-effort').disabled"))
        self.assertTrue(self.turn_button(first, "fork-turn").get_attribute("disabled") is not None)
        self.browser.find_element("id", "prompt").send_keys("/")
        time.sleep(0.3)
        self.assertTrue(self.hidden("command-palette"), "no palette for an agent without commands")
        self.js("document.getElementById('prompt').value = ''")
        # Files can always go back (the daemon's checkpoints); the conversation only where the agent can.
        self.turn_button(first, "rewind-turn").click()
        self.wait("the rewind dialog", lambda: self.js("return document.getElementById('rewind-dialog').open"))
        self.assertTrue(self.js("return document.getElementById('rewind-conversation').disabled && document.getElementById('rewind-both').disabled"))
        self.assertTrue(self.js("return document.getElementById('rewind-files').checked"))
        self.assertFalse(self.hidden("rewind-no-conversation"))
        self.shot("c11-bare")
        self.browser.find_element("id", "rewind-cancel").click()


if __name__ == "__main__":
    sys.exit(run(ControlsTest, __doc__))
