"""`lar run --kind`: the agent kind chosen on the command line, or refused by name."""

from __future__ import annotations

from pathlib import Path

from test_cli import configure, lar

from lar.testing import MockOpenAIServer, text_reply


def test_run_with_kind_simple_sends_no_tools(lar_home: Path, tmp_path: Path) -> None:
    with MockOpenAIServer([text_reply("Hello.")]) as srv:
        configure(lar_home, srv.url)
        out = lar("run", "--kind", "simple", "hi there", home=lar_home, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "Hello."
        [request] = srv.requests
        assert not request.get("tools")  # no tool offered, natively or in the prompt
        assert "file_read" not in request["messages"][0]["content"]


def test_an_unknown_kind_is_named_with_the_known_ones(lar_home: Path, tmp_path: Path) -> None:
    with MockOpenAIServer([text_reply("x")]) as srv:
        configure(lar_home, srv.url)
        out = lar("run", "--kind", "teleport", "hi", home=lar_home, cwd=tmp_path)
    assert out.returncode == 1
    assert "unknown agent kind 'teleport'; known: codeact, delegate, loop" in out.stderr


def test_an_unknown_kind_in_the_config_names_the_key(lar_home: Path, tmp_path: Path) -> None:
    (lar_home / "config.yaml").write_text("agent:\n  kind: teleport\n")
    out = lar("run", "hi", home=lar_home, cwd=tmp_path)
    assert out.returncode == 2
    assert "agent.kind" in out.stderr and "unknown agent kind 'teleport'" in out.stderr
