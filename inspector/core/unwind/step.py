"""The shape every per-CPU unwinder shares: a thread's walk state, strategy results, post-checks.

A CPU module exports `UNWINDER = CpuUnwinder(find_caller, post_checks, INSTRUCTION_ADJUSTMENT)`:
`find_caller(callee, grand_callee, walk) -> CallerSearch` runs its strategies in their fixed
order (the first that produces a caller wins); `post_checks(callee, caller, trust, walk)`
returns the termination guards, checked in order (the first failure ends the walk); the
caller's `instruction` is its return address minus `INSTRUCTION_ADJUSTMENT` (1 on
x86/amd64, 2 on arm, 4 on arm64, 8 on mips) so that it points into the call instruction.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from inspector.core.minidump import CpuContext
from inspector.core.unwind.environment import StackMemory, WalkEnvironment
from inspector.core.unwind.frame import FrameTrust, StackFrame
from inspector.core.unwind.scan import ScanResult
from inspector.core.unwind.trace import Check, Outcome, Strategy, StrategyAttempt, TerminationReason


@dataclass(slots=True)
class ThreadWalk:
    """Mutable state of one thread's walk (never leaves the walking thread)."""

    env: WalkEnvironment
    memory: StackMemory
    frames: list[StackFrame] = field(default_factory=list)
    scanned_frames: int = 0
    #: x86 Breakpad policy: the parameter size of the innermost frame that has one (None: none
    #: yet) and how many frames, from frame 0, have been looked at for it. A frame's size
    #: never changes and frames are only appended, so each frame is looked at once.
    param_size: int | None = None
    param_checked: int = 0

    @property
    def scan_allowed(self) -> bool:
        """Breakpad stops scanning after 2^14 scanned frames; rust-minidump never does."""
        limit = self.env.options.scanned_frame_limit
        return limit is None or self.scanned_frames < limit

    @property
    def scan_disabled_reason(self) -> str:
        return f"scanning is disabled after {self.env.options.scanned_frame_limit} scanned frames"


@dataclass(frozen=True, slots=True)
class StrategyResult:
    """What one strategy did: its attempt record(s) and, on success, the caller's context and trust."""

    attempts: tuple[StrategyAttempt, ...]
    context: CpuContext | None = None
    trust: FrameTrust | None = None

    @classmethod
    def failed(cls, attempt: StrategyAttempt) -> StrategyResult:
        return cls((attempt,))


def unknown_register(strategy: Strategy, context: CpuContext, name: str) -> StrategyResult | None:
    """The "not applicable" result of a strategy that needs `name` when the callee does not know it."""
    if context.is_valid(name):
        return None
    return StrategyResult.failed(StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, f"{name} is not known"))


def scan_failure(result: ScanResult) -> StrategyAttempt:
    """The attempt of a scan that found no return address."""
    return StrategyAttempt(Strategy.SCAN, Outcome.FAILED, "no plausible return address found", result.detail)


def scanned_caller(result: ScanResult, make_caller: Callable[[int, int], CpuContext]) -> StrategyResult:
    """A scan's strategy result: `make_caller(slot address, return address)` builds the caller."""
    if result.address is None or result.value is None:
        return StrategyResult.failed(scan_failure(result))
    caller = make_caller(result.address, result.value)
    reason = f"return address {result.value:#x} found at {result.address:#x}"
    attempt = StrategyAttempt(
        Strategy.SCAN, Outcome.FOUND, reason, result.detail, tuple(caller.valid_registers())
    )
    return StrategyResult((attempt,), caller, FrameTrust.SCAN)


@dataclass(frozen=True, slots=True)
class CallerSearch:
    attempts: tuple[StrategyAttempt, ...]
    chosen: int | None
    context: CpuContext | None
    trust: FrameTrust | None


