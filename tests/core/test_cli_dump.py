"""`crash-inspector dump`: exit codes, one clear error line, help, and no Qt / numpy on this path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from inspector import cli
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthContext, SynthMinidump

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def dump_file(tmp_path: Path) -> Path:
    path = tmp_path / "crash.dmp"
    path.write_bytes(
        SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX)
        .add_thread(1, context=SynthContext.amd64(rip=0x401000))
        .add_exception(1, code=11, flags=1)
        .finish()
    )
    return path


def test_dump_prints_the_report_and_exits_0(dump_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["dump", str(dump_file)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("MDRawHeader\n") and "SIGSEGV / SEGV_MAPERR" in out and err == ""


def test_no_additions_prints_only_the_rust_minidump_part(
    dump_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["dump", "--no-additions", str(dump_file)]) == 0
    assert "Crash Inspector additions" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"-----BEGIN BREAKPAD MICRODUMP-----\n", "microdump"),
        (b"prod:6:Chrome" + b"MDMP", "minidump header appears at offset 0xd"),
        (b"MDMP\x93\xa7", "too short"),
    ],
)
def test_unusable_input_is_one_error_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    path = tmp_path / "bad.dmp"
    path.write_bytes(content)
    assert cli.main(["dump", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("crash-inspector: error: ") and message in err
    assert str(path) in err


def test_directory_and_missing_file_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["dump", str(tmp_path)]) == 1
    assert "is a directory" in capsys.readouterr().err
    assert cli.main(["dump", str(tmp_path / "nope.dmp")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_usage_errors_exit_2_and_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["dump"]) == 2
    assert "usage: crash-inspector dump" in capsys.readouterr().err
    assert cli.main(["dump", "--bogus", "x.dmp"]) == 2
    assert cli.main(["dump", "--help"]) == 0
    assert "usage: crash-inspector dump" in capsys.readouterr().out


def test_dump_command_imports_neither_qt_nor_numpy(dump_file: Path) -> None:
    code = (
        "import sys\n"
        "from inspector import cli\n"
        f"rc = cli.main(['dump', {str(dump_file)!r}])\n"
        "heavy = ('PySide6', 'shiboken6', 'pyqtgraph', 'numpy')\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in heavy]\n"
        "print('RC', rc, 'BAD', ','.join(bad), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stderr.strip().endswith("RC 0 BAD")


def test_an_internal_error_is_still_one_line_without_traceback(
    dump_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspector.core.report import dump_text

    def broken(*_args: object, **_kwargs: object) -> str:
        raise RuntimeError("boom")

    monkeypatch.setattr(dump_text, "render_dump", broken)
    assert cli.main(["dump", str(dump_file)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error (RuntimeError: boom)" in err
