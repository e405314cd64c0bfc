"""process(): events in order, the crashing thread's exception context, the dump thread, unloaded
modules, symbols rust-minidump rejects, cancellation, and hostile stacks that must not hang."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from inspector.core.cancel import CancelToken
from inspector.core.errors import Cancelled, InspectorError
from inspector.core.minidump import Minidump, StreamType
from inspector.core.minidump.context import REGISTER_SETS, layout_for
from inspector.core.process import (
    ContextSource,
    DumpLoaded,
    Finished,
    FrameWalked,
    ProcessOptions,
    Progress,
    SymbolsLoaded,
    SymbolState,
    ThreadWalked,
    process,
    process_events,
)
from inspector.core.types import Cpu, Os
from inspector.core.unwind import (
    UNWINDERS,
    CallStackInfo,
    FrameTrust,
    TerminationReason,
    WalkOptions,
    WalkPolicy,
)
from inspector.resources import sample_dump
from tests.synth.minidump import SynthContext, SynthMinidump
from tests.synth.section import Section
from tests.unwind.harness import debug_id

STACK = 0x7FFF00000000
APP = 0x555500000000
LIB = 0x7F0000000000


def _store(tmp_path: Path, name: str, text: str, *, final_newline: bool = True) -> Path:
    store = tmp_path / "symbols"
    folder = store / name / debug_id(name)
    folder.mkdir(parents=True, exist_ok=True)
    body = f"MODULE Linux x86_64 {debug_id(name)} {name}\n{text}"
    (folder / f"{name}.sym").write_text(body if final_newline else body.rstrip("\n"))
    return store


def _two_thread_dump() -> SynthMinidump:
    """Thread 1 crashed in app!crash (exception context), thread 2 waits in lib!wait; app calls lib."""
    crash_stack = Section(start=STACK).d64(APP + 0x1105).append_repeated(0, 64)
    wait_stack = Section(start=STACK + 0x10000).d64(APP + 0x1105).append_repeated(0, 64)
    return (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX)
        .add_module(APP, 0x4000, "/usr/bin/app", debug_id=debug_id("app"), debug_file="app")
        .add_module(LIB, 0x4000, "lib.so", debug_id=debug_id("lib.so"), debug_file="lib.so")
        .add_unloaded_module(0x6000_0000_0000, 0x1000, "C:\\gone\\plugin.dll")
        .add_thread(1, context=SynthContext.amd64(rip=APP + 0x10, rsp=STACK + 0x100), stack=crash_stack)
        .add_thread(2, context=SynthContext.amd64(rip=LIB + 0x200, rsp=STACK + 0x10000), stack=wait_stack)
        .add_exception(1, code=11, address=0, context=SynthContext.amd64(rip=APP + 0x2010, rsp=STACK))
    )


APP_SYMS = (
    "FUNC 1000 200 0 main\nFUNC 2000 100 0 crash\n"
    "STACK CFI INIT 2000 100 .cfa: $rsp 8 + .ra: .cfa 8 - ^\n"
    "STACK CFI INIT 1000 200 .cfa: $rsp 8 + .ra: .cfa 8 - ^\n"
)
LIB_SYMS = "FUNC 200 100 0 wait\nSTACK CFI INIT 200 100 .cfa: $rsp 8 + .ra: .cfa 8 - ^\n"


def test_process_events_in_order(tmp_path: Path) -> None:
    _store(tmp_path, "app", APP_SYMS)
    store = _store(tmp_path, "lib.so", LIB_SYMS)
    dump = _two_thread_dump()
    events = list(
        process_events(dump.to_minidump(), ProcessOptions(symbol_paths=(store,), use_symbols_cache=False))
    )
    loaded = events[0]
    assert isinstance(loaded, DumpLoaded)
    assert [len(t.frames) for t in loaded.state.threads] == [1, 1] and not loaded.state.walked
    assert loaded.state.threads[0].frames[0].context.get("rip") == APP + 0x2010  # the exception context
    kinds = [type(e).__name__ for e in events]
    assert kinds[-1] == "Finished"
    # the crashing thread is walked first, its frames streamed before ThreadWalked
    walked = [e for e in events if isinstance(e, FrameWalked | ThreadWalked)]
    assert [(type(e).__name__, e.thread_index) for e in walked[:3]] == [
        ("FrameWalked", 0),
        ("FrameWalked", 0),
        ("ThreadWalked", 0),
    ]
    symbols = [e for e in events if isinstance(e, SymbolsLoaded)]
    assert sorted(e.module_index for e in symbols) == [0, 1]
    first_symbols = kinds.index("SymbolsLoaded")
    assert first_symbols < kinds.index("FrameWalked")
    progress = [e for e in events if isinstance(e, Progress)]
    assert [(p.threads_walked, p.threads_total) for p in progress] == [(1, 2), (2, 2)]
    final = events[-1]
    assert isinstance(final, Finished)
    state = final.state
    assert state.walked and state.requesting_thread == 0
    crashed = state.threads[0]
    assert [f.function_name for f in crashed.frames] == ["crash", "main"]
    assert crashed.frames[1].trust is FrameTrust.CFI
    assert [f.function_name for f in state.threads[1].frames] == ["wait", "main"]
    assert [m.symbols.state for m in state.modules] == [SymbolState.LOADED, SymbolState.LOADED]


def test_process_reports_missing_symbols_with_paths_tried(tmp_path: Path) -> None:
    store = _store(tmp_path, "app", APP_SYMS)
    dump = _two_thread_dump()
    options = ProcessOptions(symbol_paths=(store,), use_symbols_cache=False, local_modules=False)
    state = process(dump.to_minidump(), options)
    lib = state.modules[1].symbols
    assert lib.state is SymbolState.MISSING and lib.missing
    assert lib.tried == (str(store / "lib.so" / debug_id("lib.so") / "lib.so.sym"),)


def test_process_without_symbol_paths_requests_nothing() -> None:
    dump = _two_thread_dump()
    state = process(dump.to_minidump(), ProcessOptions())
    assert all(m.symbols.state is SymbolState.NOT_REQUESTED and not m.symbols.missing for m in state.modules)


def test_process_dump_thread_skipped() -> None:
    """Breakpad's handler thread (BreakpadInfo dump_thread_id) is not walked, as rust-minidump."""
    dump = _two_thread_dump()
    dump.add_breakpad_info(dump_thread_id=2, requesting_thread_id=1)
    state = process(dump.to_minidump())
    skipped = state.threads[1]
    assert skipped.info is CallStackInfo.DUMP_THREAD_SKIPPED and skipped.frames == ()
    assert (
        skipped.termination is not None
        and skipped.termination.reason is TerminationReason.DUMP_THREAD_SKIPPED
    )


