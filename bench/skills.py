"""Skills on the embedded model: does it open the skill a request needs, and then follow it?

    .venv/bin/python bench/skills.py --set dev [--no-skill-tail] [--limit N]

Installs the first 20 skills of ../shared/corpora/skills/ that load (path order, nothing chosen
by hand) into a temporary LAR_HOME, gives the agent Lar's built-in tools and those 20 skills,
and runs each request of evals/skills/{dev,test}.jsonl with every confirmation denied (nothing
runs that needs a yes; the attempted call is what is measured). Per request:

- opened: the first skill the model opened is the request's skill;
- wrong: it opened another skill first;
- followed: after opening the right skill, its next call is to another tool and names a program
  or module the skill's own code blocks use (first words of shell lines, Python imports) — read
  mechanically from the skill, never written per request; skills whose code blocks name none
  are left out of this count.

Also prints the system prompt's tokens by the model's tokenizer (20 skills enabled).
``--no-skill-tail`` is the ablation of the instruction sent after a skill opens
(lar.calling.prompt.SKILL_TAIL); ``--ablate reopened_skill`` turns that policy off (a skill
opened again becomes its guide's command, asked for in a short prompt). Tune on dev; test is
frozen (evals/README.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpora" / "skills"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", choices=["dev", "test"], default="dev")
    ap.add_argument("--no-skill-tail", action="store_true")
    ap.add_argument("--ablate", default="", help="a policy to turn off (e.g. reopened_skill)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    home = Path(tempfile.mkdtemp(prefix="lar-bench-skills-"))
    (home / "models").symlink_to(Path(os.environ.get("LAR_MODELS", "~/.lar/models")).expanduser())
    os.environ["LAR_HOME"] = str(home)

    from lar import Agent
    from lar.config import load_config
    from lar.evals.skillcalls import command_words, followed_after_opening
    from lar.skills import SkillStore, installed_skill_tools, scan_folder
    from lar.tools import builtin_tools
    from lar.types import ToolCallStarted

    if args.no_skill_tail:
        import lar.agents.request as request
        from lar.calling.prompt import NEXT_STEP_TAIL

        request.SKILL_TAIL = NEXT_STEP_TAIL  # type: ignore[attr-defined]

    loaded = [r.skill for r in scan_folder(CORPUS) if r.skill is not None][:20]
    store = SkillStore(home)
    for skill in loaded:
        report = store.install(str(skill.folder), trust=True)
        assert not report.refused, report.refused
    tools = builtin_tools()
    skills, notes = installed_skill_tools(home, [t.name for t in tools])
    assert len(skills) == 20 and not notes, notes
    bodies = {s.tool_name: command_words(s.body) for s in loaded}
    cases = [json.loads(line) for line in (ROOT / "evals" / "skills" / f"{args.set}.jsonl").open()]
    if args.limit:
        cases = cases[: args.limit]
    workspace = Path(tempfile.mkdtemp(prefix="lar-bench-ws-"))
    agent = Agent(
        tools=[*tools, *skills],
        config=load_config(),
        workspace=workspace,
        approver=lambda call, tool: False,
        max_turns=3,
        memory=False,
        policies=[f"-{args.ablate}"] if args.ablate else None,
    )
    view = agent.preview("Hello")
    system_tokens = view.tokens["system"] + view.tokens["tools"] + view.tokens["memory"]
    print(f"system prompt with 20 skills: {system_tokens} tokens (skills {view.tokens['skills']})")
    rows = []
    started = time.time()
    for i, case in enumerate(cases, 1):
        want = "skill_" + case["skill"].replace("-", "_")
        calls = []
        for event in agent.stream(case["request"]):
            if isinstance(event, ToolCallStarted):
                calls.append(event.call)
        agent.session().reset()
        opened = [c.name for c in calls if c.name.startswith("skill_")]
        first = opened[0] if opened else None
        followed = None
        words = bodies.get(want, set())
        if first == want and words:
            followed = followed_after_opening(calls, want, words)
        row = {**case, "calls": [f"{c.name}({json.dumps(c.arguments)[:80]})" for c in calls],
               "opened": first == want, "wrong": first is not None and first != want,
               "followed": followed}  # fmt: skip
        rows.append(row)
        mark = "ok" if row["opened"] else ("WRONG " + str(first) if row["wrong"] else "none")
        print(f"[{i}/{len(cases)} {time.time() - started:.0f}s] {mark:28} follow={followed} "
              f"{case['request'][:60]}", flush=True)  # fmt: skip
    agent.close()
    n = len(rows)
    opened = sum(r["opened"] for r in rows)
    wrong = sum(r["wrong"] for r in rows)
    judged = [r for r in rows if r["followed"] is not None]
    followed = sum(bool(r["followed"]) for r in judged)
    variant = "no skill tail" if args.no_skill_tail else "all on"
    if args.ablate:
        variant = f"without {args.ablate}"
    print(
        f"\n{args.set} ({variant}): opened the right skill {opened}/{n}, a wrong one {wrong}/{n}, "
        f"followed {followed}/{len(judged)} of those opened with commands to follow"
    )
    out = args.out or ROOT / "evals" / "results" / (
        f"skills-{args.set}{'-no-tail' if args.no_skill_tail else ''}"
        f"{'-no-' + args.ablate if args.ablate else ''}.json"
    )
    out.write_text(json.dumps({"system_tokens": system_tokens, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
