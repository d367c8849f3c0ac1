"""``lar trace``, ``lar feedback``, ``lar learn`` and ``lar stats`` (O3, O4, L3, L5)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from lar.cli.render import print_error, short
from lar.errors import LarError

__all__ = ["trace_app", "feedback", "learn", "stats"]

trace_app = typer.Typer(help="Look at past runs: route, model calls, tool calls, outcome.")


def _store() -> Any:
    from lar.config import load_config
    from lar.traces import TraceStore

    try:
        config = load_config()
        return config, TraceStore(config.home / "lar.db")
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(2) from None


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def _fb(value: int | None) -> str:
    return "" if value is None else ("+1" if value > 0 else "-1")


@trace_app.command("list")
def trace_list(
    limit: Annotated[int, typer.Option(min=1, help="How many, newest first.")] = 20,
    model: Annotated[str | None, typer.Option(help="Only runs routed to this model.")] = None,
) -> None:
    """Recent runs: id, when, model and why, outcome, latency, tokens, feedback."""
    from lar.cli.tables import table, when, wide

    _, store = _store()
    out = Console()
    full = wide(out)  # the routing rule and feedback from 100 columns on
    columns = ["id", "when", "model", *(["rule"] if full else []), "outcome", "ms", "tokens"]
    listing = table(*columns, *(["fb"] if full else []), "query", text="query")
    for t in store.recent(limit, model=model):
        listing.add_row(
            t.id,
            when(t.created),
            t.model or "",
            *([t.rule or ""] if full else []),
            t.outcome,
            f"{t.latency_ms:.0f}" if t.latency_ms is not None else "",
            str(t.prompt_tokens + t.completion_tokens),
            *([_fb(t.feedback)] if full else []),
            escape(short(t.query, 80 if full else 40)),
        )
    store.close()
    out.print(listing)


def _step_label(s: Any) -> str:
    d = s.detail
    took = f", {s.duration_ms:.0f}ms" if s.duration_ms is not None else ""
    if s.kind == "route":
        return (
            f"route: {s.name} ({d['router']}/{d['rule']}: {d['reason']}); class {d['class']}, "
            f"complexity {d['complexity']:.2f}, tier {d['tier']} ({d['budget']} tokens)"
        )
    if s.kind == "model":
        energy = f", {d['energy_j']:.2f} J" if d.get("energy_j") is not None else ""
        fail = f"; failed over from: {' | '.join(d['failover'])}" if d.get("failover") else ""
        return (
            f"llm #{d['turn']}: {s.name} ({d['engine']}), prompt {d['prompt_tokens']}, "
            f"completion {d['completion_tokens']} tokens{took}{energy}{fail}"
        )
    if s.kind == "tool":
        from lar.types import call_text

        status = "ok" if s.ok else (d.get("error") or "error")
        shown = short(call_text(s.name, d.get("arguments") or {}), 80)
        return (
            f"tool: {shown} {status}{took}; in {(s.input_hash or '')[:12]} "
            f"out {(s.output_hash or '')[:12]}"
        )
    if s.kind == "recall":
        return f"recall: {s.name}{took}"
    if s.kind == "final":
        return f"final ({s.name}): {short(d.get('text', ''), 80)!r}"
    if s.kind == "subtask":
        why = f": {short(d.get('reason', ''), 80)}" if d.get("reason") else ""
        return f"sub-agent {s.name} task {d.get('id')}: {d.get('status')}{why}{took}"
    if s.kind in ("notice", "error"):
        return f"{s.kind}: {s.name}: {short(d.get('message', ''), 100)}"
    return f"{s.kind}: {s.name} {short(str(d), 80)}"


@trace_app.command("show")
def trace_show(
    trace_id: Annotated[str, typer.Argument(help="A trace id (or a unique prefix).")],
) -> None:
    """One run as a tree: route, recall, every model call and tool call, outcome."""
    from lar.traces import TraceNotFound

    _, store = _store()
    try:
        t = store.get(trace_id)
        children = store.children(t.id)
    except TraceNotFound as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    finally:
        store.close()
    Console(highlight=False).print(trace_tree(t, children))


def trace_tree(t: Any, children: Sequence[Any] = ()) -> Tree:
    """A run as a tree (``lar trace show``, ``/trace`` in chat); a delegate's sub-runs under it."""
    energy = f", {t.energy_j:.2f} J" if t.energy_j is not None else ", energy not measured"
    head = (
        f"[bold]{t.id}[/bold]  {_when(t.created)}  {t.outcome}  "
        f"{t.latency_ms or 0:.0f} ms  {escape(short(t.query, 70))!r}"
    )
    tree = Tree(head)
    for s in t.steps:
        tree.add(escape(f"{s.offset_ms:>8.0f}ms  {_step_label(s)}"))
    fb = f"feedback {_fb(t.feedback)}" + (f" {t.feedback_comment!r}" if t.feedback_comment else "")
    tree.add(
        escape(
            f"totals: tokens {t.prompt_tokens} + {t.completion_tokens}, cost ${t.cost_usd:.6f}"
            f"{energy}, reward {t.reward if t.reward is not None else '-'}, "
            f"success {'yes' if t.success else 'no'}, "
            + (fb if t.feedback is not None else "no feedback")
        )
    )
    for child in children:
        tree.add(
            escape(
                f"sub-run {child.id}: {child.outcome}, {child.latency_ms or 0:.0f} ms, "
                f"{short(child.query, 60)!r} (lar trace show {child.id})"
            )
        )
    return tree


