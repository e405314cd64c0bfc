"""The shape every per-CPU unwinder shares: a thread's walk state, strategy results, post-checks.

A CPU module exports `UNWINDER = CpuUnwinder(cpu, strategies, post_checks)`: its
`CpuDescription`, and per policy (`WalkPolicy`) the strategies it tries in their fixed order
(the first that produces a caller wins) and the termination guards a caller must pass
(`PostCheck`: a check, recorded as a `CheckRow`, and the `TerminationReason` when it fails),
checked in order (the first failure ends the walk). Every strategy has the same signature,
`strategy(callee, walk) -> StrategyResult | None` (None: it does not apply to this frame at
all and leaves no trace); the frame below the callee is `walk.grand_callee`. The caller's
`instruction` is its return address minus the CPU's `instruction_adjustment`.
"""

from __future__ import annotations

from inspector.core.minidump import CpuContext
from inspector.core.record import Record, field
from inspector.core.unwind.cpu import CpuDescription
from inspector.core.unwind.environment import StackMemory, WalkEnvironment
from inspector.core.unwind.frame import FrameTrust, StackFrame
from inspector.core.unwind.options import WalkPolicy
from inspector.core.unwind.scan import ScanResult, scan_stack, scan_words
from inspector.core.unwind.trace import CheckRow, Outcome, Strategy, StrategyAttempt, TerminationReason

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping


class ThreadWalk(Record, frozen=False):
    """Mutable state of one thread's walk (never leaves the walking thread)."""

    env: WalkEnvironment
    memory: StackMemory
    cpu: CpuDescription
    frames: list[StackFrame] = field(default_factory=list)
    scanned_frames: int = 0
    #: x86 Breakpad policy: the parameter size of the innermost frame that has one (None: none
    #: yet) and how many frames, from frame 0, have been looked at for it. A frame's size
    #: never changes and frames are only appended, so each frame is looked at once.
    param_size: int | None = None
    param_checked: int = 0

    @property
    def grand_callee(self) -> StackFrame | None:
        """The frame below the callee (None while unwinding the context frame)."""
        return self.frames[-2] if len(self.frames) > 1 else None

    @property
    def scan_allowed(self) -> bool:
        """Breakpad stops scanning after 2^14 scanned frames; rust-minidump never does."""
        limit = self.env.scanned_frame_limit
        return limit is None or self.scanned_frames < limit

    @property
    def scan_disabled_reason(self) -> str:
        return f"scanning is disabled after {self.env.scanned_frame_limit} scanned frames"


class StrategyResult(Record):
    """What one strategy did: its attempt record(s) and, on success, the caller's context and trust."""

    attempts: tuple[StrategyAttempt, ...]
    context: CpuContext | None = None
    trust: FrameTrust | None = None

    @classmethod
    def failed(cls, attempt: StrategyAttempt) -> StrategyResult:
        return cls((attempt,))


def register_not_known(strategy: Strategy, name: str) -> StrategyResult:
    """The "not applicable" result of a strategy that needs the register `name` the callee does not know."""
    return StrategyResult.failed(StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, ("{} is not known", name)))


def scan_opening(callee: StackFrame, walk: ThreadWalk) -> StrategyResult | None:
    """Why a stack scan cannot start from this callee (its stack pointer is unknown, or scanning
    is disabled after too many scanned frames); None when it can."""
    if not callee.context.is_valid(walk.cpu.stack_pointer):
        return register_not_known(Strategy.SCAN, walk.cpu.stack_pointer)
    if not walk.scan_allowed:
        return StrategyResult.failed(
            StrategyAttempt(Strategy.SCAN, Outcome.NOT_APPLICABLE, walk.scan_disabled_reason)
        )
    return None


def scan_from_stack_pointer(callee: StackFrame, walk: ThreadWalk) -> ScanResult:
    """The usual scan: the policy's window from the callee's stack pointer, with the CPU's pre-filter."""
    cpu = walk.cpu
    return scan_stack(
        walk.env,
        walk.memory,
        start=callee.context.value(cpu.stack_pointer),
        words=scan_words(walk.env, callee.trust),
        width=cpu.word_size,
        prefilter=cpu.scan_prefilter,
    )


def scan_failure(result: ScanResult) -> StrategyAttempt:
    """The attempt of a scan that found no return address."""
    return StrategyAttempt(Strategy.SCAN, Outcome.FAILED, "no plausible return address found", result.detail)


def scanned_caller(result: ScanResult, make_caller: Callable[[int, int], CpuContext]) -> StrategyResult:
    """A scan's strategy result: `make_caller(slot address, return address)` builds the caller."""
    if result.address is None or result.value is None:
        return StrategyResult.failed(scan_failure(result))
    caller = make_caller(result.address, result.value)
    why = ("return address {:#x} found at {:#x}", result.value, result.address)
    return StrategyResult(
        (StrategyAttempt(Strategy.SCAN, Outcome.FOUND, why, result.detail, caller),), caller, FrameTrust.SCAN
    )


if TYPE_CHECKING:  # the aliases are for type checkers (annotations are not evaluated)
    #: A way of finding the caller: None when it does not apply to this callee (and leaves no trace).
    StrategyFunction = Callable[[StackFrame, "ThreadWalk"], "StrategyResult | None"]

#: What `first_success` found: every attempt made, in order; the index of the one that found the
#: caller, the caller's context and its trust (all three None when no strategy found one).
CallerSearch = tuple[tuple[StrategyAttempt, ...], int | None, CpuContext | None, FrameTrust | None]


