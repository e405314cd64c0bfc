"""`in_order`: a job's independent pieces on a few threads, handed to one consumer in order."""

from __future__ import annotations

import threading
import time

import pytest

from inspector.core import ordered
from inspector.core.ordered import in_order


@pytest.fixture
def two_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ordered.os, "cpu_count", lambda: 2)


def test_results_come_in_the_items_order_even_when_later_ones_finish_first(two_cpus: None) -> None:
    def slow_for_small(n: int) -> int:
        time.sleep(0.002 * (10 - n))  # the first items take longest
        return n * n

    assert list(in_order(slow_for_small, range(10), threads=2)) == [(n, n * n) for n in range(10)]


def test_work_runs_on_other_threads_and_never_far_ahead_of_the_consumer(two_cpus: None) -> None:
    started: list[int] = []
    names: set[str] = set()

    def piece(n: int) -> int:
        started.append(n)
        names.add(threading.current_thread().name)
        return n

    results = in_order(piece, range(100), threads=2, name="pieces")
    first = next(results)
    time.sleep(0.05)  # the threads have had all the time they want
    assert first == (0, 0) and len(started) <= 1 + 2 * 2
    assert all(name.startswith("pieces") for name in names)
    assert [n for n, _ in results] == list(range(1, 100))


def test_one_thread_or_one_cpu_runs_in_the_callers_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ordered.os, "cpu_count", lambda: 1)
    seen: set[int] = set()
    assert list(in_order(lambda n: seen.add(threading.get_ident()) or n, range(3), threads=4)) == [
        (0, 0),
        (1, 1),
        (2, 2),
    ]
    assert seen == {threading.get_ident()}


def test_a_failing_piece_stops_the_rest_and_no_thread_outlives_the_job(two_cpus: None) -> None:
    ran: list[int] = []

    def piece(n: int) -> int:
        ran.append(n)
        if n == 3:
            raise ValueError("damaged")
        time.sleep(0.005)
        return n

    before = threading.active_count()
    with pytest.raises(ValueError, match="damaged"):
        list(in_order(piece, range(1000), threads=2))
    assert len(ran) < 20  # the pieces under way, not the thousand
    assert threading.active_count() == before
