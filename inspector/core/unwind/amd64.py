"""AMD64 (x86-64) unwinder: STACK CFI → frame pointer → stack scan (rust-minidump's order).

Under the Breakpad policy: STACK CFI (whose result must have non-zero rip and rsp) →
on Windows, for the context frame only, a simulated return from a leaf function →
(not on Windows) the frame pointer → stack scan.
"""

from __future__ import annotations

from collections.abc import Callable

from inspector.core.minidump import CpuContext
from inspector.core.types import Cpu, Os
from inspector.core.unwind.cfi import cfi_strategy
from inspector.core.unwind.cpu import CpuDescription
from inspector.core.unwind.environment import U64
from inspector.core.unwind.frame import FrameTrust, StackFrame
from inspector.core.unwind.options import WalkPolicy
from inspector.core.unwind.scan import scan_stack, with_frame_pointer
from inspector.core.unwind.step import (
    BREAKPAD_SP,
    INCREASING_SP,
    NULL_INSTRUCTION,
    CpuUnwinder,
    StrategyResult,
    ThreadWalk,
    scan_failure,
    scan_from_stack_pointer,
    scan_opening,
)
from inspector.core.unwind.trace import (
    CheckRow,
    FramePointerDetail,
    FramePointerProbe,
    Outcome,
    Strategy,
    StrategyAttempt,
    Text,
    WordRow,
)

# ---- the CPU --------------------------------------------------------------------------------

#: Windows x64 frame-pointer probe: the frame register may point up to 240 bytes into the
#: frame, in 16-byte steps (rust-minidump 0.26).
WINDOWS_FRAME_POINTER_OFFSETS = tuple(range(0, 241, 16))
#: 128 KiB: rust-minidump's and Breakpad's "reasonable gap" between a scanned frame's
#: return-address slot and the saved frame pointer it recovers.
MAX_REASONABLE_GAP_BETWEEN_FRAMES = 128 * 1024


def is_non_canonical(pointer: int) -> bool:
    """Outside the two 48-bit canonical halves: cannot be a code address."""
    return 0x7FFF_FFFF_FFFF < pointer < 0xFFFF_8000_0000_0000


def _prefilter(value: int) -> str | None:
    if value == 0:
        return "null"
    if is_non_canonical(value):
        return "not a canonical address"
    return None


AMD64 = CpuDescription(
    Cpu.AMD64,
    word_size=8,
    instruction_pointer="rip",
    stack_pointer="rsp",
    frame_pointer="rbp",
    # Carried over to the caller by CFI unless a rule says otherwise (rdi/rsi, callee-saved on
    # Windows only, are not: rust-minidump's FIXME).
    callee_saved=("rbx", "rbp", "r12", "r13", "r14", "r15"),
    instruction_adjustment=1,
    scan_prefilter=_prefilter,
)
POINTER_WIDTH = AMD64.word_size


# ---- strategies -----------------------------------------------------------------------------

# Enum members the strategies record for every frame, read once: in Python 3.11 reading a member
# off its class goes through EnumType's `__getattr__` hook, several times the cost of a global.
_WINDOWS, _FOUND = Os.WINDOWS, Outcome.FOUND
_FRAME_POINTER, _BY_FRAME_POINTER = Strategy.FRAME_POINTER, FrameTrust.FRAME_POINTER
_SCAN, _BY_SCAN = Strategy.SCAN, FrameTrust.SCAN

#: STACK CFI; rust-minidump does no validation of the result at all (Breakpad parity).
caller_by_cfi = cfi_strategy