def test_process_unloaded_module_attribution() -> None:
    """A frame outside every loaded module names the unloaded modules that covered it."""
    stack = Section(start=STACK).append_repeated(0, 64)
    dump = (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.WINDOWS)
        .add_module(APP, 0x4000, "app.exe")
        .add_unloaded_module(0x6000_0000_0000, 0x1000, "C:\\gone\\plugin.dll")
        .add_unloaded_module(0x6000_0000_0800, 0x1000, "C:\\gone\\other.dll")
        .add_thread(7, context=SynthContext.amd64(rip=0x6000_0000_0900, rsp=STACK), stack=stack)
    )
    state = process(dump.to_minidump())
    frame = state.threads[0].frames[0]
    assert frame.module is None
    assert [(hit.name, hit.offsets) for hit in frame.unloaded_modules] == [
        ("C:\\gone\\other.dll", (0x100,)),
        ("C:\\gone\\plugin.dll", (0x900,)),
    ]


def test_process_missing_context() -> None:
    dump = SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX).add_thread(3, context=b"\0" * 8)
    state = process(dump.to_minidump())
    stack = state.threads[0]
    assert stack.info is CallStackInfo.MISSING_CONTEXT and stack.frames == ()
    assert stack.termination is not None and stack.termination.reason is TerminationReason.NO_CONTEXT


