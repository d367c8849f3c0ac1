"""One everyday task through a peer framework: run by ``bench/peers_everyday.py`` with the
peers' own Python (a separate environment, so none of them is a dependency of Lar).

Reads one JSON object on stdin::

    {"peer": "smolagents-tool" | "smolagents-code" | "pydantic-ai",
     "base_url": "http://127.0.0.1:PORT/v1", "model": "...", "request": "...",
     "workspace": "/tmp/...", "home": "/tmp/...", "yes": false, "max_steps": 8,
     "temperature": 0.0, "max_tokens": 512, "memory": ["..."]}

and writes one on stdout: ``answer``, ``model_calls``, ``prompt_tokens``, ``tools`` (the names
called), ``results`` (what each call returned, for the grounding and pasting checks) and
``error`` (empty, or why the run stopped). Every peer gets the same plain tools (``plain_tools``)
with the rule Lar's defaults keep: reading is free, changing a file needs the user's yes.

Standalone on purpose: it imports nothing from Lar, and only the peers' packages.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import sys
import urllib.parse
import urllib.request
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

READ_LIMIT = 20_000
"""Characters a read or a fetched page returns at most (the rest is cut, and it says so)."""
INSTRUCTIONS = (
    "You are a helpful personal assistant on the user's own computer. The user's files are in "
    "the work folder; use the tools to read, list, change files, fetch pages, read the clock, "
    "keep to-dos and reminders and remember things. Answer in the language of the request."
)
REFUSED = (
    "refused: changing files needs the user's permission, which this run does not have; "
    "the user can allow it by running the request again with --yes"
)


def plain_tools(workspace: Path, home: Path, yes: bool, log: list[tuple[str, str]]) -> list[Any]:
    """The tools every peer gets, as plain functions with docstrings (each framework reads
    those); every call and its result is appended to ``log``."""
    root = workspace.resolve()

    def inside(path: str) -> Path:
        target = (root / path).resolve()
        if target != root and root not in target.parents:
            raise ValueError(f"{path!r} is outside the work folder")
        return target

    def logged(fn: Callable[..., str]) -> Callable[..., str]:
        def run(*args: Any, **kwargs: Any) -> str:
            try:
                result = fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the model sees the error, as in Lar
                result = f"error: {exc}"
            log.append((fn.__name__, result))
            return result

        run.__name__, run.__doc__ = fn.__name__, fn.__doc__
        run.__annotations__ = fn.__annotations__
        run.__wrapped__ = fn  # type: ignore[attr-defined]  # signature() reads the parameters
        return run

    def store(name: str) -> tuple[Path, list[Any]]:
        path = home / f"{name}.json"
        return path, json.loads(path.read_text()) if path.exists() else []

    def keep(path: Path, items: list[Any]) -> None:
        part = path.with_suffix(".part")  # whole or not at all: tools may run side by side
        part.write_text(json.dumps(items, ensure_ascii=False))
        part.replace(path)

    def read_file(path: str) -> str:
        """Read a text file in the work folder.

        Args:
            path: The file's path, relative to the work folder.
        """
        text = inside(path).read_text(encoding="utf-8", errors="replace")
        if len(text) > READ_LIMIT:
            return text[:READ_LIMIT] + f"\n[cut: {len(text)} characters in all]"
        return text

    def list_folder(path: str = ".", recursive: bool = False) -> str:
        """List a folder of the work folder: each entry with its size in bytes.

        Args:
            path: The folder, relative to the work folder ("." is the work folder).
            recursive: Whether to list the folders inside too.
        """
        folder = inside(path)
        entries = sorted(folder.rglob("*") if recursive else folder.iterdir())
        lines = []
        for entry in entries[:500]:
            name = entry.relative_to(folder).as_posix()
            if entry.is_dir():
                lines.append(f"{name}/")
            else:
                lines.append(f"{name}\t{entry.stat().st_size} bytes")
        return "\n".join(lines) or "(empty folder)"

    def write_file(path: str, content: str, append: bool = False) -> str:
        """Write a text file in the work folder (creating it), or add to its end.

        Args:
            path: The file's path, relative to the work folder.
            content: The text to write.
            append: Whether to add the text at the end instead of replacing the file.
        """
        if not yes:
            return REFUSED
        target = inside(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a" if append else "w", encoding="utf-8") as out:
            out.write(content)
        return f"{'appended to' if append else 'wrote'} {path} ({len(content)} characters)"

    def rename_file(path: str, new_path: str) -> str:
        """Rename or move a file or folder within the work folder.

        Args:
            path: The current path, relative to the work folder.
            new_path: The new path, relative to the work folder.
        """
        if not yes:
            return REFUSED
        target = inside(new_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        inside(path).rename(target)
        return f"renamed {path} to {new_path}"

    def delete_file(path: str) -> str:
        """Delete a file or folder in the work folder.

        Args:
            path: The path, relative to the work folder.
        """
        if not yes:
            return REFUSED
        target = inside(path)
        if target == root:
            raise ValueError("the work folder itself is not deleted")
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
        return f"deleted {path}"

    def fetch_url(url: str) -> str:
        """Fetch a web page on this computer (http://127.0.0.1 or localhost) as text.

        Args:
            url: The page's address.
        """
        host = urllib.parse.urlsplit(url).hostname or ""
        if host not in ("127.0.0.1", "localhost"):
            raise ValueError(f"{host or url!r} is not on this computer (offline)")
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - loopback only
            page = response.read(2_000_000).decode("utf-8", errors="replace")
        text = re.sub(r"(?is)<(script|style)\b.*?</\1>|<[^>]+>", " ", page)
        text = re.sub(r"[ \t]+", " ", html.unescape(text))
        text = re.sub(r"\s*\n\s*", "\n", text).strip()
        return text[:READ_LIMIT]

    def current_time(zone: str = "") -> str:
        """The current date and time, here or in a named time zone.

        Args:
            zone: An IANA time zone such as "Europe/Lisbon"; empty for this computer's.
        """
        try:
            now = datetime.now(ZoneInfo(zone)) if zone else datetime.now().astimezone()
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"no time zone {zone!r}") from None
        return now.strftime("%Y-%m-%d %H:%M %Z (%A)")

    def add_todo(text: str) -> str:
        """Add an item to the user's to-do list.

        Args:
            text: The to-do.
        """
        path, items = store("todos")
        items.append(text)
        keep(path, items)
        return f"added to-do {len(items)}: {text}"

    def list_todos() -> str:
        """The user's to-do list."""
        _, items = store("todos")
        return "\n".join(f"{n}. {t}" for n, t in enumerate(items, 1)) or "(no to-dos)"

    def add_reminder(text: str, when: str) -> str:
        """Remind the user of something at a time.

        Args:
            text: What to remind of.
            when: When, as "YYYY-MM-DD HH:MM".
        """
        at = datetime.strptime(when.strip(), "%Y-%m-%d %H:%M")
        path, items = store("reminders")
        items.append({"text": text, "at": at.isoformat()})
        keep(path, items)
        return f"reminder set for {at:%Y-%m-%d %H:%M}: {text}"

    def remember(text: str) -> str:
        """Store something about the user for later.

        Args:
            text: The fact to keep.
        """
        path, items = store("memory")
        items.append(text)
        keep(path, items)
        return "remembered"

    def recall(query: str) -> str:
        """What was stored about the user that shares words with the query.

        Args:
            query: What to look for.
        """
        _, items = store("memory")
        words = set(re.findall(r"\w+", query.casefold()))
        hits = [t for t in items if words & set(re.findall(r"\w+", t.casefold()))]
        return "\n".join(hits) or "(nothing stored matches)"

    tools = [read_file, list_folder, write_file, rename_file, delete_file, fetch_url,
             current_time, add_todo, list_todos, add_reminder, remember, recall]  # fmt: skip
    return [logged(fn) for fn in tools]


def _smolagents(task: dict[str, Any], tools: list[Any], calls: dict[str, int]) -> str:
    import smolagents

    class Counted(smolagents.OpenAIServerModel):  # type: ignore[misc]
        def generate(self, *args: Any, **kwargs: Any) -> Any:
            message = super().generate(*args, **kwargs)
            calls["model_calls"] += 1
            usage = getattr(message, "token_usage", None)
            calls["prompt_tokens"] += getattr(usage, "input_tokens", 0) or 0
            return message

    model = Counted(
        model_id=task["model"],
        api_base=task["base_url"],
        api_key="local",
        temperature=task["temperature"],
        max_tokens=task["max_tokens"],
    )
    wrapped = [smolagents.tool(fn) for fn in tools]
    code = task["peer"] == "smolagents-code"
    kind = smolagents.CodeAgent if code else smolagents.ToolCallingAgent
    agent = kind(
        tools=wrapped,
        model=model,
        instructions=INSTRUCTIONS,
        max_steps=task["max_steps"],
        verbosity_level=smolagents.LogLevel.OFF,
    )
    return str(agent.run(task["request"]))


def _pydantic_ai(task: dict[str, Any], tools: list[Any], calls: dict[str, int]) -> str:
    from pydantic_ai import Agent
    from pydantic_ai.exceptions import UsageLimitExceeded
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    provider = OpenAIProvider(base_url=task["base_url"], api_key="local")
    model = OpenAIChatModel(task["model"], provider=provider)
    agent = Agent(model, tools=tools, instructions=INSTRUCTIONS)
    settings = {"temperature": task["temperature"], "max_tokens": task["max_tokens"]}
    try:
        result = agent.run_sync(
            task["request"],
            model_settings=settings,  # type: ignore[arg-type]
            usage_limits=UsageLimits(request_limit=task["max_steps"]),
        )
    except UsageLimitExceeded:
        calls["model_calls"] += task["max_steps"]
        raise
    usage = result.usage()
    calls["model_calls"] += usage.requests
    calls["prompt_tokens"] += usage.input_tokens or 0
    return str(result.output)


PEERS = {
    "smolagents-tool": _smolagents,
    "smolagents-code": _smolagents,
    "pydantic-ai": _pydantic_ai,
}


def main() -> int:
    task = json.loads(sys.stdin.read())
    home = Path(task["home"])
    if task.get("memory"):
        (home / "memory.json").write_text(json.dumps(task["memory"]))
    log: list[tuple[str, str]] = []
    calls = {"model_calls": 0, "prompt_tokens": 0}
    tools = plain_tools(Path(task["workspace"]), home, bool(task["yes"]), log)
    answer, error = "", ""
    try:
        answer = PEERS[task["peer"]](task, tools, calls)
    except Exception as exc:  # noqa: BLE001 - a peer's failure is a result, reported as such
        error = f"{type(exc).__name__}: {exc}"
        answer = f"[run failed: {error}]"
    out = {**calls, "answer": answer, "error": error,
           "tools": [name for name, _ in log],
           "results": [result for _, result in log]}  # fmt: skip
    sys.stdout.write(json.dumps(out, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