def _breakpad_cfi(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """STACK CFI; Breakpad rejects a caller whose rip or rsp is zero (rust-minidump validates nothing)."""
    result = cfi_strategy(callee, walk)
    context = result.context
    if context is not None and not (context.value("rip") and context.value("rsp")):
        return StrategyResult.failed(
            result.attempts[0].with_outcome(Outcome.FAILED, "Breakpad rejects a zero rip or rsp")
        )
    return result


def caller_by_leaf_return(callee: StackFrame, walk: ThreadWalk) -> StrategyResult | None:
    """Breakpad only: simulate a return from a leaf function (Windows, context frame; else not tried).

    Situation: LLVM emits no unwind info for a Windows x64 leaf function that touches no
    callee-saved registers, and MSDN says such a function is unwound by a plain return.
    Example: a crash in a tiny helper whose only stack use is the return address at rsp.
    Handling: scan Breakpad's one-word window (its loop looks at rsp and rsp+8) for a
    return address; the caller keeps every callee register, rip = the word, rsp = the
    slot + 8; trust `leaf`.
    """
    if callee.trust is not FrameTrust.CONTEXT or walk.env.os is not Os.WINDOWS:
        return None
    ctx = callee.context
    rsp = ctx.value("rsp")
    result = scan_stack(walk.env, walk.memory, start=rsp, words=2, width=POINTER_WIDTH, purpose="leaf return")
    if result.address is None or result.value is None:
        return StrategyResult.failed(
            StrategyAttempt(
                Strategy.LEAF, Outcome.FAILED, "no return address at the top of the stack", result.detail
            )
        )
    caller = ctx.with_registers({"rip": result.value, "rsp": result.address + 8}, keep_valid=True)
    reason = f"leaf function: return address {result.value:#x} at {result.address:#x}"
    attempt = StrategyAttempt(Strategy.LEAF, Outcome.FOUND, reason, result.detail, caller)
    return StrategyResult((attempt,), caller, FrameTrust.LEAF)


def caller_by_frame_pointer(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """The standard rbp chain: return address at rbp+8, caller rbp at rbp, caller rsp = rbp+16.

    Situation: no CFI, but the function kept a frame pointer. Example: the prologue
    `push rbp; mov rbp, rsp` leaves [rbp] = the caller's rbp and [rbp+8] = the return
    address. Handling (rust-minidump): check the chain is well ordered (`caller rsp > rbp`,
    `caller rbp >= caller rsp`), that the caller's rbp points into the stack, that rip is
    canonical and that rsp grows and is in the stack. On Windows, where MSVC sets the frame
    register into the middle of the frame (`lea rbp, [rsp+0x20]`, UNWIND_INFO's frame
    offset, at most 240), rust-minidump 0.26 tries the offsets 0, 16, …, 240 (option
    `windows_frame_pointer_probe`; 0.25 does not use rbp on Windows at all); an unreadable
    word ends the probing.
    """
    env = walk.env
    ctx = callee.context
    if not ctx.is_valid("rbp") or not ctx.is_valid("rsp"):
        return _FRAME_POINTER_UNKNOWN
    windows = env.os is _WINDOWS
    if windows and not env.options.windows_frame_pointer_probe:
        return _FRAME_POINTER_NOT_ON_WINDOWS
    strategy = _FRAME_POINTER
    last_bp, last_sp = ctx.value("rbp"), ctx.value("rsp")
    if last_bp >= U64 - POINTER_WIDTH * 2:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.FAILED, ("rbp {:#x} would overflow", last_bp))
        )
    memory = walk.memory
    probes: list[FramePointerProbe] = []
    found: tuple[int, int, int] | None = None
    stop_reason: Text = "no frame-pointer position passed the checks"
    for offset in WINDOWS_FRAME_POINTER_OFFSETS if windows else (0,):
        ip_word = memory.word(last_bp + offset + POINTER_WIDTH, POINTER_WIDTH, "return address", "rip")
        caller_ip = ip_word[2]
        if caller_ip is None:
            probes.append(FramePointerProbe(offset, (ip_word,), (), False))
            stop_reason = ("cannot read the frame record at {:#x}", last_bp + offset)
            break
        bp_word = memory.word(last_bp + offset, POINTER_WIDTH, "caller rbp", "rbp")
        reads = (ip_word, bp_word)
        caller_bp = bp_word[2]
        if caller_bp is None:
            probes.append(FramePointerProbe(offset, reads, (), False))
            stop_reason = ("cannot read the frame record at {:#x}", last_bp + offset)
            break
        caller_sp = last_bp + offset + POINTER_WIDTH * 2
        ordered = caller_sp > last_bp and caller_bp >= caller_sp
        checks: tuple[CheckRow, ...] = (
            (("caller rbp {:#x} >= caller rsp {:#x} > rbp", caller_bp, caller_sp), ordered),
        )
        if not ordered:
            probes.append(FramePointerProbe(offset, reads, checks, False))
            continue
        in_stack = memory.read(caller_bp, POINTER_WIDTH) is not None
        checks += ((("caller rbp {:#x} points into the stack", caller_bp), in_stack),)
        if not in_stack:
            probes.append(FramePointerProbe(offset, reads, checks, False))
            stop_reason = ("caller rbp {:#x} is outside the stack", caller_bp)
            break
        canonical = not is_non_canonical(caller_ip)
        checks += ((("return address {:#x} is canonical", caller_ip), canonical),)
        if not canonical:
            probes.append(FramePointerProbe(offset, reads, checks, False))
            continue
        grows = caller_sp > last_sp and memory.read(caller_sp, POINTER_WIDTH) is not None
        checks += ((("caller rsp {:#x} is above rsp {:#x} and in the stack", caller_sp, last_sp), grows),)
        probes.append(FramePointerProbe(offset, reads, checks, grows))
        if grows:
            found = (caller_ip, caller_bp, caller_sp)
            break
    detail = FramePointerDetail("rbp", last_bp, tuple(probes))
    if found is None:
        return StrategyResult.failed(StrategyAttempt(strategy, Outcome.FAILED, stop_reason, detail))
    caller_ip, caller_bp, caller_sp = found
    caller = CpuContext.from_registers(
        ctx.cpu, {"rip": caller_ip, "rsp": caller_sp, "rbp": caller_bp}, layout=ctx.layout
    )
    offset = probes[-1].offset
    why = (
        ("frame record at rbp {:#x} (frame offset {}): return address {:#x}", last_bp, offset, caller_ip)
        if offset
        else ("frame record at rbp {:#x}: return address {:#x}", last_bp, caller_ip)
    )
    attempt = StrategyAttempt(strategy, Outcome.FOUND, why, detail, caller)
    return StrategyResult((attempt,), caller, FrameTrust.FRAME_POINTER)


