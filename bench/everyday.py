"""The everyday suite on a model (default: the embedded 1.5B), end to end, one table per file.

    python bench/everyday.py evals/everyday/dev.yaml evals/everyday/test.yaml \\
        [--track protocol] [--json evals/results/everyday.jsonl] [--resume] [--failures]
    python bench/everyday.py --draw 7 [--per-language 40] [--save draw-7.yaml]  # a generated
        # draw (src/lar/evals/draws): dev seeds 0-9999 to tune on, test seeds 10000-19999 to report
    python bench/everyday.py --draw 8 --ablate pasted_result   # each task with the model's
        # policies and without this one, both from the same prompt-cache mark, side by side
    python bench/everyday.py --draw 8 --versus agent.name_the_language=true   # the same, for
        # one setting changed (tools.extra='[file_delete]' offers that tool too)
    python bench/everyday.py --draw 8 --ablate-fired   # the policy ablation table: each task
        # also without each policy that spoke in it (a policy that stays silent changes nothing)
    python bench/everyday.py --report evals/results/everyday.jsonl   # tables from a result file
    python bench/everyday.py --report A.jsonl B.jsonl   # and --ablate-fired rows of several
        # draws pooled into one policy ablation table
    python bench/everyday.py --compare BEFORE.jsonl AFTER.jsonl   # both, side by side, into
                                                                  # BENCHMARKS.md

Each task runs in a fresh workspace and Lar home (src/lar/evals/everyday.py); a row per task
goes to ``--json`` as it finishes, so ``--resume`` goes on where a stopped run was. The table:
per category, tasks passed, model calls, prompt tokens and wall seconds per task.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any


def table(title: str, rows: list[dict[str, Any]], key: str = "category") -> str:
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by[row.get(key) or "?"].append(row)
    lines = [
        f"**{title}**",
        "",
        f"| {key} | tasks | passed | ungrounded answers | pasted answers | English answers "
        "to other languages | model calls/task (median) | prompt tokens/task | wall s/task |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def line(name: str, rs: list[dict[str, Any]]) -> str:
        n = len(rs)
        ok = sum(r["passed"] for r in rs)
        loose = sum(bool(r.get("ungrounded")) for r in rs)  # rows written before: none counted
        copied = sum(bool(r.get("pasted")) for r in rs)
        english = sum(bool(r.get("english")) for r in rs)
        calls = sum(r["model_calls"] for r in rs) / n
        median = statistics.median(r["model_calls"] for r in rs)
        tokens = sum(r["prompt_tokens"] for r in rs) / n
        wall = sum(r["wall_s"] for r in rs) / n
        return (
            f"| {name} | {n} | {ok} ({ok / n:.0%}) | {loose} | {copied} | {english} "
            f"| {calls:.1f} ({median:g}) "
            f"| {tokens:.0f} | {wall:.1f} |"
        )

    for name in sorted(by):
        lines.append(line(name, by[name]))
    lines.append(line("**all**", rows))
    return "\n".join(lines)


def _pick(rows: dict[str, dict[str, Any]], prefix: str, category: str) -> list[dict[str, Any]]:
    return [
        r for r in rows.values()
        if r["id"].startswith(prefix) and category in ("all", r["category"])
    ]  # fmt: skip


def compare(before: Path, after: Path) -> str:
    """Per half and category: passed, model calls, prompt tokens and wall seconds per task,
    before → after."""
    old, new = _rows(before), _rows(after)
    lines = [
        f"Everyday suite, embedded 1.5B, protocol track, max_turns 4 (`python bench/everyday.py "
        f"--compare {before.name} {after.name}`; each task end to end in its own workspace)",
        "",
        "| half | category | tasks | passed | model calls/task | prompt tokens/task "
        "| wall s/task |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]

    def cell(rows: list[dict[str, Any]], key: str) -> float:
        return sum(r[key] for r in rows) / len(rows) if rows else 0.0

    for prefix, half in (("d-", "dev"), ("t-", "test")):
        categories = sorted({r["category"] for r in new.values() if r["id"].startswith(prefix)})
        for category in [*categories, "all"]:
            a, b = _pick(old, prefix, category), _pick(new, prefix, category)
            name = f"**{category}**" if category == "all" else category
            lines.append(
                f"| {half} | {name} | {len(b)} | {sum(r['passed'] for r in a)} → "
                f"{sum(r['passed'] for r in b)} | {cell(a, 'model_calls'):.1f} → "
                f"{cell(b, 'model_calls'):.1f} | {cell(a, 'prompt_tokens'):.0f} → "
                f"{cell(b, 'prompt_tokens'):.0f} | {cell(a, 'wall_s'):.1f} → "
                f"{cell(b, 'wall_s'):.1f} |"
            )
    return "\n".join(lines)


def fired_table(title: str, runs: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]]) -> str:
    """Per policy that spoke: the tasks it spoke in, passed as is and without it (same mark),
    won (passed only with it) and lost (passed only without it)."""
    lines = [
        title,
        "",
        "| policy | spoke in | passed as is | passed without | won | lost |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in sorted(runs, key=lambda n: (-len(runs[n]), n)):
        pairs = runs[name]
        won = sum(a["passed"] and not b["passed"] for a, b in pairs)
        lost = sum(b["passed"] and not a["passed"] for a, b in pairs)
        on, off = sum(a["passed"] for a, _ in pairs), sum(b["passed"] for _, b in pairs)
        lines.append(f"| `{name}` | {len(pairs)} | {on} | {off} | {won} | {lost} |")
    return "\n".join(lines)


def ablation(
    title: str, pairs: list[tuple[dict[str, Any], dict[str, Any]]], a: str = "with",
    b: str = "without",
) -> str:  # fmt: skip
    """Each task run twice, same engine, same mark (``a``: as configured, ``b``: the other
    arm): per language and overall, passed, pasted answers, English answers, model calls and
    wall seconds; then the tasks whose outcome differs."""
    lines = [
        title,
        "",
        f"| language | tasks | passed {a} | passed {b} | pasted {a} | pasted {b} "
        f"| English {a} | English {b} | calls/task {a} | calls/task {b} "
        f"| wall s/task {a} | wall s/task {b} |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    languages = sorted({on.get("language") or "?" for on, _ in pairs})
    for language in [*languages, "all"]:
        part = [
            (a, b) for a, b in pairs if language == "all" or (a.get("language") or "?") == language
        ]
        cells = [len(part)]
        for key in ("passed", "pasted", "english"):
            cells += [
                sum(bool(a.get(key)) for a, _ in part),
                sum(bool(b.get(key)) for _, b in part),
            ]
        for key in ("model_calls", "wall_s"):
            cells += [
                statistics.mean(a[key] for a, _ in part),
                statistics.mean(b[key] for _, b in part),
            ]
        name_cell = f"**{language}**" if language == "all" else language
        lines.append(
            f"| {name_cell} | "
            + " | ".join(f"{c:.1f}" if isinstance(c, float) else str(c) for c in cells)
            + " |"
        )
    changed = [(x, y) for x, y in pairs if x["passed"] != y["passed"]]
    if changed:
        lines += ["", "Tasks whose outcome differs:"]
        for x, y in changed:
            lines.append(
                f"- {x['id']}: {a} {'ok' if x['passed'] else 'FAIL'}, {b} "
                f"{'ok' if y['passed'] else 'FAIL'} — {a}: {' '.join(x['answer'].split())[:100]!r}"
                f"; {b}: {' '.join(y['answer'].split())[:100]!r}"
            )
    return "\n".join(lines)


def overridden(model: Any, key: str, value: Any) -> Any:
    """``model`` (a config) with the setting at dotted ``key`` set to ``value``, validated as
    the config file's would be; ``KeyError`` naming a key that does not exist."""
    first, _, rest = key.partition(".")
    if first not in type(model).model_fields:
        known = ", ".join(type(model).model_fields)
        raise KeyError(f"no setting {first!r} here; known: {known}")
    if not rest:
        return type(model).model_validate({**model.model_dump(), first: value})
    return model.model_copy(update={first: overridden(getattr(model, first), rest, value)})


