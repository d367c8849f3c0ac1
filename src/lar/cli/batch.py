"""``lar batch FILE.jsonl``: every request of a file, results as JSONL, resumable (Z2)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from lar.cli.render import console_err, exit_code, print_error
from lar.errors import LarError

__all__ = ["batch", "CliAgent"]


@dataclass(frozen=True, slots=True)
class CliAgent:
    """The agent ``lar run`` would build, as a recipe a Ray worker can rebuild it from."""

    model: str | None = None
    workspace: str | None = None
    yes: bool = False
    memory: bool = False
    max_turns: int | None = None

    def __call__(self) -> Any:
        from lar.cli.agent import make_agent

        return make_agent(
            model=self.model,
            track=None,
            workspace=Path(self.workspace) if self.workspace else None,
            max_turns=self.max_turns,
            approver=_allow if self.yes else None,
            ask_user=None,
            quiet=True,
            memory=self.memory,
        )


def _allow(*_: object, **__: object) -> bool:
    return True


def batch(
    file: Annotated[
        Path, typer.Argument(help='Requests, one a line: {"id": "a1", "text": "…"} or "…".')
    ],
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Results file (default: FILE with .results.jsonl)."),
    ] = None,
    executor: Annotated[
        str | None,
        typer.Option(help="local, or ray (default: the config's executor)."),
    ] = None,
    parallel: Annotated[int, typer.Option(min=1, max=256, help="Requests running at once.")] = 4,
    ray_address: Annotated[
        str | None,
        typer.Option(help="An existing Ray cluster (default: ray.address, else a local one)."),
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Allow tools that need confirmation.")
    ] = False,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="A model name from config.yaml.")
    ] = None,
    memory: Annotated[
        bool, typer.Option("--memory", help="Recall and store memories (off: lines stay apart).")
    ] = False,
    max_turns: Annotated[int | None, typer.Option(min=1, max=100, help="Turn limit.")] = None,
) -> None:
    """Run every request of a JSONL file; one result a line in the results file.

    Each request runs in a session of its own. A result is on disk as soon as its run ends:
    run the same command again after an interruption and the ids already in the results file
    are skipped. --executor ray runs the requests as Ray tasks (pip install 'lar[ray]') on a
    local Ray instance, or on --ray-address; both executors give the same results.
    """
    from lar.agents import (
        ResultLog,
        batch_done,
        read_requests,
        run_local,
        run_ray,
        throughput,
    )
    from lar.config import load_config

    err = console_err()
    try:
        config = load_config()
        chosen: Literal["local", "ray"] = config.executor
        if executor is not None:
            if executor not in ("local", "ray"):
                raise LarError(f"--executor must be local or ray (got {executor!r})")
            chosen = executor  # type: ignore[assignment]
        requests = read_requests(file)
        results = out or file.with_name(file.name.removesuffix(".jsonl") + ".results.jsonl")
        done = batch_done(results)
        todo = [r for r in requests if r.id not in done]
        skipped = len(requests) - len(todo)
        err.print(
            f"batch: {len(requests)} requests, {skipped} already in {results}, {len(todo)} to "
            f"run ({chosen}, {parallel} at once)"
        )
        log = ResultLog(results)
        counts = {"ok": 0, "failed": 0}
        started = time.perf_counter()
        first: list[float] = []

        def on_result(result: dict[str, Any]) -> None:
            log.write(result)
            if not first:
                first.append(time.perf_counter() - started)
            counts["ok" if result.get("ok") else "failed"] += 1
            n = counts["ok"] + counts["failed"]
            if n % 10 == 0 or n == len(todo):
                rate = throughput(n, started)
                err.print(f"batch: {n}/{len(todo)} done, {rate:.1f}/s")

        recipe = CliAgent(model=model, yes=yes, memory=memory, max_turns=max_turns)
        try:
            if not todo:
                pass
            elif chosen == "ray":
                address = ray_address or config.ray.address
                run_ray(recipe, todo, parallel, on_result, home=config.home, address=address)
            else:
                agent = recipe()
                try:
                    run_local(agent, todo, parallel, on_result)
                finally:
                    agent.close()
        finally:
            log.close()
    except LarError as exc:
        print_error(exc)
        raise typer.Exit(exit_code(exc)) from None
    took = time.perf_counter() - started
    head = f", the first after {first[0]:.1f} s" if first else ""
    err.print(
        f"batch: ran {len(todo)} in {took:.1f} s{head}, {counts['ok']} ok, {counts['failed']} "
        f"failed; results in {results}"
    )
    if counts["failed"]:
        raise typer.Exit(1)
