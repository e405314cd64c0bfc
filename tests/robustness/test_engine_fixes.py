"""One focused test per engine fix the damaged-input generator led to (see README, Robustness).

Each builds the smallest dump (or report) that lost data or crashed before the fix.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.minidump import (
    Minidump,
    NotAMinidump,
    StreamType,
    UnloadedModule,
    UnloadedModuleList,
    UnreadableFile,
)
from inspector.core.process import Finished, FrameWalked, ProcessOptions, process, process_events
from inspector.core.report.human import render_human
from inspector.core.report.json_report import render_json
from inspector.core.symbols import (
    DamageKind,
    IndexCache,
    SymbolFile,
    SymbolFileUnreadable,
    SymbolServerOptions,
)
from inspector.core.symbols.postfix import evaluate_cfi, parse_cfi_rules
from inspector.core.types import Cpu, Os
from inspector.core.unwind import TerminationReason, WalkOptions
from inspector.resources import sample_dump, sample_symbols
from tests.robustness.harness import time_limit
from tests.synth.minidump import SynthContext, SynthMinidump
from tests.synth.section import Section

APP = 0x400000
STACK = 0x7FFF0000


def _walkable(*, stack_words: int = 8, crash: bool = True) -> SynthMinidump:
    """Thread 1 crashed and scans a stack of return addresses into app; thread 2 has no stack."""
    stack = Section(start=STACK)
    for i in range(stack_words):
        stack.d64(APP + 0x100 + i)
    synth = (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX)
        .add_thread(1, context=SynthContext.amd64(rip=APP + 0x10, rsp=STACK, rbp=0), stack=stack)
        .add_thread(2, context=SynthContext.amd64(rip=APP + 0x20, rsp=0x10000))
        .add_module(APP, 0x1000, "/usr/bin/app", build_id=b"\x01" * 20)
    )
    if crash:
        synth.add_exception(1, code=11, flags=1, context=SynthContext.amd64(rip=APP + 0x10, rsp=STACK, rbp=0))
    return synth


def test_thread_list_with_a_huge_count_is_still_walked() -> None:
    """Was: any size mismatch in the thread list made `process` refuse the whole dump."""
    synth = _walkable()
    data = bytearray(synth.finish())
    rva, _ = synth.stream_locations[StreamType.ThreadListStream]
    data[rva : rva + 4] = (0xFFFFFFFF).to_bytes(4, "little")
    state = process(Minidump.from_bytes(bytes(data)))
    assert [t.thread_id for t in state.threads] == [1, 2]
    assert len(state.threads[0].frames) > 1 and state.crash is not None
    assert any(p.code == "StreamSizeMismatch" for p in state.problems)


def test_dump_cut_inside_the_thread_list_keeps_system_info_and_whole_threads() -> None:
    """Was: exit 1, "no readable thread list", although system info and one thread were intact."""
    synth = _walkable()
    data = synth.finish()
    rva, _ = synth.stream_locations[StreamType.ThreadListStream]
    state = process(Minidump.from_bytes(data[: rva + 4 + 48 + 20]))  # one whole thread and part of one
    assert state.system.cpu is Cpu.AMD64
    assert [t.thread_id for t in state.threads] == [1]
    assert any("cut off" in p.message for p in state.problems)


def test_exception_said_to_run_past_the_end_still_gives_the_crash() -> None:
    """Was: the crash reason was dropped with a stream whose directory size ran past the file."""
    synth = _walkable()
    data = bytearray(synth.finish())
    directory = int.from_bytes(data[12:16], "little")
    for i in range(int.from_bytes(data[8:12], "little")):
        at = directory + 12 * i
        if int.from_bytes(data[at : at + 4], "little") == StreamType.ExceptionStream:
            data[at + 4 : at + 8] = (0xFFFFFFFF).to_bytes(4, "little")
    state = process(Minidump.from_bytes(bytes(data)))
    assert state.crash is not None and state.crash.reason == "SIGSEGV / SEGV_MAPERR"


def test_stack_cut_off_by_the_end_of_the_file_is_walked_as_far_as_it_goes() -> None:
    """Was: a stack running past the end of the file was dropped whole (frame 0 only).

    The sample's crashing thread has its stack at the very end of the file (Crashpad's layout),
    so a dump cut short there is the commonest damage there is.
    """
    data = sample_dump().read_bytes()
    options = ProcessOptions(symbol_paths=(sample_symbols(),), use_symbols_cache=False)
    whole = process(Minidump.from_bytes(data), options).crashing_thread
    with Minidump.from_bytes(data) as dump:
        thread = dump.crashing_thread
        assert thread is not None
        stack = thread.stack_location
    assert stack.rva + stack.data_size == len(data) and whole is not None and len(whole.frames) == 4
    state = process(Minidump.from_bytes(data[: stack.rva + 0x100]), options)
    cut = state.crashing_thread
    assert cut is not None and len(cut.frames) == 3
    assert [(f.instruction, f.function_name) for f in cut.frames] == [
        (f.instruction, f.function_name) for f in whole.frames[:3]
    ]
    assert any(
        "stack of 0x8b8 bytes" in p.message and "(the first 0x100 are in it)" in p.message
        for p in state.problems
    )


def test_memory_region_cut_off_by_the_end_of_the_file_keeps_its_bytes() -> None:
    data = SynthMinidump(cpu=Cpu.AMD64).add_thread(1).add_memory(0x10000, bytes(range(256)) * 4).finish()
    dump = Minidump.from_bytes(data[:-1000])
    region = dump.memory.region_for(0x10000)
    assert region is not None and region.size == len(data) - 1000 - region.rva < 1024
    assert dump.memory.read_u8(0x10000 + region.size - 1) == (region.size - 1) % 256
    assert any(
        "partly outside the file" in p.message for p in dump.stream_problems(StreamType.MemoryListStream)
    )


def test_context_with_a_huge_size_is_read_from_the_bytes_that_are_there() -> None:
    """Was: a context location whose size ran past the end of the file lost the thread's registers."""
    synth = _walkable()
    data = bytearray(synth.finish())
    rva, _ = synth.stream_locations[StreamType.ThreadListStream]
    data[rva + 4 + 40 : rva + 4 + 44] = (0xFFFFFFF0).to_bytes(4, "little")  # thread[0] context size
    dump = Minidump.from_bytes(bytes(data))
    context = dump.threads[0].context
    assert context is not None and context.instruction_pointer == APP + 0x10
    assert any(
        "context of 0xfffffff0 bytes" in p.message for p in dump.stream_problems(StreamType.ThreadListStream)
    )


