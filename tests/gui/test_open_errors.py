"""The window says what a file that is not a minidump is (the core's words), and keeps the open dump."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector.gui.main_window import MainWindow
from inspector.resources import sample_dump
from tests.gui.conftest import MessageBoxes
from tests.gui.support import load, wait_analysis_over

ROOT = Path(__file__).resolve().parents[2]


def _elf() -> bytes:
    return b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack("<H", 3) + bytes(46)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (_elf(), "this is an ELF executable or shared library, not a minidump: put it in a symbol path"),
        (b"", "not a minidump: the file is empty"),
        (b"The minidump signature is MDMP.\n", "not a minidump: this is a text file"),
        (b"PK\x03\x04" + bytes(26), "this is a zip archive, not a minidump: extract the minidump"),
    ],
)
def test_the_error_says_what_the_file_is(
    qtbot: QtBot, window: MainWindow, message_boxes: MessageBoxes, content: bytes, expected: str
) -> None:
    load(qtbot, window.session, sample_dump())
    bad = Path(window.settings.store.fileName()).parent / "crash.dmp"  # the test's own tmp_path
    bad.write_bytes(content)
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(bad))
    assert message_boxes.titles == ["Cannot open dump"]
    text = message_boxes.shown[0][1]
    assert expected in text, text
    assert "upload wrapper" not in text and "b'" not in text
    assert "sample.dmp is still shown" in text


def test_the_project_readme_renamed_is_not_an_upload_wrapper(
    qtbot: QtBot, window: MainWindow, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    bad = tmp_path / "README.dmp"
    bad.write_bytes((ROOT / "README.md").read_bytes())
    wait_analysis_over(qtbot, window.session, lambda: window.open_dump(bad))
    text = message_boxes.shown[0][1]
    assert "not a minidump" in text and "upload wrapper" not in text, text
