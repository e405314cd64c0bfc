"""Reports on synthetic dumps: rust-minidump JSON, the human report, Breakpad's machine format, the trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector.core import strict as strict_module
from inspector.core.minidump import Minidump, StreamType
from inspector.core.process import ProcessOptions, ProcessState, process
from inspector.core.report.human import register_lines, render_human
from inspector.core.report.json_report import json_document, render_json
from inspector.core.report.machine import render_machine
from inspector.core.report.trace_text import frame_trace_lines
from inspector.core.types import Cpu, Os
from tests.synth.minidump import SynthContext, SynthMinidump
from tests.synth.section import Section
from tests.unwind.harness import debug_id

STACK = 0x80000000
APP = 0x40000000


def _state(tmp_path: Path, *, dump_thread: bool = False, no_crash: bool = False) -> ProcessState:
    """x86 Windows: thread 0x10 crashed in app!crash (inlined helper) called from app!main; 0x20 idle."""
    name = "app.pdb"
    store = tmp_path / "symbols" / name / debug_id(name)
    store.mkdir(parents=True)
    (store / "app.sym").write_text(
        f"MODULE windows x86 {debug_id(name)} {name}\n"
        "FILE 0 c:\\src\\app.cc\nINLINE_ORIGIN 0 helper()\n"
        "FUNC 1000 100 0 crash\nINLINE 0 25 0 0 1008 8\n1000 10 20 0\n1010 f0 21 0\n"
        "FUNC 2000 100 8 main\n2000 100 30 0\n"
        "STACK CFI INIT 1000 100 .cfa: $esp 4 + .ra: .cfa 4 - ^\n"
    )
    stack = Section(start=STACK).d32(APP + 0x2010).append_repeated(0, 32)
    idle = Section(start=STACK + 0x1000).append_repeated(0, 32)
    dump = (
        SynthMinidump(cpu=Cpu.X86, os=Os.WINDOWS)
        .add_module(APP, 0x10000, "C:\\app\\app.exe", debug_id=debug_id(name), debug_file=name)
        .add_thread(0x10, context=SynthContext.x86(eip=APP + 0x100C, esp=STACK, ebp=0x1234), stack=stack)
        .add_thread(0x20, context=SynthContext.x86(eip=0x7000, esp=STACK + 0x1000), stack=idle)
        .add_unloaded_module(0x7000, 0x1000, "C:\\gone.dll")
    )
    if not no_crash:
        dump.add_exception(0x10, code=0xC0000005, parameters=(1, 0x45))
    if dump_thread:
        dump.add_breakpad_info(dump_thread_id=0x20, requesting_thread_id=0x10)
    return process(
        dump.to_minidump(), ProcessOptions(symbol_paths=(tmp_path / "symbols",), use_symbols_cache=False)
    )


def test_json_schema_and_values(tmp_path: Path) -> None:
    state = _state(tmp_path)
    doc = json.loads(render_json(state))
    assert list(doc) == sorted(doc)  # serde_json sorts keys
    assert doc["crash_info"]["type"] == "EXCEPTION_ACCESS_VIOLATION_WRITE"
    assert doc["crash_info"]["address"] == "0x00000045"  # 32-bit: 8 hex digits
    assert doc["crash_info"]["crashing_thread"] == 0 and doc["crash_info"]["crash_inconsistencies"] == []
    frames = doc["threads"][0]["frames"]
    assert [f["function"] for f in frames] == ["crash", "main"]
    f0, f1 = frames
    assert f0["inlines"] == [{"function": "helper()", "file": "c:\\src\\app.cc", "line": 20}]
    assert (f0["file"], f0["line"], f0["function_offset"], f0["module_offset"]) == (
        "c:\\src\\app.cc",
        25,
        "0x0000000c",
        "0x0000100c",
    )
    assert (f1["offset"], f1["trust"], f1["missing_symbols"]) == ("0x4000200f", "cfi", False)
    assert "registers" not in f0  # only in the top-level crashing_thread copy
    crashing = doc["crashing_thread"]
    assert crashing["threads_index"] == 0 and crashing["frames"][0]["registers"]["eip"] == "0x4000100c"
    assert "registers" not in crashing["frames"][1]
    other = doc["threads"][1]["frames"][0]
    assert other["module"] is None and other["unloaded_modules"] == [
        {"module": "C:\\gone.dll", "offsets": ["0x00000000"]}
    ]
    [module] = doc["modules"]
    assert (
        module["filename"],
        module["debug_file"],
        module["loaded_symbols"],
        module["missing_symbols"],
    ) == (
        "app.exe",
        "app.pdb",
        True,
        False,
    )
    assert doc["unloaded_modules"] == [
        {
            "base_addr": "0x00007000",
            "cert_subject": None,
            "code_id": "000000001000",
            "end_addr": "0x00008000",
            "filename": "C:\\gone.dll",
        }
    ]
    # our addition: damage found in the inputs (this exception stream has no context)
    assert doc["inspector_problems"] == [
        {"source": "dump", "code": "BadData", "message": "exception context: empty location", "offset": 0}
    ]
    assert doc["thread_count"] == 2 and doc["main_module"] == 0 and state.main_module == 0
    assert "\n" not in render_json(state) and render_json(state, pretty=True).startswith('{\n  "crash_info"')
    assert json_document(state)["status"] == "OK"


def test_human_report(tmp_path: Path) -> None:
    text = render_human(_state(tmp_path))
    lines = text.splitlines()
    assert lines[0] == "Operating system: Windows NT"
    assert "Crash reason:  EXCEPTION_ACCESS_VIOLATION_WRITE" in lines
    start = lines.index("Thread 0  (crashed) - tid: 16")
    assert lines[start + 1 : start + 3] == [" 0  app.exe!helper() [app.cc : 20]", "    Found by: inlining"]
    # the offset is from the start of the inlined call's range (rust-minidump's line base)
    assert lines[start + 3] == " 1  app.exe!crash [app.cc : 25 + 0x4]"
    assert " 2  app.exe!main [app.cc : 30 + 0xf]" in lines
    assert "Thread 1  - tid: 32" in lines
    assert " 0  0x7000 (unloaded C:\\gone.dll@0x0)" in lines
    assert "0x40000000 - 0x4000ffff  app.exe  ???  (main)" in lines
    assert lines[lines.index("Unloaded modules:") + 1] == "0x00007000 - 0x00007fff  gone.dll"
    brief = render_human(_state(tmp_path / "b"), brief=True)
    assert "Thread 1" not in brief and "Loaded modules:" not in brief


def test_human_register_wrapping(tmp_path: Path) -> None:
    ctx = _state(tmp_path).threads[0].frames[0].context
    lines = register_lines(ctx)
    assert lines[0] == "     eip = 0x4000100c    esp = 0x80000000    ebp = 0x00001234    ebx = 0x00000000"
    assert all(len(line) <= 81 for line in lines) and lines[-1].endswith("eflags = 0x00000000")


def test_machine_format(tmp_path: Path) -> None:
    text = render_machine(_state(tmp_path))
    lines = text.splitlines()
    assert lines[:4] == [
        "OS|Windows NT|0.0.0",
        "CPU|x86|GenuineIntel family 6 model 69 stepping 1|4",
        "GPU|||",
        "Crash|EXCEPTION_ACCESS_VIOLATION_WRITE|0x45|0",
    ]
    assert lines[4] == f"Module|app.exe||app.pdb|{debug_id('app.pdb')}|0x40000000|0x4000ffff|1"
    assert lines[5] == ""
    # inline frames are rows; caller offsets from the return address (0x40002010 - line base 0x40002000)
    assert lines[6:10] == [
        "0|0|app.exe|helper()|c:\\src\\app.cc|20|0x4",
        "0|1|app.exe|crash|c:\\src\\app.cc|25|0x4",
        "0|2|app.exe|main|c:\\src\\app.cc|30|0x10",
        "1|0|||||0x7000",
    ]


def test_machine_skips_dump_thread_and_reports_no_crash(tmp_path: Path) -> None:
    lines = render_machine(_state(tmp_path, dump_thread=True, no_crash=True)).splitlines()
    assert lines[3] == "Crash|No crash||0"
    rows = [line for line in lines[6:] if line]
    assert {row.split("|")[0] for row in rows} == {"0"}  # the dump-writing thread is left out


def test_trace_text(tmp_path: Path) -> None:
    frames = _state(tmp_path).threads[0].frames
    text = "\n".join(frame_trace_lines(frames, 1))
    assert "1. STACK CFI - found (chosen): STACK CFI at app.exe+0x100c" in text
    assert "  STACK CFI INIT 1000 .cfa: $esp 4 + .ra: .cfa 4 - ^ - in force" in text
    assert "  .ra: .cfa 4 - ^ - = 0x40002010  [caller instruction pointer (.ra)]" in text
    assert "    ^ - [0x40002010]   read [0x80000000] = 0x40002010" in text
    assert "  caller instruction pointer 0x40002010 is at least 0x1000 - ok" in text
    human = render_human(_state(tmp_path / "t"), trace=True)
    assert "Walk stopped - " in human and "2. frame pointer - failed" in human


@pytest.mark.parametrize("pretty", [False, True])
def test_json_round_trips(tmp_path: Path, pretty: bool) -> None:
    state = _state(tmp_path)
    assert json.loads(render_json(state, pretty=pretty)) == json.loads(json.dumps(json_document(state)))


def test_a_dump_without_modules_has_no_main_module_but_the_json_says_0_as_rust_minidump() -> None:
    state = process(Minidump.from_bytes(SynthMinidump().add_thread(thread_id=1).finish()))
    assert state.modules == () and state.main_module is None
    assert json_document(state)["main_module"] == 0
    assert "(main)" not in render_human(state)


def test_every_json_object_is_written_with_its_keys_sorted() -> None:
    """The report builds its objects in key order and the encoder does not sort (rust-minidump's
    serde maps are sorted): the rarer objects too, and a soft-errors value in any order."""
    limits = "Limit                     Soft Limit           Hard Limit           Units     \n"
    limits += "Max open files            1024                 4096                 files     \n"
    dump = (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX)
        .add_module(APP, 0x10000, "/usr/bin/app")
        .add_thread(
            0x10, context=SynthContext.amd64(rip=APP + 0x10, rsp=STACK), stack=Section(start=STACK).d64(0)
        )
        .add_exception(0x10, code=11, parameters=())
        .add_handle_data([(4, "File", "/tmp/x"), (8, None, None)])
        .add_linux_lsb_release('DISTRIB_ID=Ubuntu\nDISTRIB_DESCRIPTION="Ubuntu 22.04"\n')
        .add_text_stream(StreamType.MozLinuxLimits, limits)
        .add_text_stream(StreamType.MozSoftErrors, '{"z": [{"b": 1, "a": 2}], "a": {"y": null, "x": true}}')
        .to_minidump()
    )
    state = process(dump, ProcessOptions(use_symbols_cache=False))
    compact = render_json(state)
    document = json.loads(compact)
    assert document["handles"] and document["lsb_release"] and document["proc_limits"]
    assert list(document["soft_errors"]) == ["a", "z"]
    assert compact == json.dumps(document, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    pretty = render_json(state, pretty=True)
    assert pretty == json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)


FIXTURE_CRASHES = Path(__file__).resolve().parents[1] / "fixtures" / "crashes"


@pytest.mark.parametrize("case", ["cxx_templates", "multithread", "lib_callback", "analysis_null_call"])
def test_the_compact_text_is_the_encoding_of_the_document_outside_strict_mode(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--json` writes threads, frames and modules as text of their own (not through the encoder):
    byte for byte what encoding `json_document` gives, with inline frames, the crashing thread's
    registers and symbol states, also where strict mode does not check it on every report."""
    monkeypatch.setattr(strict_module, "_override", False)
    folder = FIXTURE_CRASHES / case
    state = process(
        str(next(folder.glob("*.dmp"))),
        ProcessOptions(symbol_paths=(str(folder / "symbols"),), use_symbols_cache=False),
    )
    assert state.threads and state.modules
    compact = render_json(state)
    expected = json.dumps(json_document(state), separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    assert compact == expected
    assert json.loads(compact)["crashing_thread"]["frames"][0]["registers"]