def test_module_misc_record_outside_the_file_is_reported() -> None:
    synth = SynthMinidump().add_module(APP, 0x1000, "/usr/bin/app")
    data = bytearray(synth.finish())
    rva, _ = synth.stream_locations[StreamType.ModuleListStream]
    data[rva + 4 + 84 : rva + 4 + 92] = (16).to_bytes(4, "little") + (0x7FFFFF00).to_bytes(4, "little")
    dump = Minidump.from_bytes(bytes(data))
    assert dump.modules[0].code_file == "/usr/bin/app"
    assert any("misc record" in p.message for p in dump.stream_problems(StreamType.ModuleListStream))


def test_frame_limit_is_said_in_json_and_human_reports(tmp_path: Path) -> None:
    state = process(
        Minidump.from_bytes(_walkable(stack_words=64).finish()),
        ProcessOptions(walk=WalkOptions(max_frames=5)),
    )
    stack = state.threads[0]
    assert len(stack.frames) == 5 and stack.termination is not None
    assert stack.termination.reason is TerminationReason.MAX_FRAMES
    document = json.loads(render_json(state))
    [limit] = [p for p in document["inspector_problems"] if p["code"] == "FrameLimit"]
    assert limit["source"] == "walk"
    assert limit["message"].startswith("thread 0 (id 0x1): stopped after 5 frames (the frame limit)")
    human = render_human(state)
    assert "    (stopped after 5 frames (the frame limit); the frames beyond it are not shown)" in human
    assert "Problems found in the inputs (1):\n  [walk] FrameLimit: thread 0" in human


def test_human_report_closes_with_every_problem() -> None:
    data = (
        SynthMinidump(cpu=Cpu.AMD64).add_thread(1).add_stream(StreamType.MiscInfoStream, bytes(10)).finish()
    )
    state = process(Minidump.from_bytes(data))
    human = render_human(state)
    assert state.problems
    assert (
        human
        == render_human(state, problems=False)
        + "\n".join(
            ["", f"Problems found in the inputs ({len(state.problems)}):"]
            + [f"  [{p.source}] {p.code} at {p.offset:#x}: {p.message}" for p in state.problems]
        )
        + "\n"
    )
    clean = process(Minidump.from_bytes(_walkable().finish()))
    assert "Problems found" not in render_human(clean)


