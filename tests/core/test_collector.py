"""`collector_paused`: the cycle collector is held off while a walk (or a conversion) builds its
objects, and the caller's thresholds are back afterwards, however the holders overlap."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Callable, Iterator

import pytest

from inspector.core.collector import collector_paused
from inspector.core.process import ProcessOptions, driver, process
from inspector.core.report import json_report
from inspector.core.report.json_report import render_json
from inspector.resources import sample_dump


@pytest.fixture
def small_thresholds() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(50, 7, 9)
    try:
        yield gc.get_threshold()
    finally:
        gc.set_threshold(*before)


def test_the_first_holder_raises_the_threshold_and_the_last_one_puts_the_callers_back(
    small_thresholds: tuple[int, int, int],
) -> None:
    with collector_paused:
        paused = gc.get_threshold()
        with collector_paused:
            assert gc.get_threshold() == paused
        assert gc.get_threshold() == paused  # an inner holder leaving does not end the pause
    assert paused[0] > 1_000_000 and paused[1:] == small_thresholds[1:]
    assert gc.get_threshold() == small_thresholds


def test_holders_on_two_threads_end_the_pause_only_when_both_are_done(
    small_thresholds: tuple[int, int, int],
) -> None:
    entered, leave = threading.Event(), threading.Event()

    def other() -> None:
        with collector_paused:
            entered.set()
            assert leave.wait(5)

    thread = threading.Thread(target=other)
    with collector_paused:
        thread.start()
        assert entered.wait(5)
    assert gc.get_threshold()[0] > 1_000_000  # the other thread still holds it
    leave.set()
    thread.join(5)
    assert gc.get_threshold() == small_thresholds


def _collections_while(work: Callable[[], None]) -> list[int]:
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.callbacks.append(count)
    try:
        work()
    finally:
        gc.callbacks.remove(count)
    return collections


def _walk_and_report() -> None:
    state = process(sample_dump(), ProcessOptions(use_symbols_cache=False))
    assert state.threads
    render_json(state)


def test_a_walk_and_its_report_collect_at_most_once_each_and_leave_the_thresholds(
    small_thresholds: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a first threshold of 50 the sample's walk and report collect dozens of times; paused, the
    allocations left over are collected once after each (when the caller's threshold is back)."""
    _walk_and_report()  # the modules a first walk imports are not what this counts
    paused = _collections_while(_walk_and_report)
    assert len(paused) <= 2
    assert gc.get_threshold() == small_thresholds
    monkeypatch.setattr(driver, "collector_paused", contextlib.nullcontext())
    monkeypatch.setattr(json_report, "collector_paused", contextlib.nullcontext())
    assert len(_collections_while(_walk_and_report)) > 10 * max(1, len(paused))
