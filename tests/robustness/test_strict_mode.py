"""Strict mode: a parser's own Python exception is a bug to see, not damage to report.

The tests run in strict mode (`tests/conftest.py` sets `CRASH_INSPECTOR_STRICT`), so a parser
that trips over its own `IndexError` on any damaged variant fails the robustness suite instead
of passing as "bad data". The undamaged seeds must read without any such failure at all.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from inspector.core import strict
from inspector.core.minidump import Minidump, StreamType
from inspector.core.minidump import dump as dump_module
from inspector.core.process import ProcessOptions, process
from tests.robustness.conftest import collected_seeds
from tests.robustness.damage import DumpSeed

SEEDS = collected_seeds()


@pytest.fixture
def lenient() -> Iterator[None]:
    """Strict mode off, as in the shipped program."""
    strict.set_strict(False)
    try:
        yield
    finally:
        strict.set_strict(None)


def test_the_tests_run_in_strict_mode() -> None:
    assert strict.strict()


@pytest.mark.parametrize("seed", SEEDS, ids=[s.name for s in SEEDS])
def test_undamaged_seeds_report_no_unreadable_stream(seed: DumpSeed, lenient: None) -> None:
    """Without strict mode nothing would fail loudly: no problem may say a stream was unreadable."""
    options = ProcessOptions(symbol_paths=seed.symbol_paths, use_symbols_cache=False)
    state = process(Minidump.from_bytes(seed.data), options)
    assert [p.message for p in state.problems if "unreadable" in p.message] == []
    assert all(thread.frames for thread in state.threads)


def _broken_parser(_ctx: object) -> object:
    raise IndexError("tuple index out of range")


def test_a_parser_bug_is_raised_in_strict_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dump_module, "parse_system_info", _broken_parser)
    dump = Minidump.from_bytes(SEEDS[0].data)
    with pytest.raises(IndexError):
        dump.parse_all()


def test_a_parser_bug_is_damage_without_strict_mode(monkeypatch: pytest.MonkeyPatch, lenient: None) -> None:
    monkeypatch.setattr(dump_module, "parse_system_info", _broken_parser)
    dump = Minidump.from_bytes(SEEDS[0].data)
    dump.parse_all()
    messages = [p.message for p in dump.problems if p.stream_type == StreamType.SystemInfoStream]
    assert messages[0] == "SystemInfoStream: unreadable (IndexError: tuple index out of range)"
    assert dump.system_info is None and dump.threads  # the rest of the dump is still read
