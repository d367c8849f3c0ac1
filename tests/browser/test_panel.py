"""The web panel in a real browser: Playwright driving Debian's chromium (installed by .ci/run;
Playwright's own browser download is never used) against a real server on loopback.

It opens the panel, finds a finished run and its steps, searches memory and forgets one, and
approves a pending call. Screenshots go to tests/browser/screenshots/ (docs/panel.png in the
README is one of them)."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server._thread import ServerThread

from lar.config import load_config
from lar.engines.scripted import ScriptedEngine
from lar.scheduler import JobStore
from lar.server import Hub, create_app, server_token

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = Path(__file__).parent / "screenshots"
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# Outside CI a machine without chromium skips these (saying so); CI installs it and runs them.
pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists() and not os.environ.get("CI"),
    reason="Debian's chromium is not installed (.ci/run installs it; apt-get install chromium)",
)


def call(name: str, **args: object) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": args}) + "</tool_call>"


@pytest.fixture
def server(lar_home: Path, tmp_path: Path) -> Iterator[tuple[str, Hub, Path]]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    engine = ScriptedEngine(
        [
            call("calculate", expression="17*23"),
            "17 × 23 is 391.",
            call("file_write", path="plan.txt", content="Saturday: hike"),
            "Saved your plan.",
        ]
    )
    hub = Hub(load_config(), engine=engine, memory=True, workspace=workspace)
    assert hub.runner.memory is not None
    store = hub.runner.memory.store
    store.add("The user drinks their coffee black", type="preference")
    store.add("The user's sister lives in Porto", type="fact")
    # A reminder that came due while no server ran: the server's scheduler fires it on start.
    jobs = JobStore(lar_home / "lar.db")
    jobs.add("water the plants", "every 1h", tz="UTC", now=time.time() - 7200)
    jobs.close()
    app = create_app(hub, probe_on_start=False)

    async def broken() -> str:
        raise RuntimeError("bwrap: cannot create a user namespace")

    health = app.fastapi.state.health
    health.capabilities["sandbox"].probe = broken  # a capability down: shown, its tools hidden
    with ServerThread(app) as srv:
        health.self_url = srv.url
        yield srv.url, hub, workspace


def _wait(predicate: Any, what: str, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_the_panel_shows_runs_memory_and_approvals(server: tuple[str, Hub, Path]) -> None:
    url, hub, workspace = server
    token = server_token(hub.config)
    api = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    with api:
        _panel_round(url, hub, workspace, api)


def _panel_round(url: str, hub: Hub, workspace: Path, api: httpx.Client) -> None:
    from playwright.sync_api import expect, sync_playwright

    done = api.post(
        "/v1/chat/completions", json={"messages": [{"role": "user", "content": "What is 17*23?"}]}
    )
    assert done.status_code == 200, done.text
    finished = done.headers["x-lar-run"]
    waiting = api.post("/api/runs", json={"text": "Save my plan: Saturday hike"}).json()["id"]
    _wait(lambda: hub.approvals.pending(), "the approval")
    SHOTS.mkdir(exist_ok=True)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            # the link `lar serve` prints signs the panel in; the token leaves the address
            page.goto(url + "/#token=" + server_token(hub.config))
            expect(page.locator("#signin")).to_be_hidden()
            page.wait_for_function("location.hash === ''")
            # a finished run and its steps
            row = page.locator(f'li[data-run="{finished}"]')
            expect(row).to_contain_text("What is 17*23?")
            expect(row).to_contain_text("succeeded")
            row.click()
            steps = page.locator("#run-steps li")
            expect(steps.filter(has_text="tool calculate")).to_have_count(1)
            expect(steps.filter(has_text="17*23 = 391")).to_have_count(1)
            expect(page.locator("#run-answer")).to_contain_text("391")
            # memory: search, then forget one
            page.fill("#memory-q", "coffee")
            page.click("#memory-form button")
            item = page.locator("#memory-list li", has_text="coffee black")
            expect(item).to_have_count(1)
            page.evaluate("window.scrollTo(0, 0)")
            page.screenshot(path=str(SHOTS / "panel.png"), full_page=True)
            item.locator("button.forget").click()
            expect(page.locator("#memory-list li", has_text="coffee black")).to_have_count(0)
            remaining = [r.content for r in hub.runner.memory.store.records()]  # type: ignore[union-attr]
            assert "The user drinks their coffee black" not in remaining
            assert "The user's sister lives in Porto" in remaining
            page.click("#verify")
            expect(page.locator("#verify-result")).to_contain_text("intact")
            # the pending approval: approve it, and the file is written
            card = page.locator("#approval-list li", has_text="file_write")
            expect(card).to_contain_text("plan.txt")
            card.locator("button.approve").click()
            # the run's end, not the file's appearance: the write may be under way
            _wait(lambda: hub.runs[waiting].done, "the approved run to end")
            assert (workspace / "plan.txt").read_text() == "Saturday: hike"
            expect(page.locator("#approval-list li")).to_have_count(0)
            # the inbox: the reminder the server's scheduler fired, and the job's next time
            expect(
                page.locator("#inbox-list li", has_text="Reminder: water the plants")
            ).to_have_count(1)
            expect(page.locator("#jobs-list li", has_text="water the plants")).to_contain_text(
                "every 1h"
            )
            # health: the failing probe is shown, and its tools are no longer offered
            sandbox = page.locator('li[data-capability="sandbox"]')
            expect(sandbox).to_contain_text("UNAVAILABLE")
            expect(sandbox).to_contain_text("user namespace")
            expect(page.locator('li[data-capability="web"]')).to_contain_text("OK")
            assert {"code_run", "shell"} <= set(hub.hidden)
            # a phone-sized screen shows the same panel
            phone = browser.new_page(viewport={"width": 390, "height": 844})
            phone.goto(url + "/#token=" + server_token(hub.config))
            expect(phone.locator(f'li[data-run="{waiting}"]')).to_contain_text("succeeded")
            width = phone.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, f"the panel is {width}px wide on a 390px screen"
            phone.screenshot(path=str(SHOTS / "panel-phone.png"), full_page=True)
        finally:
            browser.close()


def test_the_panel_asks_for_the_token_and_denies_with_csrf(lar_home: Path, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    token = "tok-browser-test-123456"
    (lar_home / "config.yaml").write_text(f"server:\n  token: {token}\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    engine = ScriptedEngine([call("file_write", path="x.txt", content="no"), "I did not write it."])
    hub = Hub(load_config(), engine=engine, memory=False, workspace=workspace)
    with ServerThread(create_app(hub, probe_on_start=False)) as srv:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=srv.url, headers=headers, timeout=30) as api:
            run = api.post("/api/runs", json={"text": "write x"}).json()["id"]
            _wait(lambda: hub.approvals.pending(), "the approval")
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
                try:
                    page = browser.new_page()
                    page.goto(srv.url + "/")
                    expect(page.locator("#signin")).to_be_visible()
                    page.fill("#token", "wrong")
                    page.click("#signin-form button")
                    expect(page.locator("#signin-error")).to_contain_text("wrong token")
                    page.fill("#token", token)
                    page.click("#signin-form button")
                    expect(page.locator("#signin")).to_be_hidden()
                    card = page.locator("#approval-list li", has_text="file_write")
                    card.locator("button.deny").click()
                    _wait(lambda: hub.runs[run].done, "the denied run to end")
                    assert not (workspace / "x.txt").exists()
                    # a forged request from the page without the CSRF header is refused
                    status = page.evaluate(
                        "fetch('/api/runs', {method: 'POST', headers: {'Content-Type': "
                        "'application/json'}, body: JSON.stringify({text: 'hi'})})"
                        ".then(r => r.status)"
                    )
                    assert status == 403
                finally:
                    browser.close()


ROLE_MANIFEST = """\
name: word-counter
version: 2.0.0
module: tools.py
tools:
  - name: count_word
    function: count
    input: {text: string}
    output: {hits: integer}
