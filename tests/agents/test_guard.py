from lar.agents.guard import LoopGuard, call_hash
from lar.types import ToolCall


def c(name: str, **args: object) -> ToolCall:
    return ToolCall("id", name, dict(args))


def test_hash_ignores_argument_order_and_call_id() -> None:
    assert call_hash(ToolCall("1", "f", {"a": 1, "b": 2})) == call_hash(
        ToolCall("2", "f", {"b": 2, "a": 1})
    )
    assert call_hash(c("f", a=1)) != call_hash(c("f", a=2))


def test_same_call_more_than_three_times_is_blocked() -> None:
    guard = LoopGuard()
    assert [guard.check(c("f", a=1)) for _ in range(3)] == [None, None, None]
    reason = guard.check(c("f", a=1))
    assert reason is not None and "already ran 3 times" in reason
    assert guard.check(c("f", a=2)) is None


def test_ping_pong_in_the_window_is_blocked() -> None:
    guard = LoopGuard()
    assert guard.check(c("a")) is None
    assert guard.check(c("b")) is None
    assert guard.check(c("a")) is None
    reason = guard.check(c("b"))
    assert reason is not None and "alternating" in reason


def test_progress_is_not_ping_pong() -> None:
    guard = LoopGuard()
    assert all(guard.check(c("f", step=i)) is None for i in range(10))
