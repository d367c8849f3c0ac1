"""The everyday suite: personal-assistant tasks run end to end, each in a workspace of its own,
with the built-in tools, and scored on what a user would check.

A task file is YAML, a list of tasks::

    - id: files-sum                      # unique in the suite
      category: files
      language: en                         # the request's language (optional)
      request: Read numbers.txt and tell me the sum.
      files: {numbers.txt: "12.5\\n7.25\\n"}  # the workspace before the run
      pages: {/menu.html: "<html>…"}        # served on 127.0.0.1; {base} in the request
      memory: ["I prefer green tea"]         # the user's memories before the run
      allow: true                    # the user allows calls that need a yes (default: no)
      expect:
        has: ["19.75", ["4.5", "4,5"]]  # every one of these in the answer (case-insensitive);
                                        # one that is a list: any one of its texts
        has_any: ["can't", "cannot"]  # at least one of these
        lacks: ["20"]           # none of these
        no_new_figures: true    # no figure the request did not hold
        files: {out.md: ["milk"]}     # the file exists and holds each text
        absent: ["out.md"]      # these files do not exist
        unchanged: true         # no file of the workspace changed

A wanted number is found as a figure of its own (``_holds``): wanted with a decimal point
("1,234.5"), the answer's figures are read with one; wanted with a decimal comma ("1234,5",
"1.234,5", "1 234,5"), they are read with a comma. A group under ``has`` lists the ways the
request's language may write one value, so an answer written in any of them passes. Nothing
here reaches beyond 127.0.0.1; every run is bounded by the agent's ``max_turns``."""

from __future__ import annotations

import http.server
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from lar.agents import pasted
from lar.errors import LarError

__all__ = [
    "EverydayRunner",
    "Prepared",
    "SuiteError",
    "Task",
    "TaskResult",
    "load_tasks",
    "pasted",
    "in_english",
    "judge",
    "prepared",
    "score",
    "ungrounded",
]

_EXPECT_KEYS = {"has", "has_any", "lacks", "no_new_figures", "files", "absent", "unchanged"}
_TASK_KEYS = {
    "id", "category", "language", "request", "files", "pages", "memory", "allow", "expect"
}  # fmt: skip
_LISTS = ("has", "has_any", "lacks", "absent")
_FIGURE = re.compile(r"\d+(?:[.,]\d+)*")


FILES_TIME = 1_767_261_600.0
"""The modification time of a task's files and folders (2026-01-01 10:00 UTC): listings and
reads show it, so with the clock's time a task's prompt, and what the model does, would differ
from one run to the next."""


class SuiteError(LarError):
    """A task file that breaks the format: names the file, the task and the key."""


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    category: str
    request: str
    expect: dict[str, Any]
    files: dict[str, str] = field(default_factory=dict)
    pages: dict[str, str] = field(default_factory=dict)
    memory: list[str] = field(default_factory=list)
    yes: bool = False
    source: str = field(default="", compare=False)
    """The file the task was read from: where it is, not what it is, so not compared."""
    language: str = ""
    """The request's language ("en", "pt", ...); empty where a suite does not say."""


@dataclass(slots=True)
class TaskResult:
    task: Task
    passed: bool
    answer: str
    failures: list[str]
    model_calls: int
    prompt_tokens: int
    wall_s: float
    tools: list[str]
    events: list[str] = field(default_factory=list)
    """The codes of the run's notices (policies that spoke, answers checked)."""
    ungrounded: list[str] = field(default_factory=list)
    """Figures of the answer found neither in the request nor in any tool result of the run
    (``ungrounded``): worked out in prose or made up, right or wrong."""
    pasted: bool = False
    """The answer is a tool's output (``pasted``), not an answer built from it: a failure."""
    english: bool = False
    """An answer in English to a request in another language (``in_english``): a failure."""
    calls: list[str] = field(default_factory=list)
    """The calls as the model made them (``call_text``, 300 characters at most each): what a
    failure was built from, readable without running the task again."""
    policies: list[str] = field(default_factory=list)
    """The policies that spoke in the run, once each: the ones whose ablation can change it."""

    def row(self) -> dict[str, Any]:
        return {
            "id": self.task.id,
            "category": self.task.category,
            "language": self.task.language,
            "passed": self.passed,
            "answer": self.answer,
            "failures": self.failures,
            "model_calls": self.model_calls,
            "prompt_tokens": self.prompt_tokens,
            "wall_s": round(self.wall_s, 2),
            "tools": self.tools,
            "notices": self.events,
            "ungrounded": self.ungrounded,
            "pasted": self.pasted,
            "english": self.english,
            "calls": self.calls,
            "policies": self.policies,
        }


