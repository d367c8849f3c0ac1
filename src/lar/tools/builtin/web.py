"""web_scan (B1): a web page as short, readable text (title, headings, paragraphs, links)."""

from __future__ import annotations

import ipaddress
import re
import socket
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlparse

import httpx

from lar.tools.base import NotPossibleHere, ToolContext, tool
from lar.tools.builtin.tables import table_summary
from lar.tools.danger import Verdict

__all__ = ["web_scan", "simplify_html"]

_SKIP = {"script", "style", "noscript", "svg", "template", "head", "iframe", "form"}
_BLOCK = {
    "p",
    "div",
    "section",
    "article",
    "main",
    "br",
    "tr",
    "table",
    "ul",
    "ol",
    "pre",
    "blockquote",
    "header",
    "footer",
    "nav",
    "aside",
}
_MAX_BYTES = 2 * 1024 * 1024
_SPACE = re.compile(r"\s+")


class _Simplifier(HTMLParser):
    def __init__(self, base: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base = base
        self.parts: list[str] = []
        self.skip = 0
        self.title = ""
        self.in_title = False
        self.href: str | None = None
        self.link_text: list[str] = []
        self.cells = 0  # cells begun in this table row: the next is set off with " | "
        self.rows: list[int] = []  # per open table: its rows with a data cell (td)
        self.row_has_data = False
        self.grid: list[list[tuple[list[str], bool]]] = []  # per open table: (cells, has td)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self.in_title = True
        if tag in _SKIP:
            self.skip += 1
        elif tag in ("h1", "h2", "h3", "h4"):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag in ("td", "th"):
            # cells run together otherwise: "apple$86.85", "Leiter2,25 €"
            self.parts.append(" | " if self.cells else "")
            self.cells += 1
            if self.grid and self.grid[-1]:
                cells, data = self.grid[-1][-1]
                self.grid[-1][-1] = ([*cells, ""], data or tag == "td")
            if tag == "td" and self.rows and not self.row_has_data:
                self.rows[-1] += 1  # a row counts once, by its first data cell
                self.row_has_data = True
        elif tag in _BLOCK:
            self.cells = 0 if tag in ("tr", "table") else self.cells
            self.row_has_data = False if tag in ("tr", "table") else self.row_has_data
            if tag == "table":
                self.rows.append(0)
                self.grid.append([])
            elif tag == "tr" and self.grid:
                self.grid[-1].append(([], False))
            self.parts.append("\n")
        elif tag == "a":
            href = dict(attrs).get("href")
            if href and not href.startswith(("#", "javascript:")):
                self.href = urljoin(self.base, href)
                self.link_text = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag == "a" and self.href is not None:
            text = " ".join("".join(self.link_text).split())
            if text:
                self.parts.append(f" ({self.href})")
            self.href = None
        elif tag == "table" and self.rows:
            rows = self.rows.pop()  # said once, so "how many are listed" needs no counting
            grid = self.grid.pop() if self.grid else []
            head = next((cells for cells, data in grid if cells and not data), None)
            summary = table_summary([cells for cells, data in grid if data], head)
            said = "".join(f"; {line}" for line in summary)
            self.parts.append(
                f"\n[table: {rows} row{'' if rows == 1 else 's'}{said}]\n"
                if rows and not self.skip
                else "\n"
            )
        elif tag in _BLOCK or tag in ("h1", "h2", "h3", "h4"):
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
            return
        if self.skip:
            return
        data = _SPACE.sub(" ", data)  # in HTML a newline in text is just a space
        self.parts.append(data)
        if self.grid and self.grid[-1] and self.grid[-1][-1][0]:
            self.grid[-1][-1][0][-1] += data
        if self.href is not None:
            self.link_text.append(data)


def simplify_html(html: str, base: str = "") -> str:
    parser = _Simplifier(base)
    parser.feed(html)
    parser.close()
    lines = []
    for raw in "".join(parser.parts).splitlines():
        line = " ".join(raw.split())
        if line and line not in ("-", "#"):
            lines.append(line)
    title = " ".join(parser.title.split())
    shown = title and not (lines and lines[0] == f"# {title}")  # a heading that repeats it
    return (f"# {title}\n" if shown else "") + "\n".join(lines)


def _url_danger(args: dict[str, Any], ctx: ToolContext) -> Verdict:
    """Local and private addresses need a yes: a page must not reach the user's own services."""
    url = urlparse(str(args.get("url", "")))
    if url.scheme not in ("http", "https"):
        return Verdict("refuse", [f"only http and https URLs can be scanned (got {url.scheme!r})"])
    host = url.hostname or ""
    if is_local(host):
        return Verdict("confirm", [f"reaches a local or private network address ({host})"])
    return Verdict("ok")


def is_local(host: str) -> bool:
    """Whether ``host`` resolves to a loopback, private or link-local address."""
    try:
        infos = socket.getaddrinfo(host, None)
        addresses = {ipaddress.ip_address(str(i[4][0]).split("%")[0]) for i in infos}
    except (OSError, ValueError):
        return False  # unresolvable: the fetch itself will fail with a clear error
    return any(a.is_loopback or a.is_private or a.is_link_local for a in addresses)


_MAX_REDIRECTS = 5
_MAX_CHARS = 4000
"""Text kept of a page. Not an argument: the 1.5B copied ``max_chars=4000`` into other tools'
calls, where it broke them."""


class Unreachable(NotPossibleHere, ConnectionError):
    """No answer from the address: retried as a network failure, then the tool's account is
    the answer (``NotPossibleHere``). The 1.5B, its fetch failed, answered "sunny and warm" and
    exchange rates of its own; the account says what was not read, in the request's language."""


@tool(
    timeout_s=20,
    determinism="nondeterministic",
    danger=_url_danger,
    broad=True,
    reads_outside=True,
    read_only=True,
)
def web_scan(url: str) -> str:
    """Fetch a web page as simple text with its links.

    Args:
        url: An http or https URL.
    """
    # Redirects are followed by hand: each target is checked as the first URL was, so a public
    # page cannot bounce the fetch to the user's own services without a yes.
    local_ok = is_local(urlparse(url).hostname or "")  # the first URL was confirmed if local
    try:
        kind, text, final = _fetch(url, local_ok)
    except httpx.ConnectError as exc:
        host = urlparse(url).hostname or url
        raise Unreachable(
            f"Lar could not reach {host} ({exc}): this machine may have no network, or the "
            "address is wrong, so that page was not read and what it says now is not known "
            "here."
        ) from None
    if "html" in kind or text.lstrip().lower().startswith(("<!doctype html", "<html")):
        text = simplify_html(text, final)
    limit = _MAX_CHARS
    if len(text) > limit:
        text = text[:limit] + f"\n[page truncated: {len(text) - limit} more characters]"
    return text


def _fetch(url: str, local_ok: bool) -> tuple[str, str, str]:
    """The page's content type, text and final URL, redirects followed by hand."""
    headers = {"User-Agent": "lar/0.1 (web_scan)"}
    with httpx.Client(follow_redirects=False, timeout=15.0) as client:
        for _ in range(_MAX_REDIRECTS + 1):
            with client.stream("GET", url, headers=headers) as response:
                if response.is_redirect and "location" in response.headers:
                    target = str(response.url.join(response.headers["location"]))
                    parsed = urlparse(target)
                    if parsed.scheme not in ("http", "https"):
                        raise PermissionError(f"{url} redirects to {target}: not http(s)")
                    if not local_ok and is_local(parsed.hostname or ""):
                        raise PermissionError(
                            f"{url} redirects to a local or private address ({target}); not "
                            "followed. Scan that URL directly if it is meant (the user is asked)"
                        )
                    url = target
                    continue
                response.raise_for_status()
                body = bytearray()
                for chunk in response.iter_bytes():
                    body.extend(chunk)
                    if len(body) > _MAX_BYTES:
                        break
                kind = response.headers.get("content-type", "")
                text = bytes(body).decode(response.encoding or "utf-8", errors="replace")
                break
        else:
            raise RuntimeError(f"more than {_MAX_REDIRECTS} redirects; stopped at {url}")
    return kind, text, str(response.url)