probe: {tool: count_word, input: {text: "the the"}, expect: {hits: 3}}
"""
ROLE_FILE = """\
name: counter
version: 1.0.0
role: Counts a word.
capabilities:
  - name: words
    package: word-counter.tar.gz
    degraded: {count_word: read_text}
  - name: documents
    builtin: documents
tools:
  count_word: {input: {text: string}, output: {hits: integer}}
  read_text: {input: {path: string}, output: {status: string}}
states:
  DONE: {final: true}
start: DONE
"""


@pytest.fixture
def installed_role(lar_home: Path, tmp_path: Path) -> None:
    from lar.roles import load_role, pack, runner_for
    from lar.skills import keygen, load_private_key

    keygen(lar_home / "keys")
    src = tmp_path / "word-counter"
    src.mkdir()
    (src / "capability_manifest.yaml").write_text(ROLE_MANIFEST)
    (src / "tools.py").write_text(
        "def count(args):\n    return {'hits': args['text'].count('the')}\n"
    )
    role_dir = lar_home / "roles" / "counter"
    role_dir.mkdir(parents=True)
    pack(
        src,
        load_private_key(lar_home / "keys" / "skills_ed25519"),
        role_dir / "word-counter.tar.gz",
    )
    (role_dir / "agent.yaml").write_text(ROLE_FILE)
    runner_for(load_role(role_dir / "agent.yaml"), lar_home).run("count")


def test_the_panel_shows_roles_and_an_unavailable_capability(
    installed_role: None, server: tuple[str, Hub, Path]
) -> None:
    from playwright.sync_api import expect, sync_playwright

    url, hub = server[0], server[1]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900})
            page.goto(url + "/#token=" + server_token(hub.config))
            role = page.locator('li[data-role="counter"]')
            expect(role).to_contain_text("counter 1.0.0")
            expect(role).to_contain_text("READY")
            expect(role).to_contain_text("last run: completed (DONE)")
            words = page.locator('li[data-role-capability="counter/words"]')
            expect(words).to_contain_text("UNAVAILABLE")
            expect(words).to_contain_text("probe got hits=2 (expected 3)")
            expect(words).to_contain_text("degraded: count_word → read_text")
            expect(page.locator('li[data-role-capability="counter/documents"]')).to_contain_text(
                "AVAILABLE"
            )
        finally:
            browser.close()