def load_tasks(path: Path) -> list[Task]:
    """The tasks of one YAML file; a malformed one stops with the file, task and key."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise SuiteError(f"{path}: cannot read the task file: {exc}") from None
    if not isinstance(raw, list):
        raise SuiteError(f"{path}: a task file is a YAML list of tasks")
    tasks, seen = [], set()
    for n, item in enumerate(raw, 1):
        where = f"{path}: task {n}"
        if not isinstance(item, dict):
            raise SuiteError(f"{where}: a task is a mapping")
        unknown = set(item) - _TASK_KEYS
        if unknown:
            raise SuiteError(f"{where}: unknown key {sorted(unknown)[0]!r}")
        for key in ("id", "category", "request", "expect"):
            if not item.get(key):
                raise SuiteError(f"{where}: missing {key!r}")
        where = f"{path}: task {item['id']!r}"
        if item["id"] in seen:
            raise SuiteError(f"{where}: the id is used twice")
        seen.add(item["id"])
        expect = item["expect"]
        if not isinstance(expect, dict) or set(expect) - _EXPECT_KEYS:
            bad = sorted(set(expect) - _EXPECT_KEYS) if isinstance(expect, dict) else ["expect"]
            raise SuiteError(f"{where}: unknown expectation {bad[0]!r}")
        for key in _LISTS:
            if not isinstance(expect.get(key, []), list):
                raise SuiteError(f"{where}: {key!r} is a list")
        for wanted in expect.get("has", []):
            if isinstance(wanted, list) and (not wanted or any(_nested(w) for w in wanted)):
                raise SuiteError(f"{where}: a group in 'has' is a non-empty list of texts")
        tasks.append(
            Task(
                id=str(item["id"]),
                category=str(item["category"]),
                request=str(item["request"]),
                expect=expect,
                files={str(k): str(v) for k, v in (item.get("files") or {}).items()},
                pages={str(k): str(v) for k, v in (item.get("pages") or {}).items()},
                memory=[str(m) for m in item.get("memory") or []],
                yes=bool(item.get("allow", False)),
                source=str(path),
                language=str(item.get("language") or ""),
            )
        )
    return tasks


def ungrounded(answer: str, sources: Iterable[str]) -> list[str]:
    """The figures of ``answer`` (two digits or more, separators aside) that occur in none of
    ``sources`` (the request, the run's tool results): values the answer did not take from
    anything this run saw. Digits are compared without separators or marks, so "1.234,5" in a
    result grounds "1234.5" in the answer."""

    def digits(figure: str) -> str:
        return re.sub(r"\D", "", figure).lstrip("0")

    seen = {digits(f) for text in sources for f in _FIGURE.findall(text)}
    found = [f for f in _FIGURE.findall(answer) if len(digits(f)) > 1]
    return [f for f in dict.fromkeys(found) if digits(f) not in seen]


def in_english(answer: str) -> bool:
    """Whether ``answer`` is written in English: the two signals the off-topic check asks for
    (frequent English words, and py3langid) agree, on the answer without its file names and
    figures. A bare value ("146.51", "notes.txt") is in no language."""
    from lar.calling.relevance import in_embedder_language

    words = re.sub(r"\S*(?:\d|[/\\_@]|\.\w)\S*", " ", answer)
    return len(words.split()) >= 3 and in_embedder_language(words)


def _nested(value: Any) -> bool:
    return isinstance(value, list | dict) or value is None


class _Pages(http.server.BaseHTTPRequestHandler):
    pages: dict[str, str] = {}

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        body = self.pages.get(self.path.split("?")[0])
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write((body or "<h1>Not found</h1>").encode())

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def _served(pages: dict[str, str]) -> Iterator[str]:
    """The task's pages on 127.0.0.1 (an ephemeral port); yields the base URL."""
    if not pages:
        yield ""
        return
    handler = type("Pages", (_Pages,), {"pages": pages})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".lar" not in p.relative_to(root).parts
    }


def score(task: Task, answer: str, before: dict[str, bytes], workspace: Path) -> list[str]:
    """What the run got wrong, as a user would check it (empty: passed)."""
    expect, low = task.expect, answer.casefold()
    failures = [_lacks(wanted) for wanted in expect.get("has", []) if not _has(answer, wanted)]
    options = expect.get("has_any", [])
    if options and not any(str(t).casefold() in low for t in options):
        failures.append(f"answer has none of {options!r}")
    for text in expect.get("lacks", []):
        if str(text).casefold() in low:
            failures.append(f"answer has {text!r}")
    if expect.get("no_new_figures"):
        known = {f.replace(",", "") for f in _FIGURE.findall(task.request)}
        # single digits are phrasing ("2 ways") or an error's number, not a made-up value
        figures = [f for f in _FIGURE.findall(answer) if len(f) > 1]
        new = [f for f in figures if f.replace(",", "") not in known]
        if new:
            failures.append(f"answer gives figures no one gave: {', '.join(new[:4])}")
    for name, needles in (expect.get("files") or {}).items():
        path = workspace / name
        if not path.is_file():
            failures.append(f"no file {name}")
            continue
        content = path.read_text(encoding="utf-8", errors="replace").casefold()
        for needle in needles:
            if str(needle).casefold() not in content:
                failures.append(f"{name} lacks {needle!r}")
    for name in expect.get("absent", []):
        if (workspace / name).exists():
            failures.append(f"{name} exists")
    if expect.get("unchanged") and _snapshot(workspace) != before:
        failures.append("the workspace changed")
    return failures