def feedback(
    trace_id: Annotated[str, typer.Argument(help="The run (see `lar trace list`).")],
    score: Annotated[str, typer.Argument(help="+1 (good) or -1 (bad).", metavar="+1|-1")],
    comment: Annotated[str | None, typer.Argument(help="Why, in your words.")] = None,
) -> None:
    """Tell Lar whether a run was good; `lar learn` uses it to pick models."""
    from lar.traces import TraceNotFound

    value = {"+1": 1, "1": 1, "up": 1, "-1": -1, "down": -1}.get(score.strip())
    if value is None:
        print_error(LarError(f"score must be +1 or -1 (got {score!r})"))
        raise typer.Exit(2)
    _, store = _store()
    try:
        trace = store.get(trace_id)
        store.feedback(trace.id, value, comment)
    except TraceNotFound as exc:
        print_error(exc)
        raise typer.Exit(1) from None
    finally:
        store.close()
    typer.echo(f"{trace.id}: feedback {score.strip()} recorded")


def learn(
    min_samples: Annotated[
        int | None,
        typer.Option(min=1, help="Runs a model needs in a class (default: router.min_samples)."),
    ] = None,
) -> None:
    """Train the learned router from every trace: per query class, the model with the best
    0.6 · success rate + 0.4 · feedback (at least min-samples runs). The next run uses it
    (router.policy auto or learned)."""
    from lar.routing import PolicyStore, train

    config, store = _store()
    policy = PolicyStore(config.home / "lar.db")
    try:
        need = min_samples or config.router.min_samples
        table, old, new = train(store, policy, min_samples=need)
    finally:
        store.close()
        policy.close()
    out = Console(highlight=False)
    t = Table("class", "model", "runs", "success", "feedback", "composite", "reward", "chosen")
    for s in table:
        chosen = new.get(s.query_class)
        mark = "*" if chosen is not None and chosen.model == s.model else ""
        t.add_row(
            s.query_class,
            s.model,
            str(s.samples),
            f"{s.success_rate:.2f}",
            f"{s.feedback:.2f}",
            f"{s.composite:.3f}",
            f"{s.mean_reward:.3f}",
            mark,
        )
    out.print(t)
    if not table:
        out.print("no traces yet: run some requests first (`lar run …`)")
    for cls in sorted(set(old) | set(new)):
        before = old[cls].model if cls in old else "(heuristic)"
        after = new[cls].model if cls in new else "(heuristic)"
        change = "changed" if before != after else "unchanged"
        out.print(f"{cls}: {before} → {after} ({change})")
    out.print(
        f"policy: {len(new)} classes learned (min {need} runs); "
        + ("used by the next run" if config.router.policy in ("auto", "learned") else
           f"not used: router.policy is {config.router.policy}")
    )  # fmt: skip


def stats(
    plot: Annotated[
        Path | None, typer.Option("--plot", help="Also draw the aggregates into this PNG file.")
    ] = None,
    days: Annotated[
        float | None, typer.Option(min=0, help="Only the last N days (default: everything).")
    ] = None,
) -> None:
    """Aggregates by model and engine: latency percentiles, throughput, tokens per joule,
    joules per output token, throughput per watt, cost."""
    from lar.telemetry import aggregate_records as aggregate

    _, store = _store()
    since = time.time() - days * 86400 if days is not None else None
    try:
        records = store.telemetry(since=since)
        runs = store.count()
    finally:
        store.close()
    rows = aggregate(records)
    out = Console(highlight=False)

    def num(v: float | None, fmt: str = ".1f") -> str:
        return "-" if v is None else format(v, fmt)

    t = Table(
        "model", "engine", "runs", "calls", "tokens in/out", "p50 ms", "p95 ms", "p99 ms",
        "ttft p50", "tok/s", "J", "tok/J", "J/out tok", "tok/s/W", "cost $",
    )  # fmt: skip
    for s in rows:
        t.add_row(
            s.model, s.engine, str(s.runs), str(s.calls),
            f"{s.prompt_tokens}/{s.completion_tokens}",
            num(s.latency_p50_ms, ".0f"), num(s.latency_p95_ms, ".0f"),
            num(s.latency_p99_ms, ".0f"), num(s.ttft_p50_ms, ".0f"), num(s.tokens_per_s),
            num(s.energy_j), num(s.tokens_per_joule, ".2f"),
            num(s.joules_per_output_token, ".3f"), num(s.throughput_per_watt, ".3f"),
            f"{s.cost_usd:.4f}",
        )  # fmt: skip
    out.print(t)
    out.print(f"{runs} runs traced, {len(records)} model calls")
    mixed = [s.model for s in rows if len(s.token_methods) > 1]
    if mixed:
        out.print(f"note: token counts of {', '.join(mixed)} mix counting methods")
    if rows and all(s.energy_j is None for s in rows):
        out.print("energy: not measured (no readable RAPL counters, no NVIDIA GPU; see lar doctor)")
    if plot is not None:
        if not records:
            print_error(LarError("nothing to plot: no model calls recorded yet"))
            raise typer.Exit(1)
        from lar.telemetry import plot_stats

        plot_stats(rows, records, plot)
        out.print(f"plot: {plot}")
