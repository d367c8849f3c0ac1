import asyncio
import json
import time
from pathlib import Path

from lar.tools.base import ToolContext, tool
from lar.tools.executor import ToolExecutor
from lar.types import ToolCall


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def secret() -> str:
    """Not for the model."""
    return "s3cret"


@tool(permission="confirm")
def delete_all() -> str:
    """Dangerous."""
    return "deleted"


@tool(timeout_s=0.2)
def slow() -> str:
    """Sleeps too long."""
    time.sleep(2)
    return "late"


@tool
def broken() -> str:
    """Always fails."""
    raise ValueError("disk on fire")


@tool(clip=lambda v: v[:3])
def listing() -> list[int]:
    """Returns many numbers."""
    return list(range(100))


@tool
def big() -> str:
    """Returns a lot of text."""
    return "x" * 10_000


def ctx() -> ToolContext:
    return ToolContext(workspace=Path("."))


def run(executor: ToolExecutor, name: str, args: dict[str, object]):  # type: ignore[no-untyped-def]
    return asyncio.run(executor.run(ToolCall("c1", name, args), ctx()))


def test_success_keeps_value_and_text() -> None:
    r = run(ToolExecutor([add]), "add", {"a": 2, "b": 3})
    assert r.ok and r.value == 5 and r.content == "5"


def test_unknown_tool_is_returned_to_the_model_with_the_available_names() -> None:
    r = run(ToolExecutor([add, big]), "multiply", {"a": 1})
    assert not r.ok and r.error is not None and r.error.code == "unknown_tool"
    assert json.loads(r.content) == {
        "error": "no tool named 'multiply'",
        "detail": "available tools: add, big",
        "code": "unknown_tool",
    }


def test_allowlist_hides_and_rechecks() -> None:
    ex = ToolExecutor([add, secret], allowlist=["add"])
    assert [t.name for t in ex.visible()] == ["add"]
    r = run(ex, "secret", {})
    assert not r.ok and r.error is not None and r.error.code == "not_allowed"
    assert "s3cret" not in r.content


def test_invalid_arguments_explain_the_schema() -> None:
    r = run(ToolExecutor([add]), "add", {"a": "one"})
    assert r.error is not None and r.error.code == "invalid_arguments"
    assert "argument 'a'" in r.error.detail and "missing required argument 'b'" in r.error.detail
    assert "Expected: add(a: int, b: int)" in r.error.detail


def test_confirm_tools_need_approval() -> None:
    denied = run(ToolExecutor([delete_all]), "delete_all", {})
    assert denied.error is not None and denied.error.code == "denied"
    asked: list[str] = []
    ex = ToolExecutor([delete_all], approver=lambda call, t: asked.append(call.name) or True)
    assert run(ex, "delete_all", {}).value == "deleted"
    assert asked == ["delete_all"]


def test_timeout_is_normalized() -> None:
    r = run(ToolExecutor([slow]), "slow", {})
    assert r.error is not None and r.error.code == "timeout"
    assert "did not finish in 0.2s" in r.error.detail


def test_exceptions_become_data() -> None:
    r = run(ToolExecutor([broken]), "broken", {})
    assert r.error is not None and r.error.code == "tool_error"
    assert r.error.detail == "ValueError: disk on fire"


def test_clip_hook_and_hard_cap() -> None:
    assert run(ToolExecutor([listing]), "listing", {}).content == "[0, 1, 2]"
    r = run(ToolExecutor([big], clip_chars=100), "big", {})
    assert r.content.startswith("x" * 100)
    assert r.content.endswith("[truncated: 9900 more characters not shown]")
    assert r.value == "x" * 10_000  # the API caller still gets everything


def test_policy_can_trust_a_tool_but_not_every_command(tmp_path: Path) -> None:
    from lar.tools.builtin import shell

    asked: list[str] = []

    def approver(call: ToolCall, t: object) -> bool:
        asked.append(call.arguments["command"])
        return True

    ex = ToolExecutor([shell], approver=approver, permissions={"shell": "auto"})
    ctx = ToolContext(workspace=tmp_path)

    def go(cmd: str):  # type: ignore[no-untyped-def]
        return asyncio.run(ex.run(ToolCall("c", "shell", {"command": cmd}), ctx))

    assert go("echo hi").ok and asked == []  # trusted by policy: no question
    (tmp_path / "build").mkdir()
    assert go("rm -rf build").ok and asked == ["rm -rf build"]  # dangerous: asked anyway
    refused = go("rm -rf ~")
    assert refused.error is not None and refused.error.code == "refused"
    assert asked == ["rm -rf build"]  # hard line: not even offered to the approver
    denied = ToolExecutor([shell], permissions={"shell": "auto"})
    r = asyncio.run(denied.run(ToolCall("c", "shell", {"command": "rm -rf build2"}), ctx))
    assert r.error is not None and r.error.code == "denied"  # nobody to confirm: refused


def test_auth_tools_need_a_configured_credential(tmp_path: Path) -> None:
    from lar.tools.base import tool as make_tool

    @make_tool(permission="auth")
    def bank_balance(ctx: ToolContext) -> str:
        """Reads the balance with the user's token."""
        return f"used token ending {ctx.credential[-4:]}" if ctx.credential else "no token"

    ctx = ToolContext(workspace=tmp_path)
    call = ToolCall("c", "bank_balance", {})
    missing = asyncio.run(ToolExecutor([bank_balance], approver=lambda c, t: True).run(call, ctx))
    assert missing.error is not None and missing.error.code == "denied"
    assert "tools.credentials.bank_balance" in missing.error.detail
    ex = ToolExecutor([bank_balance], credentials={"bank_balance": "tok-12345678"})
    assert asyncio.run(ex.run(call, ctx)).value == "used token ending 5678"
    empty = ToolExecutor(
        [bank_balance], credentials={"bank_balance": ""}, approver=lambda c, t: True
    )
    unset = asyncio.run(empty.run(call, ctx))  # `${BANK_TOKEN:-}` with the variable unset
    assert unset.error is not None and "tools.credentials.bank_balance" in unset.error.detail
