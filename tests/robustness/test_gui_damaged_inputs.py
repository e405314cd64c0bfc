"""The main window on the generator's damaged inputs: it survives, shows what could be read, lists the
problems, and keeps the previous dump when a file cannot be read at all (pytest-qt, offscreen)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector.gui.main_window import MainWindow
from inspector.resources import sample_dump
from tests.gui.conftest import MessageBoxes
from tests.gui.support import load
from tests.robustness.conftest import collected_dump_variants
from tests.robustness.damage import DumpVariant
from tests.synth.minidump import SynthMinidump

pytestmark = pytest.mark.gui

_BY_NAME = {v.name: v for v in collected_dump_variants()}

#: Damaged dumps that still open: what was read is shown, with the problems listed.
DAMAGED = [
    "sample/truncated/ThreadListStream/entry[2].stack+1116",
    "sample/huge-count/ModuleListStream.count=0xffffffff",
    "sample/entry-field/ThreadListStream/entry[0].context.size=16",
    "sample/header/magic=XXXX",
    "multithread/directory/ExceptionStream(directory[4]).rva=past-end",
    "sample/header/directory-rva=past-end",
]
#: Inputs that cannot be opened at all: an error dialog, and the previous dump stays.
UNREADABLE = [
    "file-kind/text",
    "sample/truncated/header+16",
    "file-kind/empty",
    "file-kind/png",
    "file-kind/directory",
    "file-kind/missing",
]


def _variant(name: str) -> DumpVariant:
    return _BY_NAME[name]


@pytest.mark.parametrize("name", DAMAGED)
def test_a_damaged_dump_opens_with_what_could_be_read_and_its_problems(
    qtbot: QtBot, window: MainWindow, message_boxes: MessageBoxes, tmp_path: Path, name: str
) -> None:
    variant = _variant(name)
    load(qtbot, window.session, variant.materialize(tmp_path))
    assert message_boxes.shown == [], "damage is not an error: the dump opens"
    document = window.session.document
    assert document is not None and document.path.name.endswith(".dmp")
    problems = window.problem_pane.model.problems
    assert problems and all(p.message for p in problems)
    assert window.docks["problems"].windowTitle() == f"Problems ({len(problems)})"
    assert f"{len(problems)} problem" in window.status_text() and "(see Problems)" in window.status_text()
    assert window.thread_pane.model.rowCount() == document.thread_count > 0
    # the app keeps working: the undamaged sample opens next, without problems
    load(qtbot, window.session, sample_dump())
    assert window.problem_pane.model.problems == [] and window.windowTitle().startswith("sample.dmp")


def test_unreadable_inputs_show_an_error_and_keep_the_previous_dump(
    qtbot: QtBot, window: MainWindow, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    load(qtbot, window.session, sample_dump())
    before = window.session.document
    assert before is not None
    for name in UNREADABLE:
        load(qtbot, window.session, _variant(name).materialize(tmp_path))
        assert window.session.document is before, name
        assert window.windowTitle().startswith("sample.dmp"), name
        assert "Cannot open dump" in window.status_text(), name
    assert message_boxes.titles == ["Cannot open dump"] * len(UNREADABLE)
    assert all("sample.dmp is still shown" in text for _, text in message_boxes.shown)
    assert window.thread_pane.model.rowCount() == before.thread_count
    assert "SIGSEGV" in window.summary_pane.text()


def test_a_run_of_damaged_and_unreadable_inputs_leaves_a_working_window(
    qtbot: QtBot, window: MainWindow, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    """Alternating inputs, as a user dropping a folder of uploads would: the window survives each."""
    for name in [n for pair in zip(DAMAGED, UNREADABLE, strict=True) for n in pair]:
        load(qtbot, window.session, _variant(name).materialize(tmp_path))
        assert window.session.document is not None  # the damaged one, or the one before
    load(qtbot, window.session, sample_dump())
    assert window.session.document is not None and window.session.document.path == sample_dump()
    assert not window.session.is_busy


def test_what_only_the_stackwalker_finds_is_listed_with_the_problems(
    qtbot: QtBot, window: MainWindow, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    """A dump without a thread list (rust-minidump refuses it) opens; the Problems pane says why no thread."""
    path = tmp_path / "no-threads.dmp"
    path.write_bytes(SynthMinidump().add_module(0x400000, 0x1000, "app").finish())
    load(qtbot, window.session, path)
    assert message_boxes.shown == []
    assert window.thread_pane.model.rowCount() == 0 and window.module_pane.model.rowCount() == 1
    problems = window.problem_pane.model.problems
    assert [(p.code, p.where) for p in problems] == [("NoThreadList", "ThreadListStream (0x3)")]
    assert "no readable thread list" in problems[0].message
    assert "1 problem" in window.status_text()