_FRAME_POINTER_UNKNOWN = StrategyResult.failed(
    StrategyAttempt(Strategy.FRAME_POINTER, Outcome.NOT_APPLICABLE, "rbp or rsp is not known")
)
_FRAME_POINTER_NOT_ON_WINDOWS = StrategyResult.failed(
    StrategyAttempt(
        Strategy.FRAME_POINTER, Outcome.NOT_APPLICABLE, "not used on Windows (rust-minidump 0.25)"
    )
)


def _breakpad_frame_pointer(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Breakpad's GetCallerByFramePointerRecovery: never on Windows; rbp must be 8-aligned."""
    strategy = Strategy.FRAME_POINTER
    ctx = callee.context
    if walk.env.os is Os.WINDOWS:
        return StrategyResult.failed(
            StrategyAttempt(
                strategy, Outcome.NOT_APPLICABLE, "Breakpad never chases frame pointers on Windows x64"
            )
        )
    last_bp = ctx.value("rbp")
    checks: list[CheckRow] = [(("rbp {:#x} is 8-aligned", last_bp), last_bp % 8 == 0)]
    reads: tuple[WordRow, ...] = ()

    def failed(reason: str) -> StrategyResult:
        probe = FramePointerProbe(0, reads, tuple(checks), False)
        detail = FramePointerDetail("rbp", last_bp, (probe,))
        return StrategyResult.failed(StrategyAttempt(strategy, Outcome.FAILED, reason, detail))

    if last_bp % 8:
        return failed("rbp is not 8-aligned")
    memory = walk.memory
    ip_word = memory.word((last_bp + 8) & U64, 8, "return address", "rip")
    bp_word = memory.word(last_bp, 8, "caller rbp", "rbp")
    reads = (ip_word, bp_word)
    caller_ip, caller_bp, caller_sp = ip_word[2], bp_word[2], (last_bp + 16) & U64
    if caller_ip is None or caller_bp is None:
        return failed("cannot read the frame record")
    canonical = not is_non_canonical(caller_ip)
    checks.append((("return address {:#x} is canonical", caller_ip), canonical))
    if not canonical:
        return failed("the return address is not canonical")
    ordered = caller_sp > last_bp and caller_bp >= caller_sp
    checks.append((("caller rbp {:#x} >= caller rsp {:#x} > rbp", caller_bp, caller_sp), ordered))
    if not ordered:
        return failed("the frame pointers are not well ordered")
    in_stack = memory.read(caller_bp, 8) is not None
    checks.append((("caller rbp {:#x} points into the stack", caller_bp), in_stack))
    if not in_stack:
        return failed("the caller's rbp is outside the stack")
    caller = ctx.with_registers({"rip": caller_ip, "rsp": caller_sp, "rbp": caller_bp})
    probe = FramePointerProbe(0, reads, tuple(checks), True)
    detail = FramePointerDetail("rbp", last_bp, (probe,))
    attempt = StrategyAttempt(
        strategy,
        Outcome.FOUND,
        ("frame record at rbp {:#x}: return address {:#x}", last_bp, caller_ip),
        detail,
        caller,
    )
    return StrategyResult((attempt,), caller, FrameTrust.FRAME_POINTER)


def caller_by_scan(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Stack scan (see `scan`), then try to recover rbp.

    Situation: a scanned caller has no known rbp. Handling (rust-minidump): if the callee's
    rbp points at the word just below the return address and that word holds a higher
    stack address within 128 KiB that is readable, the function pushed its caller's rbp
    there: use it; else, if the callee's rbp is at or above the caller's rsp, the function
    left rbp alone: keep it.
    """
    return _scan(callee, walk, _recover_rbp, from_callee=False)


def _breakpad_scan(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Breakpad's scan: rbp recovery as rust-minidump's, without the gap and readability checks."""
    # Breakpad builds the caller from the callee: the other registers' stale values stay (invalid)
    return _scan(callee, walk, _breakpad_recover_rbp, from_callee=True)


#: (the walk, callee rbp, callee rsp, the return-address slot) -> (the caller's rbp or None, the words
#: read and the checks made for it)
_RbpRecovery = Callable[
    [ThreadWalk, int, int, int], "tuple[int | None, tuple[WordRow, ...], tuple[CheckRow, ...]]"
]


def _scan(
    callee: StackFrame, walk: ThreadWalk, recover: _RbpRecovery, *, from_callee: bool
) -> StrategyResult:
    closed = scan_opening(callee, walk)
    if closed is not None:
        return closed
    ctx = callee.context
    result = scan_from_stack_pointer(callee, walk)
    if result.address is None or result.value is None:
        return StrategyResult.failed(scan_failure(result))
    slot, caller_ip = result.address, result.value
    last_bp, last_sp = ctx.get("rbp"), ctx.value("rsp")
    caller_bp, reads, checks = (None, (), ()) if last_bp is None else recover(walk, last_bp, last_sp, slot)
    registers = {"rip": caller_ip, "rsp": slot + POINTER_WIDTH}
    if caller_bp is not None:
        registers["rbp"] = caller_bp
    caller = (
        ctx.with_registers(registers)
        if from_callee
        else CpuContext.from_registers(ctx.cpu, registers, layout=ctx.layout)
    )
    word = (slot - last_sp) // POINTER_WIDTH
    attempt = StrategyAttempt(
        _SCAN,
        _FOUND,
        ("return address {:#x} found at {:#x}, word {}", caller_ip, slot, word),
        with_frame_pointer(result.detail, reads, checks),
        caller,
    )
    return StrategyResult((attempt,), caller, _BY_SCAN)


def _recover_rbp(
    walk: ThreadWalk, last_bp: int, last_sp: int, slot: int
) -> tuple[int | None, tuple[WordRow, ...], tuple[CheckRow, ...]]:
    if slot <= last_sp:
        return None, (), ()
    caller_sp = slot + POINTER_WIDTH
    address_of_bp = slot - POINTER_WIDTH
    word = walk.memory.word(address_of_bp, POINTER_WIDTH, "word below the return address", "rbp")
    bp = word[2] or 0
    gap = bp - address_of_bp
    pushed = last_bp == address_of_bp and bp > slot and gap <= MAX_REASONABLE_GAP_BETWEEN_FRAMES
    pushed_check: CheckRow = ((_PUSHED_RBP, address_of_bp), pushed)
    if pushed:
        readable = walk.memory.read(bp, POINTER_WIDTH) is not None
        in_stack: CheckRow = (("saved rbp {:#x} points into the stack", bp), readable)
        return (bp if readable else None), (word,), (pushed_check, in_stack)
    kept = last_bp >= caller_sp
    keep: CheckRow = (("callee rbp {:#x} >= caller rsp {:#x}: keep it", last_bp, caller_sp), kept)
    return (last_bp if kept else None), (word,), (pushed_check, keep)


_PUSHED_RBP = "callee rbp points at {:#x}, which holds a higher stack address within 128 KiB"


def _breakpad_recover_rbp(
    walk: ThreadWalk, last_bp: int, last_sp: int, slot: int
) -> tuple[int | None, tuple[WordRow, ...], tuple[CheckRow, ...]]:
    if slot - 8 == last_bp:
        word = walk.memory.word(last_bp, 8, "saved rbp below the return address", "rbp")
        saved = word[2]
        ok = saved is not None and saved > slot
        return (saved if ok else None), (word,), (("the saved rbp is above the return-address slot", ok),)
    caller_sp = slot + POINTER_WIDTH
    ok = last_bp >= caller_sp
    check: CheckRow = (("callee rbp {:#x} >= caller rsp {:#x}: keep it", last_bp, caller_sp), ok)
    return (last_bp if ok else None), (), (check,)


UNWINDER = CpuUnwinder(
    AMD64,
    strategies={
        WalkPolicy.RUST_MINIDUMP: (caller_by_cfi, caller_by_frame_pointer, caller_by_scan),
        WalkPolicy.BREAKPAD: (_breakpad_cfi, caller_by_leaf_return, _breakpad_frame_pointer, _breakpad_scan),
    },
    post_checks={
        WalkPolicy.RUST_MINIDUMP: (NULL_INSTRUCTION, INCREASING_SP),
        WalkPolicy.BREAKPAD: (NULL_INSTRUCTION, BREAKPAD_SP),
    },
)
