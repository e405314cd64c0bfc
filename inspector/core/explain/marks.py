"""The stack words a walk used, and each frame's part of the stack: the memory pane's notes and the plot.

Read off the walk's record: return-address slots, saved registers and CFAs of the chosen
strategies, every scanned candidate that points into a module, the frame-pointer words.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.core.enums import Enum
from inspector.core.explain.build import candidate_where
from inspector.core.explain.triage import report_numbers
from inspector.core.minidump import basename
from inspector.core.record import Record
from inspector.core.unwind import (
    CfiDetail,
    FramePointerDetail,
    RuleEffect,
    ScanDetail,
    StackFrame,
    StackWinDetail,
    StrategyAttempt,
    Termination,
)


class MarkKind(Enum):
    RETURN_ADDRESS = "return address"
    SAVED_REGISTER = "saved register"
    CFA = "canonical frame address"
    SCAN_ACCEPTED = "scan: accepted"
    SCAN_REJECTED = "scan: rejected"


class StackMark(Record):
    """A stack word the walk used while unwinding frame `frame` (the callee), and what it was."""

    address: int
    frame: int
    kind: MarkKind
    text: str


def _short(frame: StackFrame) -> str:
    if frame.module is None:
        return f"{frame.instruction:#x}"
    name = basename(frame.module.code_file)
    return f"{name}!{frame.function_name}" if frame.function_name else f"{name}+{frame.module_offset:#x}"


def stack_marks(frames: Sequence[StackFrame], termination: Termination | None = None) -> list[StackMark]:
    """Every stack word the chosen strategies read (and every scanned candidate that points into a module)."""
    marks: list[StackMark] = []
    numbers = report_numbers(frames)  # the texts name frames by the report's numbers
    for index, frame in enumerate(frames):
        step = frame.found_by
        if step is None:
            continue
        callee = index - 1
        attempt = step.chosen_attempt
        if attempt is not None:
            marks.extend(_attempt_marks(attempt, callee, frame, numbers))
        for other in step.attempts:
            if other is not attempt and isinstance(other.detail, ScanDetail):
                marks.extend(_scan_marks(other.detail, callee, numbers[callee], None))
    if termination is not None and termination.step is not None and frames:
        last = len(frames) - 1
        for attempt in termination.step.attempts:
            if isinstance(attempt.detail, ScanDetail):
                marks.extend(_scan_marks(attempt.detail, last, numbers[last], None))
    return marks


def _attempt_marks(
    attempt: StrategyAttempt, callee: int, caller: StackFrame, numbers: Sequence[int]
) -> list[StackMark]:
    detail = attempt.detail
    callee_no, caller_no = numbers[callee], numbers[callee + 1]
    out: list[StackMark] = []
    target = _short(caller)
    if isinstance(detail, CfiDetail):
        for evaluation in detail.evaluations:
            reads = [s.read for s in evaluation.result.steps if s.read is not None]
            if evaluation.effect is RuleEffect.CFA and evaluation.result.value is not None:
                out.append(
                    StackMark(
                        evaluation.result.value,
                        callee,
                        MarkKind.CFA,
                        f"CFA of frame {callee_no} (frame {caller_no}'s stack pointer)",
                    )
                )
            elif evaluation.effect is RuleEffect.RETURN_ADDRESS and reads:
                out.append(
                    StackMark(
                        reads[-1].address,
                        callee,
                        MarkKind.RETURN_ADDRESS,
                        f"return address of frame {callee_no} → {target}",
                    )
                )
            elif evaluation.effect is RuleEffect.SET and reads:
                out.append(
                    StackMark(
                        reads[-1].address,
                        callee,
                        MarkKind.SAVED_REGISTER,
                        f"saved {evaluation.register} (frame {caller_no}'s, CFI)",
                    )
                )
    elif isinstance(detail, FramePointerDetail):
        for probe in detail.probes:
            if not probe.accepted:
                continue
            for word in probe.reads:
                kind = MarkKind.RETURN_ADDRESS if word.role == "return address" else MarkKind.SAVED_REGISTER
                text = (
                    f"return address of frame {callee_no} → {target} (frame pointer)"
                    if kind is MarkKind.RETURN_ADDRESS
                    else f"{word.role} (frame pointer)"
                )
                out.append(StackMark(word.address, callee, kind, text))
    elif isinstance(detail, ScanDetail):
        out.extend(_scan_marks(detail, callee, callee_no, target))
    elif isinstance(detail, StackWinDetail):
        for word in detail.reads:
            out.append(StackMark(word.address, callee, MarkKind.SAVED_REGISTER, f"{word.role} (STACK WIN)"))
    return out


def _scan_marks(detail: ScanDetail, callee: int, callee_no: int, target: str | None) -> list[StackMark]:
    out = []
    for candidate in detail.candidates:
        if candidate.accepted:
            text = f"scan hit: return address of frame {callee_no} → {target or candidate_where(candidate)}"
            out.append(StackMark(candidate.address, callee, MarkKind.SCAN_ACCEPTED, text))
        elif candidate.module is not None:
            text = f"scan rejected ({candidate.reason}): {candidate_where(candidate)}"
            out.append(StackMark(candidate.address, callee, MarkKind.SCAN_REJECTED, text))
    return out


def frame_extents(frames: Sequence[StackFrame], stack_end: int | None) -> list[tuple[int, int, int]]:
    """(frame index, start, end) of each frame's part of the stack: its stack pointer up to its caller's.

    The last frame runs to the end of the stack memory (its caller is unknown). Frames whose
    stack pointer is unknown, or not above the previous one, get no extent.
    """
    sps: list[tuple[int, int]] = []
    for frame in frames:
        sp = frame.context.get(frame.context.register_set.stack_pointer)
        if sp is not None and frame.context.is_valid(frame.context.register_set.stack_pointer):
            sps.append((frame.index, sp))
    out = []
    for i, (index, sp) in enumerate(sps):
        if i + 1 < len(sps):
            end = sps[i + 1][1]
        elif stack_end is not None:
            end = stack_end
        else:
            continue
        if end > sp:
            out.append((index, sp, end))
    return out
