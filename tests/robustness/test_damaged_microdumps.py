"""Every damaged microdump of `microdump_damage`: only our errors, in time, damage reported, nothing lost.

As for damaged minidumps (`test_damaged_dumps.py`), each variant goes through what the
command line does in-process (`harness.run_library`: `open_any_dump`, the microdump report,
the walk with the seed's symbols, JSON / human / trace / machine reports), and:

* only `InspectorError`s escape, within `IN_PROCESS_SECONDS`, as one-line messages;
* damage the reader can see is seen (the log refused, or problems recorded), and every problem
  is in the JSON's `inspector_problems` and the human report;
* nothing is lost: what the intact lines still say (`microdump_damage.survivors`: the system,
  the crash, each module, the first frame, the whole walk) equals the undamaged original's.

A sample also runs through the command line in subprocesses (exit 0 or 1, no traceback), and
the window opens a few and keeps working.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector.core.errors import InspectorError
from inspector.gui.main_window import MainWindow
from tests.gui.conftest import MessageBoxes
from tests.gui.support import load
from tests.robustness.harness import IN_PROCESS_SECONDS, Outcome, assert_nothing_lost, run_library
from tests.robustness.microdump_damage import (
    MicrodumpSeed,
    MicrodumpVariant,
    microdump_seeds,
    microdump_variants,
    survivors,
)

_WORKDIR = Path(tempfile.mkdtemp(prefix="robustness-microdumps-"))
atexit.register(shutil.rmtree, _WORKDIR, ignore_errors=True)
SEEDS = microdump_seeds(_WORKDIR / "symbols")
VARIANTS = microdump_variants(SEEDS)
_RUNS: dict[str, Outcome] = {}


def _outcome(name: str, path: Path, symbols: tuple[Path, ...]) -> Outcome:
    if name not in _RUNS:
        _RUNS[name] = run_library(path, symbols, _WORKDIR / "cache")
    return _RUNS[name]


def outcome_of(variant: MicrodumpVariant) -> Outcome:
    return _outcome(variant.name, variant.materialize(_WORKDIR), variant.seed.symbol_paths)


def original_of(seed: MicrodumpSeed) -> Outcome:
    path = _WORKDIR / f"original-{seed.name}.txt"
    path.write_bytes(seed.data)
    outcome = _outcome(f"original/{seed.name}", path, seed.symbol_paths)
    assert not outcome.refused and outcome.foreign is None and not outcome.problems, seed.name
    return outcome


def test_the_seeds_walk() -> None:
    """The originals are worth protecting: each walks past its first frame (the arm one by CFI)."""
    for seed in SEEDS:
        outcome = original_of(seed)
        assert outcome.crashing_thread_frames >= 2, seed.name
        assert len(outcome.modules) == len(seed.dump.modules)
    arm = original_of(SEEDS[0]).threads[0]
    assert [frame[1] for frame in arm] == ["context", "cfi", "cfi"]


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_only_our_errors_in_time_and_damage_reported(variant: MicrodumpVariant) -> None:
    outcome = outcome_of(variant)
    assert outcome.foreign is None, f"not an InspectorError:\n{outcome.foreign}"
    assert outcome.seconds < IN_PROCESS_SECONDS
    error = outcome.open_error or outcome.process_error
    if error is not None:
        assert isinstance(error, InspectorError) and str(error).strip() and "\n" not in str(error)
        return
    if variant.detectable:
        assert outcome.noticed, "the damage went unnoticed: no problem recorded"
    assert outcome.json_problems == outcome.problems
    for message in outcome.problems:
        assert message in outcome.human


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_nothing_readable_is_lost(variant: MicrodumpVariant) -> None:
    assert_nothing_lost(outcome_of(variant), original_of(variant.seed), survivors(variant))


def test_how_much_survives(capsys: pytest.CaptureFixture[str]) -> None:
    """Figures (printed); the floors fail if damaged microdumps start being refused whole."""
    counts: Counter[str] = Counter()
    for variant in VARIANTS:
        outcome = outcome_of(variant)
        counts["variants"] += 1
        counts["report"] += not outcome.refused
        counts["walked"] += outcome.crashing_thread_frames > 1
        counts[f"family {variant.family}"] += 1
    with capsys.disabled():
        print(f"\n[damaged microdumps] {dict(sorted(counts.items()))}")
    assert counts["report"] >= 0.9 * counts["variants"]
    assert counts["walked"] >= 0.6 * counts["variants"]


def _sample() -> list[MicrodumpVariant]:
    """One variant per family (the seeds in turn): each subprocess costs a Python start-up."""
    by_family: dict[str, list[MicrodumpVariant]] = {}
    for variant in VARIANTS:
        by_family.setdefault(variant.family, []).append(variant)
    return [variants[i * 7 % len(variants)] for i, variants in enumerate(by_family.values())]


@pytest.mark.parametrize("variant", _sample(), ids=lambda v: v.name)
def test_the_command_line_exits_0_or_1_without_a_traceback(variant: MicrodumpVariant, tmp_path: Path) -> None:
    path = variant.materialize(_WORKDIR)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    for args in (
        ["stackwalk", "--human", "--trace", str(path), *map(str, variant.seed.symbol_paths)],
        ["dump", str(path)],
    ):
        run = subprocess.run(
            [sys.executable, "-m", "inspector", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
            check=False,
        )
        assert run.returncode in (0, 1), (args, run.stderr)
        assert "Traceback" not in run.stderr, run.stderr
        if run.returncode == 1:
            assert run.stdout == "" and run.stderr.count("\n") == 1


@pytest.mark.gui
def test_the_window_opens_damaged_microdumps_and_keeps_working(
    qtbot: QtBot, window: MainWindow, message_boxes: MessageBoxes
) -> None:
    families = ("missing-context", "stack", "interleaved", "bad-hex")
    picked = [v for v in VARIANTS if v.family in families and v.detectable][::5]
    assert len(picked) >= 5
    for variant in picked:
        load(qtbot, window.session, variant.materialize(_WORKDIR))
        assert message_boxes.shown == [], variant.name  # damage is not an error: the microdump opens
        document = window.session.document
        assert document is not None and document.path.name == variant.materialize(_WORKDIR).name
        assert window.thread_pane.model.rowCount() == 1
        # the reader's problems, each with its line, as the reports list them
        shown = [p.message for p in window.problem_pane.model.problems if p.where == "microdump"]
        outcome = outcome_of(variant)
        assert len(shown) == outcome.reader_problems > 0 and set(shown) <= set(outcome.problems)
