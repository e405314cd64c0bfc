"""Cancel tokens: cancellation, children, and the courtesy pause that gives the GUI thread priority."""

from __future__ import annotations

import threading
import time

import pytest

from inspector.core.cancel import CancelToken
from inspector.core.errors import Cancelled


def _check_in_thread(token: CancelToken) -> tuple[threading.Thread, threading.Event, list[BaseException]]:
    returned = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            token.check()
        except BaseException as exc:
            errors.append(exc)
        returned.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, returned, errors


def test_check_raises_once_cancelled_and_children_follow_their_parent() -> None:
    parent = CancelToken()
    child = parent.child()
    parent.check()
    parent.cancel()
    with pytest.raises(Cancelled):
        parent.check()
    with pytest.raises(Cancelled):
        child.check()


def test_check_waits_while_the_gui_thread_is_busy_and_goes_on_when_it_is_idle() -> None:
    gui_idle = threading.Event()  # clear: the GUI thread is handling events
    token = CancelToken(courtesy=gui_idle)
    thread, returned, errors = _check_in_thread(token.child())  # children share the courtesy
    assert not returned.wait(0.01), "the worker went on while the GUI thread was busy"
    gui_idle.set()
    assert returned.wait(5)
    thread.join(5)
    assert errors == []


def test_a_cancel_during_the_courtesy_pause_is_reported_when_it_ends() -> None:
    gui_idle = threading.Event()
    token = CancelToken(courtesy=gui_idle)
    thread, returned, errors = _check_in_thread(token)
    token.cancel()
    gui_idle.set()
    assert returned.wait(5)
    thread.join(5)
    assert len(errors) == 1 and isinstance(errors[0], Cancelled)


def test_a_gui_thread_that_never_goes_idle_only_slows_the_work_down() -> None:
    token = CancelToken(courtesy=threading.Event())  # never set
    thread, returned, errors = _check_in_thread(token)
    assert returned.wait(5), "check() must give up waiting after a bounded pause"
    thread.join(5)
    assert errors == []


def test_wait_wakes_as_soon_as_another_thread_cancels() -> None:
    token = CancelToken()
    assert token.wait(0.01) is False  # nothing cancelled: the whole wait, then False
    timer = threading.Timer(0.05, token.cancel)
    timer.start()
    started = time.monotonic()
    assert token.wait(30) is True
    assert time.monotonic() - started < 10  # woken by the cancel, not by the 30 s timeout
    assert token.wait(30) is True  # already cancelled: at once
    timer.join()
