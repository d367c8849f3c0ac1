"""web_scan against a loopback page; notes and todo persisted in the Lar database."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lar.codes import Code
from lar.tools.base import ToolContext
from lar.tools.builtin import notes, todo, web_scan
from lar.tools.builtin.web import simplify_html
from lar.tools.executor import ToolExecutor
from lar.types import ToolCall

PAGE = b"""<!doctype html><html><head><title>Lar test page</title>
<style>body { color: red }</style><script>alert('x')</script></head>
<body><nav><a href="/home">Home</a></nav>
<h1>Local agents</h1><p>Small models   can call tools.</p>
<ul><li>fast</li><li>private</li></ul>
<p>Read <a href="/docs/intro">the intro</a>.</p></body></html>"""


@pytest.fixture
def site() -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/missing":
                self.send_response(404)
                self.end_headers()
                return
            if self.path.startswith("/bounce"):  # /bounce?to=URL
                self.send_response(302)
                self.send_header("Location", self.path.split("to=", 1)[1])
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_simplified_text_keeps_content_and_links_not_scripts(site: str) -> None:
    text = web_scan(f"{site}/page")
    assert text.splitlines()[0] == "# Lar test page"
    assert "# Local agents" in text and "Small models can call tools." in text
    assert "- fast" in text and "- private" in text
    assert f"the intro ({site}/docs/intro)" in text
    assert "alert" not in text and "color: red" not in text


def test_through_the_executor_local_addresses_need_a_yes(site: str, tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path)
    call = ToolCall("c", "web_scan", {"url": f"{site}/page"})
    denied = asyncio.run(ToolExecutor([web_scan]).run(call, ctx))
    assert denied.error is not None and denied.error.code == "denied"
    allowed = asyncio.run(ToolExecutor([web_scan], approver=lambda c, t: True).run(call, ctx))
    assert allowed.ok and "Local agents" in allowed.content
    missing = ToolCall("c", "web_scan", {"url": f"{site}/missing"})
    r = asyncio.run(ToolExecutor([web_scan], approver=lambda c, t: True).run(missing, ctx))
    assert r.error is not None and "404" in r.error.detail
    file_url = ToolCall("c", "web_scan", {"url": "file:///etc/passwd"})
    r = asyncio.run(ToolExecutor([web_scan], approver=lambda c, t: True).run(file_url, ctx))
    assert r.error is not None and r.error.code == "refused"


def test_an_address_nothing_answers_on_says_so_plainly(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a loopback port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    call = ToolCall("c", "web_scan", {"url": f"http://127.0.0.1:{port}/page"})
    ctx = ToolContext(workspace=tmp_path)
    r = asyncio.run(ToolExecutor([web_scan], approver=lambda c, t: True).run(call, ctx))
    assert r.error is not None and r.error.code == Code.NOT_POSSIBLE
    assert "could not reach 127.0.0.1" in r.error.detail and "no network" in r.error.detail


def test_a_page_that_could_not_be_reached_ends_the_run_on_lar_s_account(tmp_path: Path) -> None:
    """What the model would say after a failed fetch (weather it never read) is not the answer:
    the account of what was not read is, with no model call after it."""
    import json
    import socket

    from lar import Agent
    from lar.engines.scripted import ScriptedEngine

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/weather"
    step = json.dumps({"name": "web_scan", "arguments": {"url": url}})
    engine = ScriptedEngine([f"<tool_call>\n{step}\n</tool_call>", "It is sunny and 24 °C."])
    agent = Agent(engine=engine, tools=[web_scan], workspace=tmp_path, approver=lambda c, t: True)
    result = agent.run(f"What is the weather now, as {url} says?")
    assert result.text.startswith("Lar could not reach 127.0.0.1") and "sunny" not in result.text
    kinds = [type(e).__name__ for e in result.events]
    assert "ModelCalled" not in kinds[kinds.index("ToolCallFinished") :]


def test_simplify_collapses_whitespace() -> None:
    assert simplify_html("<p>a\n\n   b</p><p></p><div>c</div>") == "a b\nc"


def test_simplify_keeps_a_tables_cells_apart_and_a_title_once() -> None:
    import random

    rng = random.Random(5)
    rows = [(f"item{i}", f"{rng.randint(1, 99)},{rng.randint(10, 99)} €") for i in range(6)]
    cells = "".join(f"<tr><td>{a}</td><td>{b}</td></tr>" for a, b in rows)
    html = f"<title>Shop</title><h1>Shop</h1><table><tr><th>x</th><th>y</th></tr>{cells}</table>"
    text = simplify_html(html)
    low = min(rows, key=lambda r: Decimal(r[1][:-2].replace(",", ".")))
    high = max(rows, key=lambda r: Decimal(r[1][:-2].replace(",", ".")))
    assert text.splitlines() == [
        "# Shop",
        "x | y",
        *(f"{a} | {b}" for a, b in rows),
        # the rows with data, counted once, and the lowest and highest figure of a column:
        # no counting or comparing left to the model
        f"[table: 6 rows; lowest y: {low[0]} ({low[1]}); highest y: {high[0]} ({high[1]})]",
    ]
    hidden = simplify_html("<form><table><tr><td>a</td></tr></table></form><p>b</p>")
    assert hidden == "b"  # what is not shown is not counted
    other = simplify_html("<title>Shop</title><h1>Welcome</h1><p>hi</p>")
    assert other.splitlines() == ["# Shop", "# Welcome", "hi"]


@pytest.mark.parametrize(
    "shape",
    [
        "{i},{c:02d} €",
        "${i:,}.{c:02d}",
        "¥{i}.{c:02d}",
        "{i:,} kr".replace(",", "_"),
        "{i}.{c:02d} CHF",
    ],
)
def test_a_tables_lowest_and_highest_figures_are_named_by_their_row(shape: str) -> None:
    import random

    from lar.tools.builtin.tables import table_summary

    rng = random.Random(hash(shape) % 1000)
    for _ in range(20):
        n = rng.randint(2, 9)
        cents = rng.sample(range(100, 900_000), n)

        def cell(v: int) -> str:
            text = shape.format(i=v // 100, c=v % 100)
            return text.replace("_", ".") if "kr" in shape else text  # 1.234 kr: a point groups

        rows = [[f"item{k}", f"note {'abcdefghi'[k]}", cell(v)] for k, v in enumerate(cents)]
        key = (lambda v: v // 100) if "kr" in shape else (lambda v: v)
        lo = min(range(n), key=lambda k: key(cents[k]))
        hi = max(range(n), key=lambda k: key(cents[k]))
        if [key(v) for v in cents].count(key(cents[lo])) > 1 or [key(v) for v in cents].count(
            key(cents[hi])
        ) > 1:
            continue  # a tie names every row: checked below
        said = table_summary(rows, ["Item", "Note", "Price"])
        assert said == [
            f"lowest Price: item{lo} ({rows[lo][2]}); highest Price: item{hi} ({rows[hi][2]})"
        ], (rows, said)
    tie = [["a", "5,00 €"], ["b", "5,00 €"], ["c", "7,10 €"]]
    assert table_summary(tie) == [
        "lowest column 2: a (5,00 €), b (5,00 €); highest column 2: c (7,10 €)"
    ]
    assert table_summary([["2024", "5"], ["2025", "6"]]) == []  # rows named by a figure
    assert table_summary([["a", "5 or 6"], ["b", "7"]]) == []  # two numbers in a cell
    assert table_summary([["a", "5"]]) == []  # one row: nothing to compare


def test_notes_and_todo_persist(tmp_path: Path) -> None:
    ctx = ToolContext(workspace=tmp_path, home=tmp_path / "home")
    assert notes("add", ctx, text="Anna likes tea") == "added note 1: Anna likes tea"
    assert todo("add", ctx, text="buy milk") == "added todo 2: buy milk"
    assert todo("add", ctx, text="call Anna") == "added todo 3: call Anna"
    assert todo("done", ctx, item=2) == "todo 2 done: buy milk"  # the result says what
    fresh = ToolContext(workspace=tmp_path, home=tmp_path / "home")  # another session
    assert todo("list", fresh) == "2. [x] buy milk\n3. [ ] call Anna"
    assert notes("list", fresh) == "1. Anna likes tea"
    with pytest.raises(ValueError, match="no todo item 1"):
        todo("remove", fresh, item=1)  # item 1 is a note, not a todo
    with pytest.raises(ValueError, match="needs the item number"):
        todo("done", fresh)
    assert todo("remove", fresh, item=3) == "todo 3 removed: call Anna"
    assert todo("list", fresh) == "2. [x] buy milk"
    assert oct((tmp_path / "home" / "lar.db").stat().st_mode)[-3:] == "600"


def test_a_redirect_to_a_local_address_is_not_followed_without_a_yes(
    site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tests reach only loopback, so 127.0.0.1 plays the public site and localhost the user's
    own service: the redirect target is checked as the first URL was."""
    from lar.tools.builtin import web

    real = web.is_local
    monkeypatch.setattr(web, "is_local", lambda host: host != "127.0.0.1" and real(host))
    port = site.rsplit(":", 1)[1]
    inner = f"http://localhost:{port}/internal-token"
    executor = ToolExecutor([web_scan], approver=lambda c, t: False)  # the user says no
    try:
        r = asyncio.run(
            executor.run(
                ToolCall("c", "web_scan", {"url": f"{site}/bounce?to={inner}"}),
                ToolContext(workspace=tmp_path),
            )
        )
        assert not r.ok and "redirects to a local or private address" in r.content
        assert "Local agents" not in r.content  # the internal page was not fetched
        direct = asyncio.run(
            executor.run(ToolCall("d", "web_scan", {"url": inner}), ToolContext(workspace=tmp_path))
        )
        assert not direct.ok and "did not allow" in direct.content  # asked, and denied
    finally:
        executor.close()
    # A public page redirecting to another public page is followed.
    assert "# Lar test page" in web_scan(f"{site}/bounce?to={site}/page")