_GROUPS = "[. \u00a0\u202f]"  # what separates thousands where the decimal mark is a comma
_WANTED = {  # a wanted number, by its decimal mark
    ".": re.compile(r"^-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$"),
    ",": re.compile(rf"^-?(?:\d{{1,3}}(?:{_GROUPS}\d{{3}})+|\d+)(?:,\d+)?$"),
}
# A figure in an answer, whole: not the tail or head of a longer one ("1.234,5" holds no "234").
_EDGE_BEFORE, _EDGE_AFTER = r"(?<!\d)(?<!\d[.,])", r"(?![.,]?\d)"
_FIGURES = {
    ".": re.compile(_EDGE_BEFORE + r"-?\d+(?:,\d{3})*(?:\.\d+)?" + _EDGE_AFTER),
    ",": re.compile(_EDGE_BEFORE + rf"-?\d+(?:{_GROUPS}\d{{3}})*(?:,\d+)?" + _EDGE_AFTER),
}


def _plain(figure: str, mark: str) -> str:
    """A figure as digits and a decimal point, with no thousands separators."""
    if mark == ",":
        return re.sub(_GROUPS, "", figure).replace(",", ".")
    return figure.replace(",", "")


def _has(answer: str, wanted: Any) -> bool:
    """Whether the answer holds one wanted text, or any one of a group of them."""
    options = wanted if isinstance(wanted, list) else [wanted]
    return any(_holds(answer, str(text)) for text in options)


def _lacks(wanted: Any) -> str:
    return f"answer lacks {'all of ' if isinstance(wanted, list) else ''}{wanted!r}"


def _holds(answer: str, wanted: str) -> bool:
    """Whether ``answer`` holds ``wanted``: as text, or, for a number, as a figure of its own
    that is that number, written out to more places ("1.8288" holds "1.82", "176.67" holds
    "176") or rounded to it ("154.32" holds "154.3"); "51" does not hold "5", nor "4,000" "4",
    nor "50,5" "50". A number is read with a decimal point ("1,234.5"), or, where it is written
    with a comma ("1234,5", "1.234,5", "1 234,5"), the answer's figures are read so too.
    """
    mark = next((m for m, form in _WANTED.items() if form.match(wanted)), None)
    if mark is None:
        return wanted.casefold() in answer.casefold()
    want = _plain(wanted, mark)
    places = len(want.partition(".")[2])
    for figure in _FIGURES[mark].findall(answer):
        got = _plain(figure, mark)
        if got == want or ("." in want and got.startswith(want)):
            return True
        if places and "." in got and round(float(got), places) == float(want):
            return True
        if not places and got.partition(".")[0] == want:
            return True
    return False


def _approver(yes: bool) -> Any:
    class Approver:
        how_to_allow = "run the request again with --yes, or use lar chat, which asks each time"
        never_allows = not yes

        def __call__(self, call: Any, tool: Any) -> bool:
            return yes

    return Approver()


@dataclass(frozen=True, slots=True)
class Prepared:
    """A task's ground, made ready (``prepared``): its files written, its pages served."""

    workspace: Path
    home: Path
    """An empty Lar home of its own (memory, notes, to-dos)."""
    request: str
    """The request, ``{base}`` replaced by the served pages' address."""
    before: dict[str, bytes]
    """The workspace's files as written, for ``unchanged``."""


@contextmanager
def prepared(task: Task) -> Iterator[Prepared]:
    """A fresh workspace holding the task's files (with a fixed modification time) and an empty
    home, and its pages served on 127.0.0.1, for as long as the block runs; both removed after.
    Lar's runner and the peers' bench (``bench/peers_everyday.py``) start every task so."""
    with tempfile.TemporaryDirectory(prefix="lar-everyday-") as tmp, _served(task.pages) as base:
        root = Path(tmp)
        workspace, home = root / "ws", root / "home"
        workspace.mkdir()
        home.mkdir()
        for name, content in task.files.items():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace / name).write_text(content, encoding="utf-8")
        for made in [*workspace.rglob("*"), workspace]:  # listings show them
            os.utime(made, (FILES_TIME, FILES_TIME))
        request = task.request.replace("{base}", base)
        yield Prepared(workspace, home, request, _snapshot(workspace))


