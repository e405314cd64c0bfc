"""The trace keeps what the walk computed in compact form and builds its records when read.

Texts as templates, checks and memory words as rows, a scan's words as addresses, values and
shared verdicts (`inspector.core.unwind.trace`): a reader must get exactly the records and texts
the walk would have built at once. Also the per-dump memos of the walk's environment, and scans
whose window is read a few words at a time.
"""

from __future__ import annotations

import struct
from pathlib import Path

from inspector.core.minidump import CpuContext, MemoryRegion, ModuleList
from inspector.core.types import Cpu, Os
from inspector.core.unwind import (
    CandidateVerdict,
    Check,
    FramePointerProbe,
    FrameTrust,
    MemoryWord,
    Outcome,
    ScanCandidate,
    ScanDetail,
    Strategy,
    StrategyAttempt,
    UnwindStep,
    WalkEnvironment,
    WalkOptions,
    WalkPolicy,
)
from inspector.core.unwind.amd64 import AMD64
from inspector.core.unwind.environment import StackMemory
from inspector.core.unwind.scan import scan_stack
from tests.synth.section import Section
from tests.unwind.harness import UnwindCase

STACK = 0x7FFF_0000_1000
MODULE = 0x7400C0000000


def _memory(words: list[int], base: int = STACK, width: int = 8) -> StackMemory:
    data = b"".join(struct.pack("<Q" if width == 8 else "<I", w) for w in words)
    return StackMemory(MemoryRegion(base, len(data), memoryview(data), 0))


def _environment(policy: WalkPolicy = WalkPolicy.RUST_MINIDUMP, cpu: Cpu = Cpu.AMD64) -> WalkEnvironment:
    return WalkEnvironment(
        cpu=cpu, os=Os.LINUX, modules=ModuleList(()), symbolizer=None, options=WalkOptions(policy=policy)
    )


def test_texts_are_formatted_when_read() -> None:
    check = Check(("caller rsp {:#x} is above callee rsp {:#x}", 0x20, 0x10), True)
    assert check.description == "caller rsp 0x20 is above callee rsp 0x10"
    assert Check("a plain description", False).description == "a plain description"
    attempt = StrategyAttempt(
        Strategy.SCAN, Outcome.FOUND, ("return address {:#x} found at {:#x}", 0x401000, 8)
    )
    assert attempt.reason == "return address 0x401000 found at 0x8"
    rejected = attempt.with_outcome(Outcome.REJECTED, f"{attempt.reason}; no")
    assert (rejected.strategy, rejected.outcome, rejected.reason) == (
        Strategy.SCAN,
        Outcome.REJECTED,
        "return address 0x401000 found at 0x8; no",
    )


def test_rows_become_checks_and_memory_words_when_read() -> None:
    read_rows = ((STACK + 8, 8, 0x401000, "return address", "rip"), (STACK, 8, None, "caller rbp", "rbp"))
    check_rows = ((("return address {:#x} is canonical", 0x401000), True), ("unreadable", False))
    probe = FramePointerProbe(0, read_rows, check_rows, False)
    assert probe.reads == (
        MemoryWord(STACK + 8, 8, 0x401000, "return address", "rip"),
        MemoryWord(STACK, 8, None, "caller rbp", "rbp"),
    )
    assert [(c.description, c.passed) for c in probe.checks] == [
        ("return address 0x401000 is canonical", True),
        ("unreadable", False),
    ]
    step = UnwindStep(0, (), None, check_rows)
    assert step.post_checks == probe.checks
    scan = ScanDetail(STACK, 40, 8, range(0), (), (), "empty", read_rows, check_rows)
    assert scan.frame_pointer_reads == probe.reads and scan.frame_pointer_checks == probe.checks


def test_scan_candidates_are_built_once_from_the_words_and_their_verdicts() -> None:
    rejected = CandidateVerdict(False, None, None, "not in any loaded module")
    accepted = CandidateVerdict(True, "libc.so.6", "read", "inside a function")
    detail = ScanDetail(
        STACK,
        40,
        8,
        range(STACK, STACK + 24, 8),
        (7, 8, 0x7F00_0000_1234),
        (rejected, rejected, accepted),
        "hit",
    )
    assert detail.candidates == (
        ScanCandidate(STACK, 7, None, None, False, "not in any loaded module"),
        ScanCandidate(STACK + 8, 8, None, None, False, "not in any loaded module"),
        ScanCandidate(STACK + 16, 0x7F00_0000_1234, "libc.so.6", "read", True, "inside a function"),
    )
    assert detail.candidates is detail.candidates  # kept after the first read
    assert detail.accepted == detail.candidates[2]
    # Breakpad's saved-ebp search goes downwards
    down = ScanDetail(0x1000, 2, 4, range(0x1008, 0x1000, -4), (1, 2), (rejected, rejected), "none")
    assert [c.address for c in down.candidates] == [0x1008, 0x1004]
    assert down.accepted is None


def test_an_attempt_reads_its_registers_off_its_caller() -> None:
    caller = CpuContext.from_registers(Cpu.AMD64, {"rip": 0x401000, "rsp": STACK, "rbp": STACK + 16})
    attempt = StrategyAttempt(Strategy.FRAME_POINTER, Outcome.FOUND, "found", None, caller)
    assert attempt.registers == (("rbp", STACK + 16), ("rsp", STACK), ("rip", 0x401000))
    assert attempt.with_outcome(Outcome.REJECTED, "no").registers == attempt.registers
    assert StrategyAttempt(Strategy.SCAN, Outcome.FAILED, "none").registers == ()