def test_process_reports_a_dump_without_threads() -> None:
    """rust-minidump refuses it; its modules and system info are still worth a report."""
    dump = SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX).add_module(APP, 0x1000, "app")
    state = process(dump.to_minidump())
    assert state.threads == () and [e.module.code_file for e in state.modules] == ["app"]
    assert state.system.cpu is Cpu.AMD64
    assert [p.code for p in state.problems] == ["NoThreadList"]


def test_process_without_system_info_takes_the_cpu_from_the_contexts() -> None:
    dump = (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX, system_info=False)
        .add_module(APP, 0x1000, "app")
        .add_thread(5, context=SynthContext.amd64(rip=APP + 0x10, rsp=STACK))
        .add_thread(6, context=bytes(1232))  # flags naming no CPU: no registers
    )
    state = process(dump.to_minidump())
    assert (state.system.os, state.system.cpu, state.system.os_name) == (Os.UNKNOWN, Cpu.AMD64, "unknown")
    assert state.system.cpu_arch == "amd64"
    first, second = state.threads
    assert first.thread_id == 5 and first.frames[0].instruction == APP + 0x10
    assert second.info is CallStackInfo.MISSING_CONTEXT
    assert "NoSystemInfo" not in [p.code for p in state.problems]
    assert any("taken from the flags" in p.message for p in state.problems)
    assert [e.module.code_file for e in state.modules] == ["app"]


def test_process_without_system_info_or_readable_contexts_lists_threads_without_registers() -> None:
    dump = SynthMinidump(system_info=False).add_module(APP, 0x1000, "app").add_thread(5, context=bytes(1232))
    state = process(dump.to_minidump())
    assert state.system.cpu is Cpu.UNKNOWN and state.threads[0].info is CallStackInfo.MISSING_CONTEXT
    assert "NoSystemInfo" in [p.code for p in state.problems]


def test_process_rejects_a_dump_with_nothing_reportable() -> None:
    dump = SynthMinidump(system_info=False).add_stream(StreamType.ThreadListStream, b"\x05")
    with pytest.raises(InspectorError, match="nothing in the dump can be reported"):
        process(dump.to_minidump())


def test_process_symbols_rust_minidump_rejects(tmp_path: Path) -> None:
    """A .sym without its final newline: rust-minidump refuses it; we name frames but unwind as it does."""
    store = _store(tmp_path, "app", APP_SYMS, final_newline=False)
    stack = Section(start=STACK).d64(APP + 0x3000).d64(APP + 0x1105).append_repeated(0, 64)
    dump = (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX)
        .add_module(APP, 0x4000, "/usr/bin/app", debug_id=debug_id("app"), debug_file="app")
        .add_thread(1, context=SynthContext.amd64(rip=APP + 0x2010, rsp=STACK), stack=stack)
    )
    state = process(dump.to_minidump(), ProcessOptions(symbol_paths=(store,), use_symbols_cache=False))
    frames = state.threads[0].frames
    assert frames[0].function_name == "crash"
    # no CFI: the scan accepts any word in the module, as rust-minidump does without symbols
    assert frames[1].trust is FrameTrust.SCAN and frames[1].return_address == APP + 0x3000
    step = frames[1].found_by
    assert step is not None and "rust-minidump rejects" in step.attempts[0].reason
    entry = state.modules[0].symbols
    assert entry.loaded and entry.corrupt and entry.rust_minidump_rejects
    assert any(p.code == "RustMinidumpRejects" for p in state.problems)
    # with unwind_with_rejected_symbols the file's CFI is used
    options = ProcessOptions(
        symbol_paths=(store,), use_symbols_cache=False, walk=WalkOptions(unwind_with_rejected_symbols=True)
    )
    fixed = process(dump.to_minidump(), options).threads[0].frames
    assert fixed[1].trust is FrameTrust.CFI and fixed[1].return_address == APP + 0x3000


def test_process_cancel_between_frames(tmp_path: Path) -> None:
    dump = _two_thread_dump()
    token = CancelToken()
    events = process_events(dump.to_minidump(), ProcessOptions(), cancel=token)
    assert isinstance(next(events), DumpLoaded)
    assert isinstance(next(events), FrameWalked)
    token.cancel()
    with pytest.raises(Cancelled):
        list(events)