def first_success(
    strategies: tuple[StrategyFunction, ...], callee: StackFrame, walk: ThreadWalk
) -> CallerSearch:
    """Run the strategies in order until one finds a caller; later ones are not tried."""
    attempts: tuple[StrategyAttempt, ...] = ()
    for strategy in strategies:
        result = strategy(callee, walk)
        if result is None:
            continue
        attempts += result.attempts
        if result.context is not None:
            return attempts, len(attempts) - 1, result.context, result.trust
    return attempts, None, None, None


def instruction_check(
    callee: StackFrame, caller: CpuContext, trust: FrameTrust, walk: ThreadWalk
) -> CheckRow:
    """Every CPU: an instruction pointer in the first page means the stack has ended.

    Situation: the outermost frame's "return address" is a terminator or garbage. Example:
    `_start` has no caller, its CFI yields `.ra` = 0. Handling: a caller ip below 4096 ends
    the walk (no real code lives in the first page).
    """
    ip = caller.value(walk.cpu.instruction_pointer)
    return (("caller instruction pointer {:#x} is at least 0x1000", ip), ip >= 4096)


def strictly_increasing_sp(
    callee: StackFrame, caller: CpuContext, trust: FrameTrust, walk: ThreadWalk
) -> CheckRow:
    """x86/amd64 (rust-minidump): the caller's stack pointer must be above the callee's.

    Situation: a bad CFI rule, a frame-pointer cycle or a scan in the wrong place would
    produce the same frame again and again. Example: `.cfa: $rsp` (no change). Handling:
    the stack grows down, so a caller must have a strictly higher sp; otherwise the walk
    ends. This guarantees progress: every walk is bounded by the stack's size.
    """
    name = walk.cpu.stack_pointer
    old, new = callee.context.value(name), caller.value(name)
    return (("caller {} {:#x} is above callee {} {:#x}", name, new, name, old), new > old)


def breakpad_sp_check(
    callee: StackFrame, caller: CpuContext, trust: FrameTrust, walk: ThreadWalk
) -> CheckRow:
    """Breakpad's TerminateWalk: the first unwind (from the context frame) may keep sp equal."""
    name = walk.cpu.stack_pointer
    old, new = callee.context.value(name), caller.value(name)
    if callee.trust is FrameTrust.CONTEXT:
        return (
            ("caller {} {:#x} is not below callee {} {:#x} (first unwind)", name, new, name, old),
            new >= old,
        )
    return (("caller {} {:#x} is above callee {} {:#x}", name, new, name, old), new > old)


def leaf_tolerant_sp(callee: StackFrame, caller: CpuContext, trust: FrameTrust, walk: ThreadWalk) -> CheckRow:
    """arm/mips (rust-minidump): sp must increase, except it may stay equal when unwinding the context frame.

    Situation: a leaf function keeps its return address in a register and need not touch
    the stack. Example: crash in a leaf on ARM, lr holds the return address, CFI says
    `.cfa: sp`. Handling: allow `caller sp == callee sp` for the first unwind only, so the
    walk cannot repeat a frame forever.
    """
    old, new = callee.context.value("sp"), caller.value("sp")
    leaf = callee.trust is FrameTrust.CONTEXT and new == old
    if leaf:
        return ((_ABOVE_OR_LEAF, new, old), True)
    return (("caller sp {:#x} is above callee sp {:#x}", new, old), new > old)


_ABOVE_OR_LEAF = "caller sp {:#x} is above callee sp {:#x} (equal allowed: the callee is the context frame)"


if TYPE_CHECKING:
    #: A check on a caller: (callee, caller, its trust, the walk) -> the check as the trace records it.
    PostCheckFunction = Callable[[StackFrame, CpuContext, FrameTrust, ThreadWalk], CheckRow]


class PostCheck(Record):
    """A termination guard: the check it makes on every caller, and why the walk ends when it fails."""

    check: PostCheckFunction
    reason: TerminationReason


#: The guards every CPU lists (the arm64 module adds its own stack-pointer rule).
NULL_INSTRUCTION = PostCheck(instruction_check, TerminationReason.NULL_INSTRUCTION)
INCREASING_SP = PostCheck(strictly_increasing_sp, TerminationReason.STACK_POINTER_NOT_INCREASING)
BREAKPAD_SP = PostCheck(breakpad_sp_check, TerminationReason.STACK_POINTER_NOT_INCREASING)
LEAF_TOLERANT_SP = PostCheck(leaf_tolerant_sp, TerminationReason.STACK_POINTER_NOT_INCREASING)


class CpuUnwinder(Record):
    """What the walk loop needs from a per-CPU module: its description and, per policy, the
    strategies to try (`first_success`) and the checks a caller must pass (`run_post_checks`)."""

    cpu: CpuDescription
    strategies: Mapping[WalkPolicy, tuple[StrategyFunction, ...]]
    post_checks: Mapping[WalkPolicy, tuple[PostCheck, ...]]

    @property
    def instruction_adjustment(self) -> int:
        return self.cpu.instruction_adjustment


def run_post_checks(
    post_checks: tuple[PostCheck, ...],
    callee: StackFrame,
    caller: CpuContext,
    trust: FrameTrust,
    walk: ThreadWalk,
) -> tuple[tuple[CheckRow, ...], TerminationReason | None]:
    """The checks made on the caller, in order, up to and including the first that fails, and the
    reason that one ends the walk (None: all passed)."""
    checks: tuple[CheckRow, ...] = ()
    for guard in post_checks:
        check = guard.check(callee, caller, trust, walk)
        checks += (check,)
        if not check[1]:
            return checks, guard.reason
    return checks, None