def judge(task: Task, answer: str, results: list[str], ready: Prepared) -> dict[str, Any]:
    """What a run of ``task`` that answered ``answer``, having seen the tool results
    ``results``, got right: ``passed``, ``failures``, ``ungrounded``, ``pasted`` and
    ``english`` (``TaskResult``'s fields), checked while the workspace is still there."""
    failures = score(task, answer, ready.before, ready.workspace)
    copied = pasted(answer, results)
    if copied:
        failures.append("the answer is a tool's output pasted, not an answer built from it")
    english = task.language not in ("", "en") and in_english(answer)
    if english:
        failures.append(f"the answer is in English, the request in {task.language}")
    return {
        "passed": not failures,
        "failures": failures,
        "ungrounded": ungrounded(answer, [ready.request, *results]),
        "pasted": copied,
        "english": english,
    }


class EverydayRunner:
    """Runs tasks on one engine: one runner, and for each task a fresh workspace and a fresh
    Lar home (memory, notes, to-dos), so no task sees another's. The tools are the built-in
    ones without ``tools.without`` and with the optional ones ``tools.extra`` names, as ``lar
    run`` offers them."""

    WARM_UP = "What is 2 + 2?"
    """The request run once before the tasks when ``repeatable``: every task then starts from
    the prompt cache it left (the system prompt and the tool listing computed once)."""

    def __init__(
        self, config: Any, engine: Any, *, track: str, max_turns: int, repeatable: bool = False
    ) -> None:
        from lar.agents import Agent, Runner
        from lar.agents.toolset import configured_builtins

        self.config = config
        self.engine = engine
        self.runner = Runner(config=config, engine=engine, traces=False, memory=False)
        tools = configured_builtins(config)
        self.agent = Agent(tools=tools, track=track, max_turns=max_turns)  # type: ignore[arg-type]
        self.mark: str | None = None
        """Where each task's prompt cache starts (``Engine.set_mark``); None: where the last
        task's left it, so a task's numbers depend on the task before it."""
        if repeatable:
            self.repeatable()

    def repeatable(self) -> bool:
        """Make each task's run independent of the tasks before it: the engine's prompt cache
        emptied, the warm-up request run, and that state restored before every task. False
        where the engine cannot (not llama.cpp, or ``prompt_cache: false``)."""
        loop = self.runner.event_loop()
        if not loop.run_until_complete(self.engine.rewind(None)):
            return False
        self.run(Task(id="warm-up", category="warm-up", request=self.WARM_UP, expect={}))
        mark = f"everyday-{os.getpid()}"
        if loop.run_until_complete(self.engine.set_mark(mark)):
            self.mark = mark
        return self.mark is not None

    def run(self, task: Task) -> TaskResult:
        from lar.memory import open_memory, statement
        from lar.types import ModelCalled, Notice, ToolCallFinished, ToolCallStarted, call_text

        if self.mark is not None:
            self.runner.event_loop().run_until_complete(self.engine.rewind(self.mark))
        with prepared(task) as ready:
            own = self.config.model_copy(update={"home": ready.home})
            memory = open_memory(own)
            for text in task.memory:  # as ``lar memory add`` stores it
                said = statement(text)
                memory.write(said.content, said.type, source="cli")
            # The task's own home: the runner's config and memory are swapped for this task.
            self.runner.config, self.runner.memory = own, memory
            session = self.runner.session(
                self.agent, workspace=ready.workspace, approver=_approver(task.yes)
            )
            started = time.perf_counter()
            try:
                result = session.run(ready.request)
                answer, events = result.text, result.events
            except LarError as exc:
                answer, events = f"[run failed: {exc}]", []
            wall = time.perf_counter() - started
            session.close()
            memory.store.close()
            self.runner.memory = None
            results = [e.result.content for e in events if isinstance(e, ToolCallFinished)]
            verdict = judge(task, answer, results, ready)
        calls = [e for e in events if isinstance(e, ModelCalled)]
        notices = [e for e in events if isinstance(e, Notice)]
        started_calls = [e for e in events if isinstance(e, ToolCallStarted)]
        return TaskResult(
            task=task,
            answer=answer,
            model_calls=len(calls),
            prompt_tokens=sum(e.usage.prompt_tokens for e in calls),
            wall_s=wall,
            tools=[e.result.name for e in events if isinstance(e, ToolCallFinished)],
            events=[str(e.code) for e in notices],
            policies=list(dict.fromkeys(e.policy for e in notices if e.policy)),
            calls=[call_text(e.call.name, e.call.arguments)[:300] for e in started_calls],
            **verdict,
        )

    def close(self) -> None:
        if self.mark is not None:
            self.engine.drop_mark(self.mark)
        self.runner.config = self.config
        self.runner.close()
