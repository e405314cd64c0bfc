"""A synthetic microdump through `open_any_dump`, the walk, the reports and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector import cli
from inspector.core.dumpfile import DumpKind, open_any_dump, sniff_dump_kind
from inspector.core.microdump.dump import Microdump
from inspector.core.minidump import Minidump, NotAMinidump
from inspector.core.process import ProcessOptions, process
from inspector.core.report.human import render_human
from inspector.core.report.json_report import json_document
from inspector.core.report.machine import render_machine
from inspector.core.unwind import FrameTrust, WalkOptions, WalkPolicy
from tests.synth.microdump import (
    APP_ID,
    ARM_CRASH_FRAMES,
    LIBC_ID,
    arm_crash,
    brief_prefix,
    write_arm_crash_symbols,
)

EXAMPLE = Path(__file__).resolve().parents[3] / "resources" / "examples" / "sample.dmp"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "crash.txt"
    log.write_bytes(arm_crash().to_bytes())
    return log, write_arm_crash_symbols(tmp_path / "symbols")


def test_the_walk_of_a_microdump(files: tuple[Path, Path]) -> None:
    log, symbols = files
    state = process(log, ProcessOptions(symbol_paths=(symbols,), use_symbols_cache=False))
    frames = state.threads[0].frames
    assert [(f.instruction, f.function_name) for f in frames] == list(ARM_CRASH_FRAMES)
    assert [f.trust for f in frames] == [FrameTrust.CONTEXT, FrameTrust.CFI, FrameTrust.CFI]
    assert state.walk_options.policy is WalkPolicy.BREAKPAD  # microdumps follow Breakpad by default
    assert state.crash is not None and (state.crash.reason, state.crash.address) == ("SIGSEGV", 0x10)
    assert state.requesting_thread == 0 and state.main_module is None and state.problems == ()


def test_the_policy_for_microdumps_can_be_the_walks(files: tuple[Path, Path]) -> None:
    log, _ = files
    options = ProcessOptions(
        use_symbols_cache=False, walk=WalkOptions(policy=WalkPolicy.RUST_MINIDUMP), microdump_policy=None
    )
    assert process(log, options).walk_options.policy is WalkPolicy.RUST_MINIDUMP
    with Minidump.open(EXAMPLE) as dump:  # a minidump keeps the walk's policy
        assert (
            process(dump, ProcessOptions(use_symbols_cache=False)).walk_options.policy
            is WalkPolicy.RUST_MINIDUMP
        )


def test_machine_report(files: tuple[Path, Path]) -> None:
    log, symbols = files
    state = process(log, ProcessOptions(symbol_paths=(symbols,), use_symbols_cache=False))
    assert render_machine(state) == (
        "OS|Android|OS VERSION INFO\n"
        "CPU|arm||2\n"
        "GPU|OpenGL ES 3.0|Vendor|Renderer 1\n"
        "Crash|SIGSEGV|0x10|0\n"
        f"Module|app||app|{APP_ID}|0x40000000|0x4000ffff|0\n"
        f"Module|libc.so||libc.so|{LIBC_ID}|0x50000000|0x5001ffff|0\n"
        "\n"
        "0|0|app|crash|app.c|12|0x10\n"
        "0|1|app|caller|app.c|30|0xe\n"  # from the instruction, as Breakpad's arm frames
        "0|2|libc.so||||0x1232\n"
    )


def test_human_and_json_reports_say_what_only_a_microdump_has(files: tuple[Path, Path]) -> None:
    log, symbols = files
    state = process(log, ProcessOptions(symbol_paths=(symbols,), use_symbols_cache=False))
    human = render_human(state)
    assert (
        "GPU: OpenGL ES 3.0\n     Vendor\n     Renderer 1\nProduct: Test:1.0\nProcess type: browser\n"
        in human
    )
    assert " 1  app!caller [app.c : 30 + 0xe]" in human
    assert "(main)" not in human
    document = json_document(state)
    assert document["inspector_microdump"] == {
        "index": 0,
        "count": 1,
        "first_line": 1,
        "last_line": 14,
        "complete": True,
        "product": "Test:1.0",
        "process_type": "browser",
        "hardware_arch": "armv7l",
        "gpu": {"version": "OpenGL ES 3.0", "vendor": "Vendor", "renderer": "Renderer 1"},
    }
    assert document["system_info"]["os"] == "Android" and document["system_info"]["cpu_arch"] == "arm"  # type: ignore[index]
    json.dumps(document)


def test_open_any_dump_decides_by_content(tmp_path: Path) -> None:
    assert sniff_dump_kind(EXAMPLE.read_bytes()[:4096]) is DumpKind.MINIDUMP
    assert sniff_dump_kind(arm_crash().to_bytes()[:4096]) is DumpKind.MICRODUMP
    assert sniff_dump_kind(b"hello") is DumpKind.UNKNOWN
    renamed = tmp_path / "crash.log"
    renamed.write_bytes(EXAMPLE.read_bytes())
    with open_any_dump(renamed) as dump:
        assert type(dump) is Minidump
    # a microdump deep inside a long logcat
    long_log = tmp_path / "logcat.dmp"
    noise = b"".join(b"I/chatty  ( 1234): line %d of an ordinary log\n" % i for i in range(4000))
    long_log.write_bytes(noise + arm_crash().to_bytes())
    with open_any_dump(long_log) as dump:
        assert isinstance(dump, Microdump) and dump.info.first_line == 4001
    text = tmp_path / "notes.txt"
    text.write_bytes(b"no dump here\n")
    with pytest.raises(NotAMinidump, match="not a minidump"):
        open_any_dump(text)


def test_stackwalk_and_dump_commands(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    log, symbols = files
    two = log.with_name("two.txt")
    two.write_bytes(log.read_bytes() + arm_crash(crash=(6, "SIGABRT", 0)).to_bytes(brief_prefix(4000)))
    assert cli.main(["stackwalk", "--machine", "--no-symbols-cache", str(two), str(symbols)]) == 0
    assert "Crash|SIGSEGV|0x10|0" in capsys.readouterr().out
    assert cli.main(["stackwalk", "--machine", "--microdump-index", "1", "--no-symbols-cache", str(two)]) == 0
    assert "Crash|SIGABRT|0x0|0" in capsys.readouterr().out
    assert cli.main(["stackwalk", "--json", "--no-symbols-cache", str(two)]) == 0
    problems = json.loads(capsys.readouterr().out)["inspector_problems"]
    assert [p["code"] for p in problems] == ["MoreMicrodumps"]
    assert cli.main(["stackwalk", "--microdump-index", "2", "--no-symbols-cache", str(two)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "there is no microdump 2 (0 to 1)" in err and str(two) in err
    assert cli.main(["stackwalk", "--microdump-index", "-1", str(two)]) == 2
    capsys.readouterr()
    assert cli.main(["dump", str(two), "--microdump-index", "1"]) == 0
    out = capsys.readouterr().out
    assert (
        out.startswith("Microdump 1 (of 2, numbered from 0) in ")
        and "R  crash          = signal 6 SIGABRT" in out
    )
    assert "CONTEXT_ARM\n  context_flags" in out and "MoreMicrodumps" in out


def test_walking_a_minidump_does_not_import_the_microdump_reader() -> None:
    """The headless start-up matters: a minidump (its signature says so) loads no microdump code."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from inspector.core.process import ProcessOptions, process\n"
        "from inspector.core.report.human import render_human\n"
        f"render_human(process({str(EXAMPLE)!r}, ProcessOptions(use_symbols_cache=False)))\n"
        "print(sorted(m for m in sys.modules if m.startswith('inspector.core.microdump')))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[]"