def first_success(strategies: Sequence[Callable[[], StrategyResult]]) -> CallerSearch:
    """Run the strategies in order until one finds a caller; later ones are not tried."""
    attempts: list[StrategyAttempt] = []
    for strategy in strategies:
        result = strategy()
        attempts.extend(result.attempts)
        if result.context is not None:
            return CallerSearch(tuple(attempts), len(attempts) - 1, result.context, result.trust)
    return CallerSearch(tuple(attempts), None, None, None)


@dataclass(frozen=True, slots=True)
class PostCheck:
    check: Check
    reason: TerminationReason


def instruction_check(caller: CpuContext) -> PostCheck:
    """Every CPU: an instruction pointer in the first page means the stack has ended.

    Situation: the outermost frame's "return address" is a terminator or garbage. Example:
    `_start` has no caller, its CFI yields `.ra` = 0. Handling: a caller ip below 4096 ends
    the walk (no real code lives in the first page).
    """
    ip = caller.value(caller.register_set.instruction_pointer)
    return PostCheck(
        Check(f"caller instruction pointer {ip:#x} is at least 0x1000", ip >= 4096),
        TerminationReason.NULL_INSTRUCTION,
    )


def strictly_increasing_sp(callee: CpuContext, caller: CpuContext) -> PostCheck:
    """x86/amd64 (rust-minidump): the caller's stack pointer must be above the callee's.

    Situation: a bad CFI rule, a frame-pointer cycle or a scan in the wrong place would
    produce the same frame again and again. Example: `.cfa: $rsp` (no change). Handling:
    the stack grows down, so a caller must have a strictly higher sp; otherwise the walk
    ends. This guarantees progress: every walk is bounded by the stack's size.
    """
    name = callee.register_set.stack_pointer
    old, new = callee.value(name), caller.value(name)
    return PostCheck(
        Check(f"caller {name} {new:#x} is above callee {name} {old:#x}", new > old),
        TerminationReason.STACK_POINTER_NOT_INCREASING,
    )


def breakpad_sp_check(callee_frame: StackFrame, caller: CpuContext) -> PostCheck:
    """Breakpad's TerminateWalk: the first unwind (from the context frame) may keep sp equal."""
    callee = callee_frame.context
    name = callee.register_set.stack_pointer
    old, new = callee.value(name), caller.value(name)
    if callee_frame.trust is FrameTrust.CONTEXT:
        check = Check(
            f"caller {name} {new:#x} is not below callee {name} {old:#x} (first unwind)", new >= old
        )
    else:
        check = Check(f"caller {name} {new:#x} is above callee {name} {old:#x}", new > old)
    return PostCheck(check, TerminationReason.STACK_POINTER_NOT_INCREASING)


def leaf_tolerant_sp(callee_frame: StackFrame, caller: CpuContext) -> PostCheck:
    """arm/mips (rust-minidump): sp must increase, except it may stay equal when unwinding the context frame.

    Situation: a leaf function keeps its return address in a register and need not touch
    the stack. Example: crash in a leaf on ARM, lr holds the return address, CFI says
    `.cfa: sp`. Handling: allow `caller sp == callee sp` for the first unwind only, so the
    walk cannot repeat a frame forever.
    """
    callee = callee_frame.context
    old, new = callee.value("sp"), caller.value("sp")
    leaf = callee_frame.trust is FrameTrust.CONTEXT and new == old
    return PostCheck(
        Check(
            f"caller sp {new:#x} is above callee sp {old:#x}"
            + (" (equal allowed: the callee is the context frame)" if leaf else ""),
            new > old or leaf,
        ),
        TerminationReason.STACK_POINTER_NOT_INCREASING,
    )


FindCaller = Callable[[StackFrame, "StackFrame | None", ThreadWalk], CallerSearch]
PostChecks = Callable[[StackFrame, CpuContext, FrameTrust, ThreadWalk], list[PostCheck]]


@dataclass(frozen=True, slots=True)
class CpuUnwinder:
    """What the walk loop needs from a per-CPU module."""

    find_caller: FindCaller
    post_checks: PostChecks
    instruction_adjustment: int
