"""`inspector-stackwalk`: the console script for tools that want a minidump-stackwalk binary.

It must be exactly `python -m inspector stackwalk` (same output, errors and exit codes) and
start without Qt: tools such as mozcrash run it once per crash on machines without a display.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.dropin.common import SAMPLE, our_script

DUMP = SAMPLE / "sample.dmp"
SYMBOLS = SAMPLE / "symbols"


def _run(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    done = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=120, check=False)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--json", "--symbols-cache", "cache", str(DUMP), str(SYMBOLS)],
        ["--brief", "--no-symbols-cache", str(DUMP), str(SYMBOLS)],
        ["missing.dmp"],
        ["--pretty", str(DUMP)],
        ["--bogus", str(DUMP)],
        ["--version"],
    ],
    ids=["json", "brief", "missing-dump", "pretty-alone", "bad-option", "version"],
)
def test_the_script_is_python_m_inspector_stackwalk(args: list[str], tmp_path: Path) -> None:
    script = _run([str(our_script()), *args], tmp_path)
    module = _run([sys.executable, "-m", "inspector", "stackwalk", *args], tmp_path)
    assert script == module


def test_the_script_loads_no_qt(tmp_path: Path) -> None:
    argv = [sys.executable, "-X", "importtime", str(our_script()), "--json", "--no-symbols-cache", str(DUMP)]
    code, out, err = _run(argv, tmp_path)
    assert code == 0 and out.startswith('{"crash_info":')
    imported = {
        line.rsplit("|", 1)[-1].strip() for line in err.splitlines() if line.startswith("import time:")
    }
    assert "inspector.cli_stackwalk" in imported and "inspector.core.process" in imported
    gui = ("PySide6", "shiboken6", "pyqtgraph")
    assert sorted(m for m in imported if m.split(".")[0] in gui or m.startswith("inspector.gui")) == []
