"""The service end to end in a real browser (Debian's chromium through playwright), on SQLite and on PostgreSQL.

A panel member signs in and creates an assessment; a candidate opens their link, edits in
the editor (CodeMirror), runs the checks and reads the scorecard, reloads (the text is still
there), and hands in; the panel's page, open all along and never reloaded, shows the graded
result. Every request either page makes goes to the server itself: anything else is blocked
and recorded, and none is made. Gradings run in the local sandbox on the toy exercise.
"""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from tests.conftest import TOY  # noqa: E402
from tests.serve_fixtures import PASSWORD  # noqa: E402
from tests.test_panel_browser import browser  # noqa: E402,F401

pytestmark = pytest.mark.slow
SOLUTION = (TOY / "solution.py").read_text()
TIMEOUT_MS = 180_000


class Recorded:
    """A browser context whose every request is recorded, and blocked unless it is for ``origin``."""

    def __init__(self, browser, origin: str):
        self.context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.elsewhere: list[str] = []

        def route(r):
            if r.request.url.startswith(origin + "/"):
                r.continue_()
            else:
                self.elsewhere.append(r.request.url)
                r.abort()

        self.context.route("**/*", route)
        self.page = self.context.new_page()
        self.page.set_default_timeout(TIMEOUT_MS)


def test_a_take_home_from_invite_to_graded_result_in_a_browser(browser, served):
    from playwright.sync_api import expect

    server, _ = served
    panel = Recorded(browser, server.url)
    p = panel.page
    p.goto(server.url + "/")
    p.fill("input[name=name]", "pat")
    p.fill("input[name=password]", PASSWORD)
    p.click("button[type=submit]")
    p.click("text=New assessment")
    p.fill("input[name=title]", "Platform team take-home")
    p.check("input[name=exercises][value=toy]")
    p.select_option("select[name=sandbox]", "local")
    p.click("button:has-text('Create')")
    p.fill("textarea[name=names]", "Ada Lovelace")
    p.click("button:has-text('Invite')")
    link = p.input_value("input.link-url")
    p.evaluate("window.__not_reloaded = true")

    candidate = Recorded(browser, server.url)
    c = candidate.page
    c.goto(link)
    assert "/take" in c.url and "/c/" not in c.url  # the token left the address bar
    c.click("#start")
    c.click("text=Toy: scale a tensor")
    c.wait_for_selector(".CodeMirror")
    assert "Write" in c.inner_text(".readme")
    c.evaluate("text => window.graderEditor.setValue(text)", SOLUTION)
    c.click(".CodeMirror")
    c.keyboard.press("Control+End")
    c.keyboard.type("\n# typed in the browser\n")
    expect(c.locator("#saved")).to_have_text("saved", timeout=30_000)
    c.click("#run")
    c.wait_for_selector("#scorecard:not([hidden])")
    assert "graded" in c.inner_text("#run-state")
    card = c.frame_locator("#scorecard")
    expect(card.locator("text=Scales a small tensor").first).to_be_visible()  # waits for the frame to load
    assert card.locator(".score").get_attribute("aria-label") == "Score 3 out of 3"  # the visible checks only
    assert card.locator("text=Scales any vector").count() == 0  # the hidden check: not run, not named

    c.reload()
    c.wait_for_selector(".CodeMirror")
    assert "# typed in the browser" in c.evaluate("window.graderEditor.getValue()")

    c.goto(server.url + "/take")
    c.on("dialog", lambda d: d.accept())
    c.click("#hand-in")
    c.wait_for_selector("#handed-in")

    p.wait_for_selector("tr[data-state='graded'] .status-graded a", timeout=TIMEOUT_MS)
    row = p.inner_text("tr[data-state='graded']")
    assert "Ada Lovelace" in row and "6/6" in row
    assert p.evaluate("window.__not_reloaded") is True  # updated by server-sent events, not a reload
    p.click("tr[data-state='graded'] .status-graded a")  # the hand-in's panel scorecard
    assert "Ada Lovelace" in p.content()
    assert panel.elsewhere == [] and candidate.elsewhere == []
