"""Agent kinds on the embedded model: CodeAct calls a tool from inside the sandboxed code; an
operative agent picks up its saved state in a new process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from lar import Agent, tool

asked: list[str] = []


@tool
def unit_price(item: str) -> float:
    """The shop's price of one unit of an item, in euros.

    Args:
        item: The item's name, e.g. notebook.
    """
    asked.append(item)
    return {"notebook": 4.25, "pen": 1.3, "stapler": 7.9}.get(item.lower().rstrip("s"), 0.0)


def test_codeact_computes_with_a_tool_called_from_the_sandboxed_code(
    lar_home: Path, tmp_path: Path
) -> None:
    agent = Agent(
        tools=[unit_price], kind="codeact", approver=lambda *a, **k: True, workspace=tmp_path
    )
    result = agent.run("How much do 3 notebooks and 2 pens cost together?")
    assert "15.35" in result.text
    [code] = result.tool_calls
    assert code.name == "code_run"
    # the prices came from the tool, called by the code inside the sandbox, not from the model
    assert sorted(a.lower().rstrip("s") for a in asked) == ["notebook", "pen"]
    assert 'unit_price(item="notebook") → 4.25' in code.result
    assert "15.35" in code.result  # printed by the code


OPERATIVE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from lar import Agent, tool

    @tool
    def calculate(expression: str) -> str:
        '''Work out arithmetic exactly.

        Args:
            expression: The arithmetic, e.g. 2 * 3.
        '''
        return str(eval(expression, {"__builtins__": {}}))

    agent = Agent(tools=[calculate], kind="operative", name="errands", workspace=Path.cwd())
    result = agent.run(sys.argv[1])
    print(result.text)
    """
)


def run_operative(text: str, cwd: Path) -> str:
    out = subprocess.run(
        [sys.executable, "-c", OPERATIVE, text],
        capture_output=True, text=True, cwd=cwd, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_an_operative_agent_resumes_its_saved_state_in_a_new_process(
    lar_home: Path, tmp_path: Path
) -> None:
    run_operative("Keep this for next time: my bike is locked at rack 17 on Elm Street.", tmp_path)
    from lar.memory.state import StateStore

    store = StateStore.at(lar_home / "lar.db")
    saved = store.get("operator:errands:state")
    store.close()
    assert "17" in saved  # saved by the model (save_state) or the run's summary
    answer = run_operative("Which rack is my bike locked at?", tmp_path)
    assert "17" in answer
