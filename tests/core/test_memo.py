"""`inspector.core.memo.memo`: results remembered by argument, within a bound."""

from __future__ import annotations

import pytest

from inspector.core.memo import memo


def test_a_result_is_computed_once_per_argument_and_forgotten_only_when_the_memo_is_full() -> None:
    calls: list[tuple[int, str]] = []

    @memo(3)
    def layout(size: int, endian: str) -> str:
        """The format of `size` words."""
        calls.append((size, endian))
        return endian + "Q" * size

    assert layout(2, "<") == "<QQ" and layout(2, "<") == "<QQ" and layout(2, ">") == ">QQ"
    assert calls == [(2, "<"), (2, ">")]
    layout(3, "<")  # the third: the memo is full, nothing forgotten yet
    layout(2, "<")
    assert len(calls) == 3
    layout(4, "<")  # a fourth argument: the memo starts again with it alone
    layout(2, "<")
    assert calls[-2:] == [(4, "<"), (2, "<")]
    assert layout.__name__ == "layout" and layout.__doc__ == "The format of `size` words."


def test_a_failure_is_not_remembered_and_unhashable_arguments_are_refused() -> None:
    attempts = []

    @memo(8)
    def parse(text: str) -> int:
        attempts.append(text)
        return int(text)

    for _ in range(2):
        with pytest.raises(ValueError):
            parse("x")
    assert attempts == ["x", "x"]
    with pytest.raises(TypeError):
        parse(["1"])  # type: ignore[arg-type]
