"""``lar eval``: tool-calling suites against any configured model, per track (T2–T4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from lar.cli.render import print_error, short
from lar.errors import ConfigError, LarError

__all__ = ["eval_command"]


TRACKS = ("native", "protocol", "constrained")

POLICY_NAMES = (
    "invented_tool", "percent_scale", "grouped_figures", "invented_option",
    "reopened_skill", "repeated_call",
    "unread_file", "table_by_code", "narrow_read", "ungrounded_values",
    "off_topic", "doubted_values", "more_calls", "patched_rename", "lost_text",
    "refused_call", "made_up_rate", "assumed_factor",
    "made_up_result", "figures_without_data", "pasted_result", "described_call",
    "copied_instructions", "unchecked_figure", "ignored_memory", "contradicted_weekday",
)  # fmt: skip
"""lar.agents.policies.DEFAULT_PROFILE, spelled out so ``--help`` costs no import (a test
keeps the two the same)."""


class _Runner:
    """One runner per track, reused across cases: each case gets a session of its own tools."""

    def __init__(
        self, config: Any, engine: Any, track: str, max_turns: int, variant: str = ""
    ) -> None:
        from lar.agents import Agent, Runner

        self.runner = Runner(config=config, engine=engine, traces=False, memory=False)
        policies = [variant] if variant else None
        self.agent = Agent(track=track, max_turns=max_turns, policies=policies)  # type: ignore[arg-type]
        self.session: Any = None

    def __call__(self, tools: list[Any]) -> Any:
        if self.session is not None:
            self.session.close()
        self.session = self.runner.session(
            self.agent.replace(tools=tools), approver=lambda call, tool: True
        )
        return self

    def run(self, text: str) -> Any:
        return self.session.run(text)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
        self.runner.close()


def eval_command(
    suite: Annotated[
        list[Path] | None,
        typer.Option(
            "--suite",
            help="A JSONL suite file or a directory of them (repeatable); default: evals/tools.",
        ),
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="A model from config.yaml.")
    ] = None,
    track: Annotated[
        str,
        typer.Option(
            help="native, protocol, constrained (JSON Schema decoding, embedded models), both "
            "(native and protocol) or all (one table each)."
        ),
    ] = "both",
    category: Annotated[
        list[str] | None, typer.Option(help="Only these categories (repeatable).")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="At most N cases.")] = None,
    per_category: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="At most N cases of each category, evenly spaced through it in file order "
            "(each BFCL file counts as a category of its own).",
        ),
    ] = None,
    max_turns: Annotated[
        int | None,
        typer.Option(
            min=1, max=20, help="Turn limit per case (default: agent.max_turns, as `lar run`)."
        ),
    ] = None,
    json_out: Annotated[
        Path | None,
        typer.Option("--json", help="Also write every case's result here, one line as each ends."),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            help="Keep the results already in the --json file and run only the missing cases "
            "(per track), and those whose result was an error (the engine failed or timed "
            "out): a long run that stopped goes on where it was."
        ),
    ] = False,
    failures: Annotated[bool, typer.Option(help="List the cases that failed, and why.")] = False,
    ablate: Annotated[
        list[str] | None,
        typer.Option(
            "--ablate",
            help="Also run without this policy and print what it adds (repeatable; 'all': each "
            "policy of the model's profile in turn). Policies: " + ", ".join(POLICY_NAMES) + ".",
        ),
    ] = None,
) -> None:
    """Run tool-calling suites and print accuracy, abstention, tokens and latency per task,
    and the share of calls that needed repair — per category and track.

    A suite is JSONL, one case per line: question, tool definitions (JSON Schema), what the
    tools return, and what is expected (calls, abstention, answer). The format is in
    docs/evals.md; a suite that breaks it stops with file:line before anything runs.
    """
    from lar.config import load_config
    from lar.engines import build_engine
    from lar.evals import run_case

    if track not in (*TRACKS, "both", "all"):
        print_error(
            LarError(f"--track must be native, protocol, constrained, both or all (got {track!r})")
        )
        raise typer.Exit(2)
    ablated = _ablated(ablate)
    cases = _cases(suite, category, limit, per_category)
    config = load_config()
    tracks = {"both": ["native", "protocol"], "all": list(TRACKS)}.get(track, [track])
    out = Console(highlight=False)
    done = _done(json_out, resume, cases)
    sink = _sink(json_out, resume)
    try:
        engine = build_engine(config, model)
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2 if isinstance(exc, ConfigError) else 1) from None
    from rich.progress import Progress

    # Agents share the engine, and closing one closes it: all are closed at the end.
    runs = [(tr, v) for tr in tracks for v in ["", *_variants(ablated, tr)]]
    turns = max_turns or config.agent.max_turns
    runners = [_Runner(config, engine, tr, turns, v) for tr, v in runs]
    by_run: dict[tuple[str, str], list[Any]] = {}
    for (tr, variant), runner in zip(runs, runners, strict=True):
        results = []
        label = f"{tr} track" + (f", without {variant[1:]}" if variant else "")
        with Progress(console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(f"{engine.name}, {label}", total=len(cases))
            for case in cases:
                result = done.get((tr, variant, case.id))
                if result is None and variant:
                    result = _same_without(by_run[(tr, "")], case, variant)
                    if result is not None and sink is not None:
                        sink.write(json.dumps(result.row(tr), ensure_ascii=False) + "\n")
                if result is None:
                    try:
                        result = run_case(case, runner)
                    except LarError as exc:  # a policy setting the config gets wrong
                        print_error(exc)
                        raise typer.Exit(2) from None
                    result.variant = variant
                    if sink is not None:
                        sink.write(json.dumps(result.row(tr), ensure_ascii=False) + "\n")
                        sink.flush()
                results.append(result)
                bar.advance(task)
        by_run[(tr, variant)] = results
        if not variant:
            _print_track(out, f"{engine.name} — {label}", results, failures)
    if ablated:
        for tr in tracks:
            _print_ablation(out, f"{engine.name} — {tr} track: what each policy adds", tr, by_run)
    for runner in runners:
        runner.close()
    if sink is not None:
        sink.close()
        out.print(f"results: {json_out}")


def _ablated(names: list[str] | None) -> list[str]:
    if not names:
        return []
    if "all" in names:
        return list(POLICY_NAMES)
    unknown = [n for n in names if n not in POLICY_NAMES]
    if unknown:
        print_error(
            LarError(f"--ablate: unknown policy {unknown[0]!r}; known: {', '.join(POLICY_NAMES)}")
        )
        raise typer.Exit(2)
    return list(dict.fromkeys(names))


def _same_without(full: list[Any], case: Any, variant: str) -> Any:
    """The full profile's result for ``case`` when the ablated policy neither spoke nor asked
    there: without it the run is the same (greedy decoding), so it is not run again."""
    import dataclasses

    name = variant[1:]
    found = next((r for r in full if r.case.id == case.id), None)
    if found is None or found.fired.get(name) or found.asked.get(name):
        return None
    return dataclasses.replace(found, variant=variant, reused=True)


def _variants(names: list[str], track: str) -> list[str]:
    """``-name`` for each ablated policy that applies to ``track``."""
    from lar.agents import PolicyRegistry

    return [f"-{n}" for n in names if track in PolicyRegistry.get(n).tracks]


def _print_ablation(
    out: Console, title: str, track: str, by_run: dict[tuple[str, str], list[Any]]
) -> None:
    """One row per policy: the full profile beside the same cases without it."""
    from lar.evals import summarize

    full = by_run[(track, "")]
    base = summarize(full)[-1]
    table = Table(
        "without", "cases", "accuracy", "Δ accuracy", "refused fitting", "fired in",
        "tokens/task", "ms/task", title=title,
    )  # fmt: skip

    def refused(rs: list[Any]) -> str:
        return str(sum(r.refused_fitting for r in rs))

    table.add_row(
        "(nothing)", str(base.cases), f"{base.accuracy:.1%}", "", refused(full), "",
        f"{base.tokens:.0f}", f"{base.latency_ms:.0f}",
    )  # fmt: skip
    for (tr, variant), rs in by_run.items():
        if tr != track or not variant:
            continue
        s = summarize(rs)[-1]
        name = variant[1:]
        fired = sum(1 for r in full if r.fired.get(name))
        table.add_row(
            name, str(s.cases), f"{s.accuracy:.1%}", f"{base.accuracy - s.accuracy:+.1%}",
            refused(rs), f"{fired}/{len(full)}", f"{s.tokens:.0f}", f"{s.latency_ms:.0f}",
        )  # fmt: skip
    out.print(table)
    out.print("Δ accuracy: what the policy adds (full profile minus the run without it).")


def spread(cases: list[Any], n: int) -> list[Any]:
    """At most ``n`` cases of each category, evenly spaced through its cases in file order (a
    BFCL file is a category of its own). Files are sorted by id as text, so similar cases sit
    together: the first ``n`` would be one cluster, not a sample."""
    groups: dict[str, list[Any]] = {}
    for c in cases:
        groups.setdefault(str(c.expect.get("bfcl") or c.category), []).append(c)
    kept = set()
    for group in groups.values():
        k = min(n, len(group))
        kept |= {id(group[i * len(group) // k]) for i in range(k)}
    return [c for c in cases if id(c) in kept]


def _cases(
    suite: list[Path] | None,
    category: list[str] | None,
    limit: int | None,
    per_category: int | None = None,
) -> list[Any]:
    """The cases to run; a bad suite or config stops with exit 2."""
    from lar.config import load_config
    from lar.evals import default_suites, load_suites
    from lar.registry import load_plugins

    try:
        load_plugins()
        load_config()  # a broken config stops here, before anything runs
        cases = load_suites(suite or [default_suites()])
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None
    if category:
        cases = [c for c in cases if c.category in category]
    if per_category:
        cases = spread(cases, per_category)
    cases = cases[:limit] if limit else cases
    if not cases:
        print_error(LarError("no cases left to run (check --category)"))
        raise typer.Exit(2)
    return cases


def _done(json_out: Path | None, resume: bool, cases: list[Any]) -> dict[tuple[str, str, str], Any]:
    from lar.evals import SuiteError

    if resume and json_out is None:
        print_error(LarError("--resume needs --json FILE: the results to go on from"))
        raise typer.Exit(2)
    if not (resume and json_out is not None and json_out.exists()):
        return {}
    try:
        return _read_results(json_out, {c.id: c for c in cases})
    except SuiteError as exc:
        print_error(exc)
        raise typer.Exit(2) from None


def _sink(json_out: Path | None, resume: bool) -> Any:
    if json_out is None:
        return None
    try:
        return json_out.open("a" if resume else "w", encoding="utf-8")
    except OSError as exc:
        print_error(LarError(f"{json_out}: cannot write: {exc}"))
        raise typer.Exit(2) from None


def _print_track(out: Console, title: str, results: list[Any], failures: bool) -> None:
    from lar.evals import footprint, summarize

    table = Table(
        "category", "cases", "accuracy", "abstained right", "tokens/task", "ms/task",
        "repaired", "coerced", title=title,
    )  # fmt: skip
    for s in summarize(results):
        abst = ""
        if s.category in ("abstain", "all"):
            rs = [r for r in results if r.case.expect.get("abstain")]
            if s.category == "abstain" or rs:
                right = sum(1 for r in rs if not r.calls)
                abst = f"{right}/{len(rs)}" if rs else ""
        table.add_row(
            s.category, str(s.cases), f"{s.accuracy:.1%}", abst, f"{s.tokens:.0f}",
            f"{s.latency_ms:.0f}",
            f"{s.repaired}/{s.with_calls}" if s.with_calls else "0",
            f"{s.coerced}/{s.with_calls}" if s.with_calls else "0",
        )  # fmt: skip
    out.print(table)
    parts = footprint(results)
    if parts:
        shares = Table(*parts, "total", title=f"prompt footprint, first call of a task — {title}")
        shares.add_row(*(f"{v:.0f}" for v in parts.values()), f"{sum(parts.values()):.0f}")
        out.print(shares)
    if failures:
        for r in results:
            if not r.ok:
                out.print(f"  {r.case.id} ({r.case.category}): {escape(short(r.why, 140))}")


def _read_results(path: Path, cases: dict[str, Any]) -> dict[tuple[str, str, str], Any]:
    """(track, variant, case id) → result, from a results file; a bad line stops with file:line.

    The newest row of a case counts. A case whose newest row is an error (the engine failed or
    timed out) is left out, so ``--resume`` runs it again rather than keeping the failure."""
    from lar.evals import CaseResult
    from lar.evals import SuiteError as error
    from lar.jsonl import read_jsonl

    done = {}
    for n, row in read_jsonl(path, error=error):
        if not isinstance(row, dict) or row.get("track") not in TRACKS:
            raise error(f"{path}:{n}: not a lar eval result (no track)")
        case = cases.get(str(row.get("id")))
        if case is None:
            continue  # a case not selected this time: kept in the file, not counted
        try:
            result = CaseResult.from_row(case, row)
        except error as exc:
            raise error(f"{path}:{n}: {exc}") from None
        key = (row["track"], result.variant, case.id)
        if result.error is None:
            done[key] = result
        else:
            done.pop(key, None)
    return done