def _rules_token_by_token(text: str) -> list[tuple[str, str]] | None:
    """rust-minidump's rule split, token by token (the former implementation; the reference)."""
    rules: list[tuple[str, str]] = []
    register: str | None = None
    first = last = -1
    for m in re.finditer(r"[^ \t\n\x0c\r]+", text):
        token = m.group()
        if token.endswith(":"):
            if register is not None:
                if first < 0:
                    return None
                rules.append((register, text[first:last]))
            name = token[:-1]
            register = name[1:] if name.startswith("$") else name
            first = last = -1
        else:
            if register is None:
                return None
            if first < 0:
                first = m.start()
            last = m.end()
    if register is None or first < 0:
        return None
    rules.append((register, text[first:last]))
    return rules


_PIECES = st.sampled_from(
    [
        ".cfa:",
        ".ra:",
        "$rbp:",
        "rip:",
        ":",
        "a:b",
        "a:b:",
        "$:",
        "$rsp",
        "8",
        "+",
        "^",
        ".cfa",
        "-8",
        "x\x0b:",
    ]
)
_SPACES = st.sampled_from([" ", "  ", "\t", "\n", "\r", "\x0c", "\x0b", ""])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_SPACES, _PIECES), max_size=12), _SPACES)
def test_cfi_rule_split_equals_the_token_by_token_split(pieces: list[tuple[str, str]], tail: str) -> None:
    text = "".join(space + piece for space, piece in pieces) + tail
    assert parse_cfi_rules(text) == _rules_token_by_token(text)


def test_a_rule_of_300000_tokens_is_split_and_refused_without_a_token_loop() -> None:
    """Was: every CFI lookup looped over every token in Python (9 s for one hostile walk)."""
    text = ".cfa: $rsp " + "1 + " * 150_000 + ".ra: .cfa -8 + ^"
    with time_limit(5):  # a hang guard, not a timing target
        rules = parse_cfi_rules(text)
        assert rules is not None and [register for register, _ in rules] == [".cfa", ".ra"]
        result = evaluate_cfi(dict(rules)[".cfa"], registers={"rsp": 8}, read_word=lambda a: None)
    assert result.error == "expression has more than 10000 tokens" and result.steps == ()


def test_context_cut_short_after_its_registers_keeps_them() -> None:
    """Was: a thread whose context was cut in its floating-point area lost all its registers."""
    data = sample_dump().read_bytes()
    with Minidump.from_bytes(data) as whole:
        thread = whole.threads[2]
        assert thread.context is not None
        location, rip = thread.context_location, thread.context.instruction_pointer
    cut = data[: location.rva + 880]  # the registers end at 0x100, the float state after it
    dump = Minidump.from_bytes(cut)
    context = dump.threads[2].context
    assert context is not None and context.instruction_pointer == rip
    assert any(
        "has 880 of the 1232 bytes of CONTEXT_AMD64: its registers are read" in p.message
        for p in dump.stream_problems(StreamType.ThreadListStream)
    )
    too_short = Minidump.from_bytes(data[: location.rva + 0xF0])  # rip (at 0xf8) is cut
    assert too_short.threads[2].context is None


def test_without_its_system_info_the_sample_is_walked_as_before() -> None:
    """Was: no system info, no registers, no frames (rust-minidump refuses the dump). The thread
    contexts' flags say amd64, so every thread is walked exactly as in the undamaged dump."""
    data = bytearray(sample_dump().read_bytes())
    assert data[32:36] == (7).to_bytes(4, "little")  # directory[0] is the SystemInfo stream
    data[32:36] = (0x47670099).to_bytes(4, "little")  # now an unknown Linux-vendor stream
    options = ProcessOptions(symbol_paths=(sample_symbols(),), use_symbols_cache=False)
    whole = process(Minidump.from_bytes(sample_dump().read_bytes()), options)
    damaged = process(Minidump.from_bytes(bytes(data)), options)
    assert damaged.system.cpu is Cpu.AMD64 and damaged.system.os is Os.UNKNOWN
    for before, after in zip(whole.threads, damaged.threads, strict=True):
        assert [(f.instruction, f.trust, f.function_name) for f in after.frames] == [
            (f.instruction, f.trust, f.function_name) for f in before.frames
        ]
    assert any(
        "the CPU (amd64) is taken from the flags of 4 thread context(s)" in p.message
        for p in damaged.problems
    )


def test_a_damaged_signature_before_an_intact_version_and_directory_is_read() -> None:
    data = b"XXXX" + sample_dump().read_bytes()[4:]
    dump = Minidump.from_bytes(data)
    assert len(dump.threads) == 3 and len(dump.modules) == 4
    assert [(p.code, p.offset) for p in dump.problems] == [("HeaderMismatch", 0)]
    assert "signature 0x58585858 is not MDMP" in dump.problems[0].message
    with pytest.raises(NotAMinidump):  # without a directory it is just not a minidump
        Minidump.from_bytes(b"XXXX\x93\xa7\x00\x00" + bytes(24) + b"garbage" * 8)