def test_contexts_take_aliases_and_name_unknown_registers() -> None:
    arm = CpuContext.from_registers(Cpu.ARM, {"r11": 0x100, "r13": 0x200, "pc": 0x300})
    assert arm.valid == {"fp", "sp", "pc"} and arm.get("fp") == 0x100 and arm.value("r13") == 0x200
    assert arm.subset(["r11", "lr"]).valid == {"fp"}
    assert arm.with_registers({"r14": 0x400}, keep_valid=True).valid == {"fp", "sp", "pc", "lr"}
    for build in (
        lambda: CpuContext.from_registers(Cpu.AMD64, {"rip": 1, "xyz": 2}),
        lambda: CpuContext.from_registers(Cpu.AMD64, {"rip": 1}, valid=["xyz"]),
        lambda: arm.with_registers({"xyz": 1}),
    ):
        try:
            build()
        except KeyError as exc:
            assert "xyz" in str(exc)
        else:
            raise AssertionError("an unknown register was accepted")


def test_stack_memory_reads_the_words_before_the_first_unreadable_one() -> None:
    memory = _memory([1, 2, 3])
    assert memory.words(STACK, 2, 8) == (1, 2)
    assert memory.words(STACK + 8, 10, 8) == (2, 3)
    assert memory.words(STACK + 20, 2, 8) == ()  # a word cut by the end of the region
    assert memory.words(STACK - 8, 2, 8) == ()  # the first word lies below the region
    assert memory.words(STACK, 4, 4) == (1, 0, 2, 0)


def test_a_scan_reads_its_window_in_chunks_and_says_why_it_stopped() -> None:
    env = _environment()
    twenty = _memory([0x10 + i for i in range(20)])  # nothing in a module: every word is rejected
    result = scan_stack(env, twenty, start=STACK, words=40, width=8, prefilter=AMD64.scan_prefilter)
    assert result.address is None and len(result.detail.candidates) == 20
    assert result.detail.stopped == f"stack memory ends before {STACK + 20 * 8:#x}"
    assert [c.address for c in result.detail.candidates] == [STACK + 8 * i for i in range(20)]
    assert [c.value for c in result.detail.candidates] == [0x10 + i for i in range(20)]
    window = scan_stack(env, twenty, start=STACK, words=17, width=8, prefilter=AMD64.scan_prefilter)
    assert len(window.detail.candidates) == 17
    assert window.detail.stopped == "no return address in the 17-word window"
    top = 0xFFFF_FFF8
    high = StackMemory(MemoryRegion(top, 16, memoryview(bytes(16)), 0))
    overflow = scan_stack(env, high, start=top, words=40, width=4)
    assert len(overflow.detail.candidates) == 2
    assert overflow.detail.stopped == "the next address overflows 32 bits"


def test_verdicts_are_kept_per_pre_filter() -> None:
    env = _environment()
    non_canonical = 0x8000_0000_0000_0000
    with_filter = env.scan_verdicts(AMD64.scan_prefilter)
    without = env.scan_verdicts(None)
    assert with_filter is not without and env.scan_verdicts(None) is without
    assert env.judge(non_canonical, AMD64.scan_prefilter, with_filter).reason == "not a canonical address"
    assert env.judge(non_canonical, None, without).reason == "not in any loaded module"
    assert with_filter[non_canonical].reason == "not a canonical address"
    # Breakpad's policy does not pre-filter: its scans read the memo without one
    breakpad = _environment(WalkPolicy.BREAKPAD)
    scan_stack(
        breakpad, _memory([non_canonical]), start=STACK, words=1, width=8, prefilter=AMD64.scan_prefilter
    )
    assert breakpad.scan_verdicts(None)[non_canonical].reason == "not in any loaded module"


def test_a_return_address_past_the_first_chunk_is_found(tmp_path: Path) -> None:
    """The scan from the context frame reads 160 words, 16 at a time: a hit at word 20 is found."""
    stack = Section(start=0x8000000080000000)
    stack.append_repeated(0, 20 * 8).d64(MODULE + 0x100).append_repeated(0, 64 * 8)
    case = UnwindCase(tmp_path, Cpu.AMD64).add_module(MODULE, 0x10000, "module1")
    walk = case.walk(stack, rip=MODULE + 0x200, rsp=stack.start, rbp=0)
    assert walk.frames[1].trust is FrameTrust.SCAN
    assert walk.frames[1].context.get("rip") == MODULE + 0x100
    scan = walk.chosen(1).detail
    assert isinstance(scan, ScanDetail) and len(scan.candidates) == 21
    assert [c.accepted for c in scan.candidates] == [False] * 20 + [True]
    assert scan.stopped == f"accepted the word at {stack.start + 20 * 8:#x}"


def test_repeated_frames_share_what_the_walk_looked_up(tmp_path: Path) -> None:
    """Threads standing at the same instructions get the same symbols (memoized per address)."""
    symbols = "FUNC 100 400 10 monotreme\nFUNC 800 100 0 marsupial\n"
    stack = Section(start=0x8000000080000000)
    stack.append_repeated(0, 4 * 8).d64(MODULE + 0x880).d64(MODULE + 0x880).append_repeated(0, 64 * 8)
    case = UnwindCase(tmp_path, Cpu.AMD64).add_module(MODULE, 0x10000, "module1", symbols)
    walk = case.walk(stack, rip=MODULE + 0x200, rsp=stack.start, rbp=0)
    names = [f.function_name for f in walk.frames]
    assert names[:3] == ["monotreme", "marsupial", "marsupial"]
    assert walk.frames[1].symbol is walk.frames[2].symbol  # looked up once
