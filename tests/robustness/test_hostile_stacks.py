"""The stackwalker on hostile stacks: cycles, a stack pointer that never grows, huge scans, deep
recursion, hostile CFI and STACK WIN programs. Every walk ends, in bounded time, and says why.

Built with the synthetic builders (`tests.unwind.harness.UnwindCase`); each walk runs under a
time limit that turns a hang into a failure.
"""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from inspector.core.minidump import Minidump
from inspector.core.process import ProcessOptions, process
from inspector.core.report.human import render_human
from inspector.core.report.json_report import render_json
from inspector.core.types import Cpu, Os
from inspector.core.unwind import (
    CfiDetail,
    FrameTrust,
    Outcome,
    StackWinDetail,
    Strategy,
    TerminationReason,
    WalkOptions,
)
from inspector.core.unwind.options import RUST_MINIDUMP_MAX_FRAMES
from tests.robustness.damage import HOSTILE_CFI, HOSTILE_WIN
from tests.robustness.harness import time_limit
from tests.synth.minidump import SynthContext, SynthMinidump
from tests.synth.section import Label, Section
from tests.unwind.harness import UnwindCase, Walked

STACK = 0x7FFF00000000
MODULE = 0x7400C0000000
X86_MODULE = 0x10000000
X86_STACK = 0x20000000
#: Hang guard for one walk (they take milliseconds, the 64 MB one seconds).
WALK_SECONDS = 60


def amd64(tmp_path: Path, symbols: str | None = None) -> UnwindCase:
    return UnwindCase(tmp_path, Cpu.AMD64).add_module(MODULE, 0x10000, "hostile", symbols)


def walk(case: UnwindCase, stack: Section, **kwargs: object) -> Walked:
    with time_limit(WALK_SECONDS):
        return case.walk(stack, **kwargs)  # type: ignore[arg-type]


def test_frame_pointer_cycle_of_two_records_ends_the_walk(tmp_path: Path) -> None:
    """Two frame records pointing at each other: the stack pointer must grow, so the cycle is cut."""
    stack = Section(start=STACK)
    a, b = Label(), Label()
    stack.append_repeated(0, 16).mark(a).d64(b).d64(MODULE + 0x100)
    stack.append_repeated(0, 32).mark(b).d64(a).d64(MODULE + 0x200).append_repeated(0, 64)
    walked = walk(amd64(tmp_path), stack, rip=MODULE + 0x10, rsp=STACK, rbp=a.value)
    assert walked.frames[1].trust is FrameTrust.FRAME_POINTER
    assert len(walked.frames) < 8
    assert walked.termination.reason is not TerminationReason.MAX_FRAMES


def test_frame_pointer_pointing_at_itself_ends_the_walk(tmp_path: Path) -> None:
    stack = Section(start=STACK)
    loop = Label()
    stack.mark(loop).d64(loop).d64(MODULE + 0x100).append_repeated(0, 64)
    walked = walk(amd64(tmp_path), stack, rip=MODULE + 0x10, rsp=STACK, rbp=loop.value)
    assert len(walked.frames) <= 3
    assert walked.termination.reason in (
        TerminationReason.STACK_POINTER_NOT_INCREASING,
        TerminationReason.NO_CALLER,
    )


def test_arm64_frame_record_loop_ends_the_walk(tmp_path: Path) -> None:
    stack = Section(start=STACK)
    loop = Label()
    stack.mark(loop).d64(loop).d64(MODULE + 0x100).append_repeated(0, 64)
    case = UnwindCase(tmp_path, Cpu.ARM64).add_module(MODULE, 0x10000, "hostile", None)
    walked = walk(case, stack, pc=MODULE + 0x10, sp=STACK, fp=loop.value, lr=MODULE + 0x100)
    assert len(walked.frames) <= 4
    assert walked.termination.reason is not TerminationReason.MAX_FRAMES


def test_recursion_five_thousand_deep_is_walked_whole(tmp_path: Path) -> None:
    depth = 5000
    stack = Section(start=STACK)
    records = [Label() for _ in range(depth)]
    for i, record in enumerate(records):
        stack.mark(record).d64(records[i + 1] if i + 1 < depth else 0).d64(MODULE + 0x100 + (i % 7))
    stack.append_repeated(0, 64)
    walked = walk(amd64(tmp_path), stack, rip=MODULE + 0x10, rsp=STACK, rbp=records[0].value)
    assert len(walked.frames) == depth + 1
    # the last record holds no caller rbp: its return address is found by the scan
    assert all(f.trust is FrameTrust.FRAME_POINTER for f in walked.frames[1:-1])
    assert walked.termination.reason is not TerminationReason.MAX_FRAMES