def test_a_stream_count_of_zero_before_an_intact_directory_is_read() -> None:
    data = bytearray(sample_dump().read_bytes())
    data[8:12] = bytes(4)
    dump = Minidump.from_bytes(bytes(data))
    assert len(dump.directory) == 8 and len(dump.threads) == 3
    assert [(p.code, p.offset) for p in dump.problems] == [("DirectoryTruncated", 8)]
    assert "8 entries found right after the header are used" in dump.problems[0].message


def test_damage_in_every_block_is_counted_with_right_line_numbers_in_linear_time(tmp_path: Path) -> None:
    """Was: each damaged block counted the newlines from the top of the file to find its line
    number, so `check_all` on a 4 MB file damaged in every FUNC took 12 s (quadratic)."""
    lines = ["MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 big"]
    damaged_lines = []
    for i in range(20_000):
        address = 0x1000 + i * 0x100
        lines += [f"FUNC {address:x} 100 0 f{i}", f"{address:x} 10 1 0"]
        lines.append(f"{address + 0x10:x} 10 99999999999 0")  # a line number past 32 bits
        damaged_lines.append(len(lines))
    path = tmp_path / "damaged-everywhere.sym"
    path.write_text("\n".join(lines) + "\n")
    with SymbolFile.open(path, cache=IndexCache(None)) as sym:
        sym.find_line(0x1000 + 17 * 0x100)  # one block first, out of file order
        with time_limit(10):  # a hang guard: it takes a fraction of a second
            report = sym.check_all()
    assert report.counts[DamageKind.BAD_LINE] == 20_000
    examples = [d.line_number for d in report.examples if d.kind is DamageKind.BAD_LINE]
    assert examples == [damaged_lines[0], damaged_lines[1], damaged_lines[17]]


