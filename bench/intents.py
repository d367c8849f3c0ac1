"""The roles' intent parser on phrasings written for the two example roles.

    .venv/bin/python bench/intents.py [--set dev|test|both] [--show] [--write]

Each case is a request to one role and the intent it means, or null when it is out of scope.
Counts, per set: in-scope requests taken with the right intent, taken with a wrong one (the
failure that matters: a wrong entry state), and not taken (choices offered: counted "top-3" when
the right intent is among them); out-of-scope requests offered choices (right) or taken (wrong).
Tune on dev (evals/roles/intents-dev.yaml); the frozen test set is only reported.
``--write`` puts both tables into BENCHMARKS.md (section intents).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import ROOT, write_section  # noqa: E402

from lar.roles import IntentParser, load_role  # noqa: E402

ROLES = {
    "contract-prescreen": ROOT / "examples/roles/contract-prescreen/agent.yaml",
    "log-triage": ROOT / "examples/roles/log-triage/agent.yaml",
}


def parser_for(name: str) -> IntentParser:
    parser = IntentParser.for_role(load_role(ROLES[name]))
    assert parser is not None, f"{name} has no intents"
    return parser


def evaluate(path: Path, show: bool) -> Counter[str]:
    cases = yaml.safe_load(path.read_text())["cases"]
    parsers = {name: parser_for(name) for name in ROLES}
    counts: Counter[str] = Counter()
    for case in cases:
        match = parsers[case["role"]].parse(case["text"])
        want = case["intent"]
        choices = [c for c, _ in match.choices]
        if want is None:
            verdict = "out: choices offered" if match.intent is None else "out: TAKEN (wrong)"
        elif match.intent == want:
            verdict = "in: right intent"
        elif match.intent is not None:
            verdict = "in: WRONG intent"
        else:
            verdict = "in: choices, right in top-3" if want in choices else "in: choices, missed"
        counts[verdict] += 1
        counts["in" if want else "out"] += 1
        if show:
            print(f"{verdict:<28} {match.confidence:.2f} {case['text']!r} -> {match.intent}")
    return counts


def table(results: dict[str, Counter[str]]) -> str:
    rows = [
        "| set | in scope | right intent | wrong intent | choices (right in top-3) | "
        "out of scope | choices offered | taken |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, c in results.items():
        top3 = c["in: choices, right in top-3"]
        choices = top3 + c["in: choices, missed"]
        right = c["in: right intent"]
        rows.append(
            f"| {name} | {c['in']} | {right} ({right / c['in']:.0%}) "
            f"| {c['in: WRONG intent']} | {choices} ({top3}) | {c['out']} "
            f"| {c['out: choices offered']} | {c['out: TAKEN (wrong)']} |"
        )
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--set", choices=["dev", "test", "both"], default="dev")
    ap.add_argument("--show", action="store_true", help="print every case")
    ap.add_argument("--write", action="store_true", help="write the table into BENCHMARKS.md")
    args = ap.parse_args()
    sets = ["dev", "test"] if args.set == "both" else [args.set]
    results = {s: evaluate(ROOT / f"evals/roles/intents-{s}.yaml", args.show) for s in sets}
    out = table(results)
    print(out)
    if args.write:
        title = "Intent parser of the example roles (`bench/intents.py --set both`)"
        write_section("intents", f"{title}\n\n{out}")


if __name__ == "__main__":
    main()