def _plausible_stack_dump(megabytes: int) -> bytes:
    """A stack of nothing but return addresses into the module: every word is a frame to a scan."""
    words = (MODULE + 0x100).to_bytes(8, "little") * (megabytes * 1024 * 1024 // 8)
    return (
        SynthMinidump(cpu=Cpu.AMD64, os=Os.LINUX)
        .add_thread(1, context=SynthContext.amd64(rip=MODULE + 0x10, rsp=STACK, rbp=0), stack=(STACK, words))
        .add_module(MODULE, 0x10000, "/usr/lib/hostile.so", build_id=b"\x05" * 20)
        .add_exception(1, code=11, flags=1, context=SynthContext.amd64(rip=MODULE + 0x10, rsp=STACK, rbp=0))
        .finish()
    )


def test_64_megabytes_of_plausible_words_stop_at_the_frame_limit() -> None:
    """Eight million candidate frames: the walk stops at the default cap and every report says so."""
    dump = Minidump.from_bytes(_plausible_stack_dump(64))
    with time_limit(WALK_SECONDS):
        state = process(dump, ProcessOptions(use_symbols_cache=False, local_modules=False))
    stack = state.threads[0]
    assert len(stack.frames) == RUST_MINIDUMP_MAX_FRAMES
    assert stack.termination is not None and stack.termination.reason is TerminationReason.MAX_FRAMES
    assert stack.termination.message == f"stopped after {RUST_MINIDUMP_MAX_FRAMES} frames (the frame limit)"
    assert stack.frames[-1].trust is FrameTrust.SCAN
    problems = json.loads(render_json(state))["inspector_problems"]
    assert [p["code"] for p in problems] == ["FrameLimit"]
    human = render_human(state, brief=True)
    assert f"(stopped after {RUST_MINIDUMP_MAX_FRAMES} frames (the frame limit); the frames beyond" in human


def test_memory_of_a_capped_walk_is_bounded_by_the_frame_count() -> None:
    """The region is a view into the file; what grows is per frame, and the cap bounds it."""
    dump = Minidump.from_bytes(_plausible_stack_dump(16))
    tracemalloc.start()
    try:
        with time_limit(WALK_SECONDS):
            state = process(
                dump,
                ProcessOptions(
                    use_symbols_cache=False, local_modules=False, walk=WalkOptions(max_frames=2000)
                ),
            )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(state.threads[0].frames) == 2000
    assert peak < 2000 * 8 * 1024  # a few KiB per frame (context, trace), never the 16 MB stack


@pytest.mark.parametrize("name", sorted(HOSTILE_CFI))
def test_hostile_cfi_program_fails_with_a_reason_and_the_walk_goes_on(tmp_path: Path, name: str) -> None:
    rules = HOSTILE_CFI[name]
    symbols = f"FUNC 0 200 0 hostile\nSTACK CFI INIT 0 200 {rules}\n"
    stack = Section(start=STACK).d64(0).d64(MODULE + 0x100).append_repeated(0, 64)
    walked = walk(amd64(tmp_path, symbols), stack, rip=MODULE + 0x10, rsp=STACK, rbp=0)
    step = walked.step(1) if len(walked.frames) > 1 else walked.termination.step
    assert step is not None
    cfi = step.attempts[0]
    assert cfi.strategy is Strategy.CFI
    if name == "sp-never-grows":
        assert (
            cfi.outcome is Outcome.REJECTED
            or walked.termination.reason is TerminationReason.STACK_POINTER_NOT_INCREASING
        )
        return
    assert cfi.outcome is Outcome.FAILED and cfi.reason
    if isinstance(cfi.detail, CfiDetail):  # the failing rule's evaluation is in the trace
        reasons = [e.result.error for e in cfi.detail.evaluations if e.result.error]
        assert reasons or "malformed rules" in cfi.reason


@pytest.mark.parametrize("name", sorted(HOSTILE_WIN))
def test_hostile_stack_win_program_fails_with_a_reason_and_the_walk_goes_on(
    tmp_path: Path, name: str
) -> None:
    program = HOSTILE_WIN[name]
    symbols = f"FUNC 1000 100 0 hostile\nSTACK WIN 4 1000 100 0 0 0 0 0 0 1 {program}\n"
    case = UnwindCase(tmp_path, Cpu.X86, Os.WINDOWS).add_module(X86_MODULE, 0x10000, "hostile32", symbols)
    stack = Section(start=X86_STACK).d32(X86_MODULE + 0x1010).append_repeated(0, 64)
    walked = walk(case, stack, eip=X86_MODULE + 0x1010, esp=X86_STACK, ebp=X86_STACK + 0x40)
    step = walked.step(1) if len(walked.frames) > 1 else walked.termination.step
    assert step is not None
    win = step.attempts[0]
    assert win.strategy is Strategy.STACK_WIN_FRAME_DATA
    assert win.outcome in (Outcome.FAILED, Outcome.REJECTED), win
    assert win.reason
    if (
        isinstance(win.detail, StackWinDetail)
        and win.detail.evaluation is not None
        and name != "sp-never-grows"
    ):
        evaluation = win.detail.evaluation
        assert not evaluation.ok or win.outcome is Outcome.FAILED
        if not evaluation.ok:
            assert evaluation.error is not None and evaluation.error in win.reason