_UNLOADED = st.lists(
    st.tuples(st.integers(0, 0x2000), st.integers(0, 0x800)).map(
        lambda r: UnloadedModule(r[0], r[1], 0, 0, 0, f"m{r[0]:x}-{r[1]:x}")
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(_UNLOADED, st.lists(st.integers(0, 0x2900), min_size=1, max_size=8))
def test_unloaded_module_lookup_equals_a_pass_over_the_list(
    modules: list[UnloadedModule], addresses: list[int]
) -> None:
    """The stabbing tree (was: a pass over every unloaded module for every frame) finds the same."""
    unloaded = UnloadedModuleList(tuple(modules))
    for address in addresses:
        expected = sorted(
            (m for m in modules if m.size and m.base <= address <= m.base + m.size - 1),
            key=lambda m: (m.base, m.base + m.size),
        )
        assert unloaded.modules_at(address) == expected


def test_a_deep_walk_through_a_huge_unloaded_module_list_is_not_quadratic() -> None:
    """200 000 unloaded modules (a 5 MB stream) and 3 000 frames outside every loaded module: a
    pass over the list per frame was 600 million checks."""
    modules = tuple(
        UnloadedModule(0x10000000 + i * 0x1000, 0x1000, 0, 0, 0, "gone.so") for i in range(200_000)
    )
    wide = UnloadedModule(0x900000, 0x10000, 0, 0, 0, "the_one.so")
    unloaded = UnloadedModuleList((*modules, wide))
    with time_limit(10):  # a hang guard: a fraction of a second
        for frame in range(3000):
            assert unloaded.modules_at(0x900000 + frame) == [wide]
        assert unloaded.modules_at(0x10000000 + 0x1000 * 1234 + 5) == [modules[1234]]


def test_threads_naming_one_context_share_it() -> None:
    """A hostile thread list can point every thread at one context: read once, not once a thread."""
    synth = SynthMinidump(cpu=Cpu.AMD64).add_thread(1, context=SynthContext.amd64(rip=APP))
    data = bytearray(synth.finish())
    rva, size = synth.stream_locations[StreamType.ThreadListStream]
    record = bytes(data[rva + 4 : rva + 4 + 48])
    count = 2000
    body = count.to_bytes(4, "little") + record * count
    tail = len(data)
    data += body  # a second, bigger thread list at the end of the file
    directory = int.from_bytes(data[12:16], "little")
    for i in range(int.from_bytes(data[8:12], "little")):
        at = directory + 12 * i
        if int.from_bytes(data[at : at + 4], "little") == StreamType.ThreadListStream:
            data[at + 4 : at + 12] = len(body).to_bytes(4, "little") + tail.to_bytes(4, "little")
    dump = Minidump.from_bytes(bytes(data))
    contexts = {id(t.context) for t in dump.threads}
    assert len(dump.threads) == count and len(contexts) == 1 and dump.threads[0].context is not None
    assert size == 4 + 48 and dump.problems == ()


def _threads_on_one_plausible_stack(count: int, *, rsp_step: int) -> bytes:
    """`count` threads walking one stack of return addresses into app, `rsp_step` bytes apart."""
    words = b"".join((APP + 0x100 + (i % 64)).to_bytes(8, "little") for i in range(64 * 1024))
    synth = SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX).add_module(APP, 0x1000, "/usr/bin/app")
    for i in range(count):
        context = SynthContext.amd64(rip=APP + 0x10, rsp=STACK + i * rsp_step, rbp=0)
        synth.add_thread(i + 1, context=context, stack=(STACK, words) if i == 0 else None)
    return synth.finish()


def test_threads_with_the_same_start_on_the_same_stack_are_walked_once() -> None:
    """Was: each of many threads pointed at one long stack walked it again (time and memory per thread)."""
    dump = Minidump.from_bytes(_threads_on_one_plausible_stack(40, rsp_step=0))
    with time_limit(20):  # 40 walks of 3 000 frames would be 120 000 frames; one is 3 000
        state = process(dump, ProcessOptions(walk=WalkOptions(max_frames=3000)))
    assert {len(t.frames) for t in state.threads} == {3000}
    assert len({id(t.frames[-1]) for t in state.threads}) == 1  # the very same frames
    assert [t.thread_id for t in state.threads] == list(range(1, 41))


def test_the_frames_of_all_threads_of_a_dump_have_a_limit() -> None:
    dump = Minidump.from_bytes(_threads_on_one_plausible_stack(5, rsp_step=8))
    options = ProcessOptions(walk=WalkOptions(max_frames=1000, max_dump_frames=2500))
    state = process(dump, options)
    assert [len(t.frames) for t in state.threads] == [1000, 1000, 500, 1, 1]
    reasons = [t.termination.reason for t in state.threads if t.termination is not None]
    assert reasons == [TerminationReason.MAX_FRAMES] * 2 + [TerminationReason.DUMP_FRAME_BUDGET] * 3
    limits = [p.message for p in state.problems if p.code == "FrameLimit"]
    assert len(limits) == 5
    assert limits[2] == (
        "thread 2 (id 0x3): stopped after 500 frames (the limit of 2500 frames for all threads of the "
        "dump); the frames beyond it are not shown"
    )


def test_shared_walks_and_the_dump_limit_hold_when_the_walk_runs_beside_downloads(tmp_path: Path) -> None:
    """With symbol servers the walk runs on a helper thread: it shares walks and keeps the limit too."""
    dump = Minidump.from_bytes(_threads_on_one_plausible_stack(6, rsp_step=0))
    walk = WalkOptions(max_frames=1000, max_dump_frames=2500)
    # an offline download cache: the server path (helper thread, tracker) without any network
    servers = SymbolServerOptions(cache_dir=tmp_path / "downloads", offline=True)
    options = ProcessOptions(walk=walk, symbol_servers=servers)
    assert options.uses_servers
    with time_limit(20):
        events = list(process_events(dump, options))
    final = events[-1]
    assert isinstance(final, Finished)
    state = final.state
    assert [len(t.frames) for t in state.threads] == [1000] * 6  # one walk, shared: the limit is not hit
    assert len({id(t.frames[-1]) for t in state.threads}) == 1
    walked = [e for e in events if isinstance(e, FrameWalked)]
    assert len(walked) == 6000 and {e.thread_index for e in walked} == set(range(6))
    assert [p.code for p in state.problems].count("FrameLimit") == 6

    spread = Minidump.from_bytes(_threads_on_one_plausible_stack(5, rsp_step=8))
    with time_limit(20):
        capped = process(spread, options)
    assert [len(t.frames) for t in capped.threads] == [1000, 1000, 500, 1, 1]
    assert capped.threads[2].termination is not None
    assert capped.threads[2].termination.reason is TerminationReason.DUMP_FRAME_BUDGET


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_as_dump_or_symbol_file_is_refused_at_once(tmp_path: Path) -> None:
    """Was: opening a FIFO for reading waited for a writer, for ever (the GUI worker, the CLI)."""
    pipe = tmp_path / "crash.dmp"
    os.mkfifo(pipe)
    with time_limit(5), pytest.raises(UnreadableFile, match="not a regular file"):
        Minidump.open(pipe)
    sym = tmp_path / "app.sym"
    os.mkfifo(sym)
    with time_limit(5), pytest.raises(SymbolFileUnreadable, match="not a regular file"):
        SymbolFile.open(sym)
