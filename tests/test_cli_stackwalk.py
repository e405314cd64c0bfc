"""`crash-inspector stackwalk`: formats, exit codes, one clear error line, and no Qt / numpy on this path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector import cli
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthContext, SynthMinidump
from tests.synth.section import Section

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "resources" / "examples"


@pytest.fixture
def dump_file(tmp_path: Path) -> Path:
    stack = Section(start=0x7FFF0000).d64(0x401100).append_repeated(0, 64)
    path = tmp_path / "crash.dmp"
    path.write_bytes(
        SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX)
        .add_module(0x400000, 0x10000, "/usr/bin/app")
        .add_thread(1, context=SynthContext.amd64(rip=0x401000, rsp=0x7FFF0000), stack=stack)
        .add_exception(1, code=11, flags=1)
        .finish()
    )
    return path


def test_json_is_one_compact_line(dump_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["stackwalk", "--json", str(dump_file)]) == 0
    out, err = capsys.readouterr()
    assert out.count("\n") == 1 and err == ""
    doc = json.loads(out)
    assert doc["crash_info"]["type"] == "SIGSEGV / SEGV_MAPERR"
    assert [f["trust"] for f in doc["threads"][0]["frames"]] == ["context", "scan"]


def test_pretty_json(dump_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["stackwalk", "--json", "--pretty", str(dump_file)]) == 0
    out = capsys.readouterr().out
    assert out.startswith('{\n  "crash_info": {\n') and json.loads(out)["status"] == "OK"


def test_human_is_the_default(dump_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["stackwalk", str(dump_file)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Operating system: Linux\n") and "Thread 0  (crashed) - tid: 1" in out


def test_machine(dump_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["stackwalk", "--machine", str(dump_file)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "OS|Linux|0.0.0" and lines[3] == "Crash|SIGSEGV / SEGV_MAPERR|0x0|0"
    assert lines[-2:] == ["0|0|app||||0x1000", "0|1|app||||0x1100"]


def test_trace_on_the_sample(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    args = [
        "stackwalk",
        "--trace",
        "--symbols-cache",
        str(tmp_path),
        str(SAMPLE / "sample.dmp"),
        str(SAMPLE / "symbols"),
    ]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "      1. STACK CFI - found (chosen): STACK CFI at render_farm+0x1758" in out
    assert "          STACK CFI INIT 16d0 .cfa: $rsp 8 + .ra: .cfa -8 + ^ - applied" in out
    assert "          ^ - [0x5555555557d2]   read [0x7ffff75cfea8] = 0x5555555557d2" in out
    assert "      17 registers known - from the exception record" in out  # frame 0: the crash's context
    assert "      Walk ended: the bottom of the stack - " in out  # __clone3: where the thread started


def test_brief(dump_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["stackwalk", "--brief", str(dump_file)]) == 0
    assert "Loaded modules:" not in capsys.readouterr().out


def test_breakpad_policy_and_max_frames(dump_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["stackwalk", "--json", "--policy", "breakpad", "--max-frames", "1", str(dump_file)]) == 0
    assert json.loads(capsys.readouterr().out)["threads"][0]["frame_count"] == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--machine", "--trace"],
        ["--json", "--machine"],
        ["--policy", "gdb"],
        ["--symbols-cache", "x", "--no-symbols-cache"],
        ["--max-frames", "0"],
        [],
    ],
)
def test_usage_errors_exit_2(dump_file: Path, capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    extra = [] if args == [] else [str(dump_file)]
    assert cli.main(["stackwalk", *args, *extra]) == 2
    assert "error:" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--pretty"], "--pretty is for the JSON report"),
        (["--json", "--brief"], "--brief is only for --human, --cyborg and --dump"),
        (["--machine", "--brief"], "--brief is only for --human, --cyborg and --dump"),
    ],
)
def test_output_options_that_do_not_fit_exit_1_as_minidump_stackwalk(
    dump_file: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert cli.main(["stackwalk", *args, str(dump_file)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"crash-inspector: error: {message}") and err.count("\n") == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a dump at all", "not a minidump"),
        (b"MDMP\x93\xa7", "too short"),
    ],
)
def test_unusable_input_is_one_error_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    path = tmp_path / "bad.dmp"
    path.write_bytes(content)
    assert cli.main(["stackwalk", "--json", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("crash-inspector: error: ") and message in err


def test_the_error_line_names_a_relative_dump_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "bad.dmp").write_bytes(b"not a dump at all")
    monkeypatch.chdir(tmp_path)
    assert cli.main(["stackwalk", "--json", "./bad.dmp"]) == 1
    err = capsys.readouterr().err
    assert err.count("bad.dmp") == 1, err


def test_dump_without_threads_still_reports_its_modules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nothreads.dmp"
    path.write_bytes(SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX).add_module(0x400000, 0x1000, "app").finish())
    assert cli.main(["stackwalk", "--json", str(path)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [m["filename"] for m in document["modules"]] == ["app"] and document["threads"] == []
    assert [p["code"] for p in document["inspector_problems"]] == ["NoThreadList"]
    assert cli.main(["stackwalk", str(path)]) == 0
    assert "[dump] NoThreadList: the dump has no readable thread list" in capsys.readouterr().out


def test_dump_with_nothing_reportable_is_unusable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nothing.dmp"
    path.write_bytes(SynthMinidump(system_info=False).add_stream(0x47670003, b"text").finish())
    assert cli.main(["stackwalk", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "nothing in the dump can be reported" in err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["stackwalk", str(tmp_path / "nope.dmp")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_a_dump_path_holding_a_nul_byte_is_one_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    """No file can be named so: the usual one-line error, not an internal error or a traceback."""
    assert cli.main(["stackwalk", "--json", "crash\x00.dmp"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file (its name holds a NUL byte)" in err


def test_no_qt_and_no_numpy_when_indexes_are_cached(tmp_path: Path) -> None:
    """Startup: stackwalk never imports Qt/pyqtgraph; numpy only to build a symbol index cold."""
    cache = tmp_path / "cache"
    program = (
        "import sys\n"
        "from inspector import cli\n"
        "args = ['stackwalk', '--json', '--symbols-cache', sys.argv[1], sys.argv[2], sys.argv[3]]\n"
        "code = cli.main(args)\n"
        "bad = sorted(m for m in ('PySide6', 'pyqtgraph', 'inspector.gui', 'numpy') if m in sys.modules)\n"
        "print(code, ','.join(bad), file=sys.stderr)\n"
    )
    argv = [sys.executable, "-c", program, str(cache), str(SAMPLE / "sample.dmp"), str(SAMPLE / "symbols")]
    cold = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
    assert cold.stderr.strip().splitlines()[-1] == "0 numpy"  # the first run builds the indexes
    warm = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
    assert warm.stderr.strip().splitlines()[-1] == "0"
