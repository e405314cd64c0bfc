"""`inspector.core.logs`: loggers that import `logging` only when a message is to be written.

Each case runs in a fresh interpreter: whether `logging` is imported is the point.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest


def _child(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )


def test_a_message_below_warning_is_dropped_without_importing_logging() -> None:
    run = _child(
        """
        import sys
        from inspector.core.logs import get_logger
        log = get_logger("inspector.x")
        log.debug("quiet %s", 1)
        log.info("quiet too")
        print("logging" in sys.modules)
        """
    )
    assert (run.stdout.strip(), run.stderr) == ("False", "")


def test_a_warning_is_written_as_logging_would_write_it() -> None:
    # nobody configured logging: its last-resort handler writes WARNING and above to stderr
    run = _child(
        """
        from inspector.core.logs import get_logger
        get_logger("inspector.x").warning("the index of %s is stale", "a.sym")
        """
    )
    assert run.stderr == "the index of a.sym is stale\n"


def test_a_set_up_waits_for_the_first_written_message_then_records_name_the_caller() -> None:
    run = _child(
        """
        import json, sys
        from inspector.core import logs
        records = []
        def setup():
            import logging
            class Keep(logging.Handler):
                def emit(self, record):
                    records.append([record.levelname, record.name, record.getMessage(), record.funcName,
                                    record.exc_info is not None])
            logging.getLogger().addHandler(Keep())
            logging.getLogger().setLevel(logging.DEBUG)
        logs.set_threshold(logs.DEBUG)
        logs.when_imported(setup)
        waited = "logging" not in sys.modules
        log = logs.get_logger("inspector.y")
        def caller():
            log.debug("one %d", 1)
            try:
                raise ValueError("bad")
            except ValueError:
                log.exception("two")
        caller()
        print(json.dumps([waited, records]))
        """
    )
    waited, records = json.loads(run.stdout)
    assert waited
    assert records == [
        ["DEBUG", "inspector.y", "one 1", "caller", False],
        ["ERROR", "inspector.y", "two", "caller", True],
    ]


@pytest.mark.parametrize("imported_first", [True, False])
def test_a_cancelled_set_up_never_runs(imported_first: bool) -> None:
    run = _child(
        f"""
        import sys
        if {imported_first}:
            import logging
        from inspector.core import logs
        ran = []
        def setup():
            ran.append(1)
        logs.when_imported(setup)
        logs.cancel(setup)
        logs.get_logger("z").warning("w")
        print(len(ran))
        """
    )
    # already imported: the set-up runs at once (and cannot be taken back); else it never runs
    assert run.stdout.strip() == ("1" if imported_first else "0")


def test_set_ups_run_in_the_order_given_even_when_logging_is_imported_in_between() -> None:
    # the CLI's basic set-up waits; `triage --verbose` then lowers the level after `logging` was
    # imported by something else: the basic set-up must not undo it later
    run = _child(
        """
        import sys
        from inspector.core import logs
        order = []
        def basic():
            import logging
            order.append("basic")
            logging.getLogger().setLevel(logging.WARNING)
        def verbose():
            import logging
            order.append("verbose")
            logging.getLogger().setLevel(logging.DEBUG)
        logs.when_imported(basic)
        import logging  # a library imports it
        logs.when_imported(verbose)
        logs.get_logger("inspector.z").debug("seen")
        print(order, logging.getLogger().level)
        """
    )
    assert run.stdout.strip() == "['basic', 'verbose'] 10"