def test_hostile_stack_is_bounded() -> None:
    """A 1 MiB stack full of return addresses in a module without symbols: the frame cap stops it, fast."""
    words = 1 << 17
    stack = Section(start=STACK)
    for i in range(words):
        stack.d64(APP + 0x100 + (i & 0xFF))
    dump = (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX)
        .add_module(APP, 0x4000, "app")
        .add_thread(1, context=SynthContext.amd64(rip=APP + 0x10, rsp=STACK), stack=stack)
    )
    started = time.perf_counter()
    state = process(dump.to_minidump(), ProcessOptions(walk=WalkOptions(max_frames=5000)))
    elapsed = time.perf_counter() - started
    stack_result = state.threads[0]
    assert len(stack_result.frames) == 5000
    assert (
        stack_result.termination is not None
        and stack_result.termination.reason is TerminationReason.MAX_FRAMES
    )
    assert elapsed < 10


def test_process_accepts_a_path(tmp_path: Path) -> None:
    dump = _two_thread_dump()
    path = tmp_path / "crash.dmp"
    path.write_bytes(dump.finish())
    state = process(path)
    assert state.path == str(path) and len(state.threads) == 2
    assert state.threads[0].frames[0].found_by is None


def test_every_unwinder_describes_its_cpu_and_covers_every_policy() -> None:
    """One shape for every CPU: a description whose registers are the context's, and per policy
    the strategies and post-checks as data."""
    for cpu, unwinder in UNWINDERS.items():
        description = unwinder.cpu
        assert description.cpu is cpu
        registers = REGISTER_SETS[layout_for(cpu)]
        assert (description.instruction_pointer, description.stack_pointer) == (
            registers.instruction_pointer,
            registers.stack_pointer,
        )
        assert set(description.callee_saved) <= set(registers.names), cpu
        assert set(unwinder.strategies) == set(WalkPolicy) == set(unwinder.post_checks), cpu
        assert all(unwinder.strategies[p] and unwinder.post_checks[p] for p in WalkPolicy), cpu


def test_each_thread_start_says_where_its_registers_come_from() -> None:
    state = process(sample_dump(), ProcessOptions(use_symbols_cache=False))
    starts = state.thread_starts
    assert [s.source for s in starts] == [ContextSource.THREAD, ContextSource.THREAD, ContextSource.EXCEPTION]
    crashing = starts[state.requesting_thread or 0]
    assert crashing.context is state.threads[2].frames[0].context
    assert crashing.stack is not None and crashing.stack.base == 0x7FFFF75CFE08
    assert state.module_list.index_at(0x555555555758) == 0 and state.dump_size == sample_dump().stat().st_size


def test_a_dump_with_nothing_to_report_is_refused_or_shown_without_a_walk(tmp_path: Path) -> None:
    """The command line refuses it; the window (`usable_only=False`) shows what the reader found."""
    data = SynthMinidump(system_info=False).add_stream(0x47670003, b"text").finish()
    with pytest.raises(InspectorError, match="nothing in the dump can be reported"):
        list(process_events(Minidump.from_bytes(data)))
    events = list(process_events(Minidump.from_bytes(data), usable_only=False))
    assert [type(e) for e in events] == [DumpLoaded, Finished]
    state = events[-1].state
    assert isinstance(state, type(events[0].state)) and state.threads == ()
    last = state.problems[-1]
    assert (last.source, last.code) == ("walk", "NotWalked")
    assert last.message.startswith("the dump cannot be walked: nothing in the dump can be reported")


def test_an_empty_assertion_record_is_no_assertion(corpus_dir: Path) -> None:
    """node-minidump's windows.dmp carries an all-zero AssertionInfo stream (Electron's Crashpad)."""
    options = ProcessOptions(use_symbols_cache=False)
    empty = process(corpus_dir / "node-minidump" / "windows.dmp", options)
    real = process(corpus_dir / "rust-minidump" / "invalid-parameter.dmp", options)
    assert empty.assertion is None
    assert real.assertion is not None
    assert real.assertion.startswith("Invalid parameter passed to library function format != nullptr")
