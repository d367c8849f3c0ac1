"""MCP servers' tools as Lar tools, against real servers: namespaced, asking first by default,
called by an agent; a killed or hung server marks its tools unavailable, is restarted, and the
run still ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from lar import Agent
from lar.config import McpServerSettings
from lar.engines.scripted import ScriptedEngine
from lar.mcp import McpServers
from lar.tools import builtin_tools

HANG = Path(__file__).parent / "fixtures" / "hang_server.py"


def time_server(zone: str = "UTC", **extra: object) -> McpServerSettings:
    return McpServerSettings(
        command=sys.executable,
        args=["-m", "mcp_server_time", "--local-timezone", zone],
        **extra,  # type: ignore[arg-type]
    )


def _call(name: str, **arguments: object) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def _wait_up(servers: McpServers, within_s: float = 30) -> None:
    deadline = time.monotonic() + within_s
    while servers.servers[0].state != "up" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert servers.servers[0].state == "up", servers.servers[0].problem


def test_a_stdio_servers_tools_are_namespaced_and_ask_first_unless_configured() -> None:
    servers = McpServers({"time": time_server(tools={"convert_time": "auto"})})
    try:
        tools = {t.name: t for t in servers.start()}
        assert set(tools) == {"time__get_current_time", "time__convert_time"}
        assert tools["time__get_current_time"].permission == "confirm"  # the default
        assert tools["time__convert_time"].permission == "auto"  # configured per tool
        assert tools["time__get_current_time"].signature() == (
            "time__get_current_time(timezone: str)"
        )
        # Their listing counts against the prompt's budget like any tool's.
        plain = Agent(engine=ScriptedEngine(["ok"])).session().preview("What time is it?")
        served = Agent(engine=ScriptedEngine(["ok"]), tools=[*builtin_tools(), *tools.values()])
        with_mcp = served.session().preview("What time is it?")
        assert with_mcp.tokens["tools"] > plain.tokens["tools"]
        listed = with_mcp.messages[0].content
        assert "time__get_current_time(timezone: str)" in listed
        # While its server is down a tool is not offered (and its calls fail with the reason).
        server = servers.servers[0]
        server.state, server.problem = "down", "RuntimeError: gone"
        assert "time__get_current_time" not in [t.name for t in served.session().executor.visible()]
        assert tools["time__get_current_time"].down() == (  # type: ignore[misc]
            "MCP server 'time' is unavailable (RuntimeError: gone)"
        )
        server.state = "up"
    finally:
        servers.close()


def test_an_agent_calls_a_servers_tool_and_reads_its_result() -> None:
    servers = McpServers({"time": time_server()})
    try:
        tools = servers.start()
        engine = ScriptedEngine(
            [_call("get_current_time", timezone="Asia/Tokyo"), "It is noon in Tokyo."]
        )
        asked: list[str] = []
        agent = Agent(
            engine=engine, tools=tools, approver=lambda c, t: asked.append(c.name) or True
        )
        result = agent.run("What time is it in Tokyo?")
        assert asked == ["time__get_current_time"]  # it asked first, by its full name
        [call] = result.tool_calls
        assert call.ok and json.loads(call.result)["timezone"] == "Asia/Tokyo"
        assert '"timezone": "Asia/Tokyo"' in engine.calls[1][-1].content  # the model read it
        # Invalid arguments are stopped by the server's own schema before it is called.
        bad = Agent(
            engine=ScriptedEngine([_call("time__get_current_time"), "Sorry."]),
            tools=tools,
            approver=lambda c, t: True,
        ).run("time?")
        assert bad.tool_calls == []
    finally:
        servers.close()


def _server_pids(pattern: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True, check=False)
    return [int(p) for p in found.stdout.split() if int(p) != os.getpid()]


def test_a_server_killed_mid_session_fails_its_calls_is_restarted_and_the_run_ends() -> None:
    servers = McpServers({"time": time_server("Europe/Oslo")})
    try:
        tools = servers.start()
        server = servers.servers[0]
        killed: list[int] = []

        def approve(call: object, tool: object) -> bool:
            if len(killed) == 0 and server.state == "up" and approve.calls == 1:  # type: ignore[attr-defined]
                for pid in _server_pids("mcp_server_time --local-timezone Europe/Oslo"):
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                time.sleep(0.3)
            approve.calls += 1  # type: ignore[attr-defined]
            return True

        approve.calls = 0  # type: ignore[attr-defined]
        engine = ScriptedEngine(
            [
                _call("time__get_current_time", timezone="Asia/Tokyo")
                + _call("time__get_current_time", timezone="Europe/Paris"),
                "I could get Tokyo's time only.",
            ],
        )
        agent = Agent(engine=engine, tools=tools, approver=approve, max_turns=4)
        result = agent.run("What time is it in Tokyo and in Paris?")
        assert killed, "the server process was not found"
        assert result.stop_reason != "error" and result.text  # the run ended with an answer
        first, second = result.tool_calls
        assert first.ok and not second.ok
        assert "MCP server 'time'" in str(second.result) and "restarting" in str(second.result)
        _wait_up(servers)  # restarted with backoff
        assert server.restarts >= 1
        engine2 = ScriptedEngine([_call("time__get_current_time", timezone="UTC"), "Done."])
        again = Agent(engine=engine2, tools=tools, approver=lambda c, t: True).run("UTC time?")
        assert again.tool_calls[0].ok
    finally:
        servers.close()


def test_a_hung_server_call_times_out_the_server_is_restarted_and_answers_again() -> None:
    settings = McpServerSettings(
        command=sys.executable, args=[str(HANG)], permission="auto", timeout_s=2
    )
    servers = McpServers({"slow": settings})
    try:
        tools = servers.start()
        engine = ScriptedEngine([_call("slow__wait", seconds=120), "It did not answer."])
        result = Agent(engine=engine, tools=tools).run("Wait for the slow server.")
        [call] = result.tool_calls
        assert not call.ok and call.error is not None and call.error.code == "timeout"
        assert "did not finish in 2s" in str(call.result)
        assert result.text.startswith("It did not answer.")  # and the run went on to end
        _wait_up(servers)
        engine2 = ScriptedEngine([_call("slow__ping"), "pong it is"])
        assert Agent(engine=engine2, tools=tools).run("ping").tool_calls[0].result == "pong"
    finally:
        servers.close()


def test_the_sdks_own_request_timeout_is_a_timeout_too_and_restarts_the_server() -> None:
    # The SDK's read bound (timeout_s + 5) is a backstop; where it ends a call before the
    # executor's (here the tool's bound is raised past it), the call is still a timeout and
    # the hung server is restarted, not left up to hang the next call.
    settings = McpServerSettings(
        command=sys.executable, args=[str(HANG)], permission="auto", timeout_s=1
    )
    servers = McpServers({"slow": settings})
    try:
        tools = servers.start()
        for tool in tools:
            tool.timeout_s = 60
        engine = ScriptedEngine([_call("slow__wait", seconds=120), "It did not answer."])
        [call] = Agent(engine=engine, tools=tools).run("Wait for the slow server.").tool_calls
        assert not call.ok and call.error is not None and call.error.code == "timeout"
        assert servers.servers[0].restarts >= 1 or servers.servers[0].state != "up"
        _wait_up(servers)
        engine2 = ScriptedEngine([_call("slow__ping"), "pong it is"])
        assert Agent(engine=engine2, tools=tools).run("ping").tool_calls[0].result == "pong"
    finally:
        servers.close()


def test_a_server_that_does_not_start_is_left_out_with_the_reason() -> None:
    servers = McpServers({"gone": McpServerSettings(command="/nonexistent/mcp-server")})
    try:
        assert servers.start(timeout_s=5) == []
        [note] = servers.notes
        assert note.startswith("MCP server 'gone' did not start (") and "left out" in note
    finally:
        servers.close()


def test_the_reference_server_over_streamable_http(everything_url: str) -> None:
    servers = McpServers(
        {"everything": McpServerSettings(url=everything_url, headers={"X-Lar-Test": "1"})}
    )
    try:
        tools = {t.name: t for t in servers.start()}
        assert "everything__echo" in tools and "everything__get-sum" in tools
        assert all(t.permission == "confirm" for t in tools.values())
        engine = ScriptedEngine([_call("everything__get-sum", a=2, b=40), "42."])
        agent = Agent(engine=engine, tools=list(tools.values()), approver=lambda c, t: True)
        [call] = agent.run("What is 2 + 40?").tool_calls
        assert call.ok and "42" in str(call.result)
    finally:
        servers.close()