def _all_rows(path: Path) -> list[dict[str, Any]]:
    """Every row of a result file, in the order written; a line that is not JSON is an error
    naming the file and line."""
    rows: list[dict[str, Any]] = []
    if path.exists():
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if text.strip():
                try:
                    rows.append(json.loads(text))
                except json.JSONDecodeError as exc:
                    raise SystemExit(f"{path}:{number}: not a result row ({exc})") from None
    return rows


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    """The newest as-configured row per task id (rows of another arm left out)."""
    return {row["id"]: row for row in _all_rows(path) if "arm" not in row}


def fired_pairs(paths: list[Path]) -> dict[str, list[tuple[dict[str, Any], dict[str, Any]]]]:
    """From the rows ``--ablate-fired`` wrote: per policy, each task's run as is paired with
    its run without that policy (the as-is row is the last one of that id written before)."""
    pooled: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    for path in paths:
        as_is: dict[str, dict[str, Any]] = {}
        for row in _all_rows(path):
            arm = row.get("arm")
            if arm is None:
                as_is[row["id"]] = row
            elif arm.startswith("without ") and row["id"] in as_is:
                name = arm.removeprefix("without ")
                if name in as_is[row["id"]].get("policies", []):
                    pooled[name].append((as_is[row["id"]], row))
    return pooled


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("suites", nargs="*", type=Path, help="task files (YAML)")
    parser.add_argument("--track", default="protocol")
    parser.add_argument("--model", default=None)
    parser.add_argument(
        "--max-turns", type=int, default=None, help="default: agent.max_turns, as `lar run`"
    )
    parser.add_argument("--draw", type=int, action="append", metavar="SEED",
                        help="a generated draw of this seed (repeat for more)")  # fmt: skip
    parser.add_argument("--per-language", type=int, default=40, help="tasks a language a draw")
    parser.add_argument("--save", type=Path, default=None, help="write the draw as a task file")
    parser.add_argument("--extra", action="append", default=None, metavar="TOOL",
                        help="an optional tool to offer (tools.extra), e.g. code_read")  # fmt: skip
    parser.add_argument("--json", type=Path, default=None, help="append one row per task")
    parser.add_argument("--resume", action="store_true", help="skip tasks already in --json")
    parser.add_argument("--failures", action="store_true", help="list failed tasks and why")
    parser.add_argument("--only", action="append", help="only tasks whose id starts so")
    parser.add_argument(
        "--order-dependent",
        action="store_true",
        help="skip restoring the prompt cache before each task (faster where tasks share "
        "long prefixes; a task's figures then depend on the one before it)",
    )
    parser.add_argument("--shuffle", type=int, default=None, metavar="SEED",
                        help="run the tasks in an order shuffled by SEED")  # fmt: skip
    parser.add_argument("--ablate", default=None, metavar="POLICY",
                        help="each task also without POLICY (same mark), side by side")  # fmt: skip
    parser.add_argument("--versus", default=None, metavar="KEY=VALUE",
                        help="each task also with this setting (a YAML value)")  # fmt: skip
    parser.add_argument("--ablate-fired", action="store_true",
                        help="each task also without each policy that spoke in it (same mark): "
                             "the policy ablation table")  # fmt: skip
    parser.add_argument("--report", type=Path, nargs="+", default=None, metavar="FILE",
                        help="only print tables of result files; rows of --ablate-fired runs "
                             "are pooled into one policy ablation table")  # fmt: skip
    parser.add_argument(
        "--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
        help="two result files side by side (written to BENCHMARKS.md)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.compare:
        text = compare(*args.compare)
        print(text)
        sys.path.insert(0, str(Path(__file__).parent))
        from _report import write_section

        write_section("everyday", text)
        return 0
    from lar.config import load_config
    from lar.engines import build_engine
    from lar.evals.everyday import EverydayRunner, load_tasks

    if args.report is not None:
        for path in args.report:
            if not path.is_file():
                parser.error(f"--report: no file {str(path)!r}")
            rows = list(_rows(path).values())
            for prefix, title in (("d-", "dev half"), ("t-", "test half (frozen)"), ("g", "draw")):
                part = [r for r in rows if r["id"].startswith(prefix)]
                if part:
                    print(table(f"{title}, {path.name}", part) + "\n")
        pooled = fired_pairs(args.report)
        if pooled:
            names = ", ".join(p.name for p in args.report)
            print(fired_table(f"Policy ablation pooled over {names}", pooled) + "\n")
        return 0
    if args.save is not None and len(args.draw or []) != 1:
        parser.error("--save writes one draw: give exactly one --draw SEED")
    suites = {path: load_tasks(path) for path in args.suites}
    for seed in args.draw or []:
        from lar.evals.draws import draw, part_of, to_yaml

        tasks = draw(seed, per_language=args.per_language)
        if args.save is not None:
            args.save.write_text(to_yaml(tasks), encoding="utf-8")
        suites[Path(f"draw {seed} ({part_of(seed)} seed)")] = tasks
    if args.only:
        suites = {
            p: kept
            for p, ts in suites.items()
            if (kept := [t for t in ts if t.id.startswith(tuple(args.only))])
        }
    if args.shuffle is not None:  # the same tasks in another order: a check of --order-dependent
        import random

        for tasks in suites.values():
            random.Random(args.shuffle).shuffle(tasks)
    done = _rows(args.json) if args.json is not None and args.resume else {}
    config = load_config()
    if args.extra is not None:
        tools = config.tools.model_copy(update={"extra": args.extra})
        config = config.model_copy(update={"tools": tools})
    engine = build_engine(config, args.model)
    max_turns = args.max_turns or config.agent.max_turns
    runner = EverydayRunner(config, engine, track=args.track, max_turns=max_turns)
    if not args.order_dependent and not runner.repeatable():
        print(
            "note: this engine cannot restore its prompt cache: a task's figures may depend "
            "on the task before it",
            file=sys.stderr,
        )
    arm: tuple[str, Any, Any] | None = None  # the other arm: its label, config and agent
    if sum(bool(x) for x in (args.ablate, args.versus, args.ablate_fired)) > 1:
        parser.error("--ablate, --versus or --ablate-fired: one kind of other arm a run")
    if args.resume and (args.ablate or args.versus or args.ablate_fired):
        parser.error("--ablate and --versus run every task twice; --resume does not apply")
    if args.ablate is not None:
        from lar.agents import PolicyRegistry

        if args.ablate not in PolicyRegistry.keys():
            parser.error(f"--ablate: no policy {args.ablate!r} (see `lar eval --help`)")
        without = runner.agent.replace(policies=[f"-{args.ablate}"])
        arm = (f"without {args.ablate}", runner.config, without)
    if args.versus is not None:
        import yaml

        from lar.agents.toolset import configured_builtins
        from lar.errors import ConfigError

        key, sep, raw = args.versus.partition("=")
        if not sep:
            parser.error(f"--versus: {args.versus!r} is not KEY=VALUE")
        try:
            other = overridden(runner.config, key.strip(), yaml.safe_load(raw))
            tools = configured_builtins(other)  # tools.extra and tools.without, as `lar run`
        except (KeyError, ValueError, ConfigError) as exc:
            parser.error(f"--versus {args.versus}: {exc}")
        arm = (args.versus, other, runner.agent.replace(tools=tools))
    mine = (runner.config, runner.agent)
    sink = args.json.open("a", encoding="utf-8") if args.json is not None else None
    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
    fired: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
    try:
        for path, tasks in suites.items():
            rows = []
            for n, task in enumerate(tasks, 1):
                row = done.get(task.id)
                if row is None:
                    row = {**runner.run(task).row(), "track": args.track, "extra": args.extra or []}
                    if sink is not None:
                        sink.write(json.dumps(row, ensure_ascii=False) + "\n")
                        sink.flush()
                if arm is not None:
                    runner.config, runner.agent = arm[1], arm[2]
                    try:
                        off = {**runner.run(task).row(), "track": args.track,
                               "extra": args.extra or [], "arm": arm[0]}  # fmt: skip
                    finally:
                        runner.config, runner.agent = mine
                    if sink is not None:
                        sink.write(json.dumps(off, ensure_ascii=False) + "\n")
                        sink.flush()
                    pairs.append((row, off))
                for name in row.get("policies", []) if args.ablate_fired else []:
                    runner.agent = mine[1].replace(policies=[f"-{name}"])
                    try:
                        off = {**runner.run(task).row(), "track": args.track,
                               "extra": args.extra or [], "arm": f"without {name}"}  # fmt: skip
                    finally:
                        runner.config, runner.agent = mine
                    if sink is not None:
                        sink.write(json.dumps(off, ensure_ascii=False) + "\n")
                        sink.flush()
                    fired[name].append((row, off))
                mark = "ok " if row["passed"] else "FAIL"
                print(f"[{n}/{len(tasks)}] {mark} {task.id} ({row['model_calls']} calls, "
                      f"{row['wall_s']:.1f} s)", file=sys.stderr)  # fmt: skip
                rows.append(row)
            extra = f", with {', '.join(args.extra)}" if args.extra else ""
            print(table(f"{path} — {engine.name}, {args.track} track{extra}", rows) + "\n")
            if any(r.get("language") for r in rows):
                print(table(f"{path}, by language", rows, key="language") + "\n")
            if args.failures:
                for row in rows:
                    if not row["passed"]:
                        answer = " ".join(row["answer"].split())[:160]
                        print(f"- {row['id']}: {'; '.join(row['failures'])} — {answer!r}")
                print()
        if pairs and arm is not None:
            how = f"--ablate {args.ablate}" if args.ablate else f"--versus {args.versus}"
            title = (
                f"`python bench/everyday.py … {how}`: each task run as configured, then "
                f"{arm[0]}, both from the same prompt-cache mark"
            )
            b = "without" if args.ablate else "versus"
            print(ablation(title, pairs, "as is", b) + "\n")
        if args.ablate_fired:
            title = (
                "`python bench/everyday.py … --ablate-fired`: each task run as configured, "
                "then without each policy that spoke in it, from the same prompt-cache mark"
            )
            print(fired_table(title, fired) + "\n")
    finally:
        runner.close()
        if sink is not None:
            sink.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
