"""Choosing the off-topic threshold: how far apart fitting and unrelated tools score.

    .venv/bin/python bench/relevance.py [--set evals/relevance/dev.jsonl] [--suites evals/tools]

Scores every request of the held-out dev set against its narrow tools (Lar's built-ins are
``broad`` and never judged) with the real embedder (all-MiniLM-L6-v2, ``lar.calling.relevance``):
a fitting pair by its tool, an unrelated request by its best narrow tool. Prints, per
threshold, how many unrelated requests fall below it (caught) and how many fitting ones do
(lost), and the threshold rule: the highest 0.05 step that loses no fitting pair. With
``--suites`` the same table is printed for the eval suites, for comparison only; the threshold
is never chosen there. Writes the dev table into BENCHMARKS.md (section relevance).

    .venv/bin/python bench/relevance.py --calls RESULTS [--calls-suite SUITE]

replays the whole rule (threshold, and invented values under the grounding band) on the calls a
model made: RESULTS is ``lar eval --suite SUITE --json RESULTS`` run with the check off
(``agent.off_topic_below: null``), SUITE by default the held-out grounding cases
(evals/relevance/grounding.jsonl). Prints each refused or passed call and how many fitting calls
would be refused and unrelated ones caught; writes that table into BENCHMARKS.md (section
grounding).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import ROOT, write_section  # noqa: E402

from lar.calling.prompt import call_text  # noqa: E402
from lar.calling.relevance import GROUNDED_ABOVE, OFF_TOPIC_BELOW, Relevance  # noqa: E402
from lar.errors import LarError  # noqa: E402
from lar.evals.offtopic import GROUNDING_SET, Pair, load_dev, replay, split_scores  # noqa: E402
from lar.evals.toolcalls import load_suite  # noqa: E402
from lar.jsonl import read_jsonl  # noqa: E402
from lar.memory.embed import MiniLMEmbedder  # noqa: E402

STEPS = [round(0.05 * i, 2) for i in range(1, 9)]


def suite_pairs(path: Path) -> list[Pair]:
    out = []
    for case in load_suite(path):
        tools = [(t["name"], t.get("description", "")) for t in case.tools]
        calls = case.expect.get("calls") or []
        fits = calls[0]["name"] if calls else None
        out.append(Pair(case.question, tools, fits))
    return out


def table(rel: Relevance, pairs: list[Pair]) -> str:
    fitting, unrelated = split_scores(rel, pairs)
    lines = [
        f"fitting narrow pairs: {len(fitting)} (lowest {min(fitting):.3f}); "
        f"unrelated requests: {len(unrelated)} (a best narrow tool scoring "
        f"{max(s for s in unrelated if s < 1.0):.3f} at most; {sum(s >= 1.0 for s in unrelated)} "
        "with only broad tools, never caught)",
        "",
        "| threshold | unrelated caught | fitting lost |",
        "|---:|---:|---:|",
    ]
    for th in STEPS:
        caught = sum(s < th for s in unrelated)
        lost = sum(s < th for s in fitting)
        mark = " **(used)**" if abs(th - rel.threshold) < 1e-9 else ""
        lines.append(f"| {th:.2f}{mark} | {caught}/{len(unrelated)} | {lost}/{len(fitting)} |")
    safe = [th for th in STEPS if sum(s < th for s in fitting) == 0]
    lines.append("")
    lines.append(f"highest step losing no fitting pair: {max(safe) if safe else 'none'}")
    return "\n".join(lines)


def replay_table(rel: Relevance, suite: Path, results: Path) -> str:
    rows = [row for _, row in read_jsonl(results)]
    judged = replay(rel, load_suite(suite), rows)
    fitting = [r for r in judged if r.fits]
    unrelated = [r for r in judged if not r.fits]
    lines = ["| case | calls | verdict |", "|---|---|---|"]
    for r in judged:
        shown = "; ".join(call_text(name, args) for name, args in r.calls)
        shown = shown if len(shown) <= 120 else shown[:119] + "…"
        if r.verdict is None:
            verdict = "runs" if r.fits else "**runs (missed)**"
        else:
            why = "; ".join(f"{n} {v}" for n, v in r.verdict.items())
            verdict = f"refused: {why}" if not r.fits else f"**refused: {why}**"
        lines.append(f"| {r.id} | `{shown}` | {verdict} |")
    refused = sum(r.verdict is not None for r in fitting)
    caught = sum(r.verdict is not None for r in unrelated)
    by_value = sum(
        r.verdict is not None and any(v.invented for v in r.verdict.values()) for r in unrelated
    )
    lines += [
        "",
        f"fitting requests with a call: {len(fitting)}, refused **{refused}**; unrelated "
        f"requests with a call: {len(unrelated)}, caught **{caught}** ({by_value} by an invented "
        f"value); threshold {rel.threshold:.2f}, values checked under {rel.grounded_above:.2f}",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=ROOT / "evals" / "relevance" / "dev.jsonl")
    parser.add_argument("--suites", type=Path, help="also score these eval suites (a dir)")
    parser.add_argument("--no-write", action="store_true", help="do not update BENCHMARKS.md")
    parser.add_argument("--calls", type=Path, help="replay the rule on this lar eval --json file")
    parser.add_argument("--calls-suite", type=Path, default=GROUNDING_SET)
    args = parser.parse_args()
    rel = Relevance(MiniLMEmbedder(), OFF_TOPIC_BELOW, grounded_above=GROUNDED_ABOVE)
    if args.calls:
        try:
            replayed = replay_table(rel, args.calls_suite, args.calls)
        except LarError as exc:
            raise SystemExit(str(exc)) from None
        print(f"## calls replayed ({args.calls} on {args.calls_suite.name})\n\n{replayed}\n")
        if not args.no_write:
            write_section(
                "grounding",
                f"Off-topic rule replayed on a model's calls (`python bench/relevance.py --calls "
                f"{args.calls.name}`, suite `{args.calls_suite.name}`; the calls were made with "
                f"the check off):\n\n{replayed}",
            )
        return
    try:
        dev = table(rel, load_dev(args.set))
    except LarError as exc:  # unreadable file, a line that is not JSON
        raise SystemExit(str(exc)) from None
    print(f"## dev set ({args.set.name})\n\n{dev}\n")
    if args.suites:
        files = sorted(args.suites.glob("*.jsonl")) if args.suites.is_dir() else [args.suites]
        pairs = [p for f in files for p in suite_pairs(f)]
        print(f"## eval suites ({args.suites}), for comparison\n\n{table(rel, pairs)}\n")
    if not args.no_write:
        write_section(
            "relevance",
            "Off-topic threshold (`python bench/relevance.py`), all-MiniLM-L6-v2 on "
            f"`{args.set.relative_to(ROOT) if args.set.is_relative_to(ROOT) else args.set}`:"
            f"\n\n{dev}",
        )


if __name__ == "__main__":
    main()
