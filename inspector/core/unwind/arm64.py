"""ARM64 unwinder (both context layouts): STACK CFI → frame pointer → stack scan (rust-minidump's order).

rust-minidump's `arm64.rs` and `arm64_old.rs` are identical apart from the context type;
our `CpuContext` covers both layouts with the same register names, so one module serves
both. Every recovered pc, lr and fp is pointer-auth stripped (`WalkEnvironment.pointer_auth_mask`).

Under the Breakpad policy the frame-pointer step is Breakpad's: pc' = the callee's lr,
lr' = *(fp+8), and pointers are stripped only when the result lands in a module.
"""

from __future__ import annotations

from inspector.core.minidump import CpuContext
from inspector.core.unwind.cfi import CallerRegisters, cfi_attempt
from inspector.core.unwind.frame import FrameTrust, StackFrame
from inspector.core.unwind.scan import scan_stack, scan_words
from inspector.core.unwind.step import (
    CallerSearch,
    CpuUnwinder,
    PostCheck,
    StrategyResult,
    ThreadWalk,
    breakpad_sp_check,
    first_success,
    instruction_check,
    scanned_caller,
)
from inspector.core.unwind.trace import (
    Check,
    FramePointerDetail,
    FramePointerProbe,
    MemoryWord,
    Outcome,
    Strategy,
    StrategyAttempt,
    TerminationReason,
)

# ---- constants ------------------------------------------------------------------------------

POINTER_WIDTH = 8
U64 = (1 << 64) - 1
PROGRAM_COUNTER = "pc"
STACK_POINTER = "sp"
FRAME_POINTER = "fp"  # x29
LINK_REGISTER = "lr"  # x30
CALLEE_SAVED_REGS = ("x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28", "fp")
INSTRUCTION_ADJUSTMENT = 4
#: User-space code addresses: above the first page and below 2^52.
LOWEST_CODE_ADDRESS = 0x1000
HIGHEST_CODE_ADDRESS = 0x000F_FFFF_FFFF_FFFF


def is_non_canonical(pointer: int) -> bool:
    return not LOWEST_CODE_ADDRESS <= pointer <= HIGHEST_CODE_ADDRESS


def _prefilter(value: int) -> str | None:
    return "outside 0x1000..=0xfffffffffffff" if is_non_canonical(value) else None


def caller_by_cfi(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """STACK CFI, then pointer-auth stripping of the caller's pc, lr and fp.

    Situation (rust-minidump PR #1155): dump_syms ≥ 2.3.6 emits function-entry rows
    `.ra: x30`; a caller found by the frame pointer has an lr recovered from the next frame
    record, which is right at a function entry but stale anywhere else. Handling: such a
    heuristic lr is readable by the rules only when the INIT row starts exactly at the
    instruction.
    """
    ctx = callee.context
    env = walk.env
    if not ctx.is_valid(STACK_POINTER):
        return StrategyResult.failed(StrategyAttempt(Strategy.CFI, Outcome.NOT_APPLICABLE, "sp is not known"))
    heuristic_lr = (
        callee.trust is FrameTrust.FRAME_POINTER
        and env.options.arm64_lr_recovery
        and not env.options.breakpad
    )
    strip = env.breakpad_pointer_auth_strip if env.options.breakpad else env.strip_pointer_auth

    def strip_pointers(caller: CallerRegisters) -> None:
        for name in (PROGRAM_COUNTER, LINK_REGISTER, FRAME_POINTER):
            if name == PROGRAM_COUNTER or name in caller.valid:
                caller.values[name] = strip(caller.raw(name))

    attempt, caller = cfi_attempt(
        callee,
        walk,
        forwarded=CALLEE_SAVED_REGS,
        entry_only=frozenset({"lr", "x30"}) if heuristic_lr else frozenset(),
        adjust=strip_pointers,
    )
    if caller is None:
        return StrategyResult.failed(attempt)
    return StrategyResult((attempt,), caller, FrameTrust.CFI)


def caller_by_frame_pointer(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Assume a normal (non-leaf) frame: fp' = *fp, pc = *(fp+8), sp' = fp+16; no stack checks.

    Situation: without CFI, leaf functions cannot be told from normal ones; assuming a
    normal frame costs at worst the leaf's caller, and keeps the rest in sync. A zero fp
    yields (pc 0, sp unchanged) so the post-checks end the walk. rust-minidump ≥ 0.26 also
    recovers the caller's lr from the caller's own frame record (*(fp'+8)) for a later
    function-entry CFI row. A pc outside user space is rejected.
    """
    if walk.env.options.breakpad:
        return _breakpad_frame_pointer(callee, walk)
    strategy = Strategy.FRAME_POINTER
    env = walk.env
    ctx = callee.context
    last_fp, last_sp = ctx.get(FRAME_POINTER), ctx.get(STACK_POINTER)
    if last_fp is None or last_sp is None:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, "fp or sp is not known")
        )
    if last_fp >= U64 - POINTER_WIDTH * 2:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.FAILED, f"fp {last_fp:#x} would overflow")
        )
    reads: list[MemoryWord] = []
    checks: list[Check] = []
    if last_fp == 0:
        caller_fp, caller_pc, caller_sp = 0, 0, last_sp
    else:
        fp_word = walk.memory.word(last_fp, 8, "caller fp")
        pc_word = walk.memory.word(last_fp + 8, 8, "return address")
        reads += [fp_word, pc_word]
        if fp_word.value is None or pc_word.value is None:
            detail = FramePointerDetail(
                FRAME_POINTER, last_fp, (FramePointerProbe(0, tuple(reads), (), False),)
            )
            return StrategyResult.failed(
                StrategyAttempt(strategy, Outcome.FAILED, "cannot read the frame record", detail)
            )
        caller_fp, caller_pc, caller_sp = fp_word.value, pc_word.value, last_fp + 16
    caller_fp = env.strip_pointer_auth(caller_fp)
    caller_pc = env.strip_pointer_auth(caller_pc)
    caller_lr = None
    if env.options.arm64_lr_recovery and caller_fp != 0 and caller_fp + 8 <= U64:
        lr_word = walk.memory.word(caller_fp + 8, 8, "caller lr (from the caller's frame record)")
        reads.append(lr_word)
        if lr_word.value is not None:
            caller_lr = env.strip_pointer_auth(lr_word.value)
    plausible = not is_non_canonical(caller_pc)
    checks.append(Check(f"return address {caller_pc:#x} is in 0x1000..=0xfffffffffffff", plausible))
    probe = FramePointerProbe(0, tuple(reads), tuple(checks), plausible)
    detail = FramePointerDetail(FRAME_POINTER, last_fp, (probe,))
    if not plausible:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.FAILED, "implausible return address", detail)
        )
    registers = {"pc": caller_pc, "fp": caller_fp, "sp": caller_sp}
    if caller_lr is not None:
        registers["lr"] = caller_lr
    caller = CpuContext.from_registers(ctx.cpu, registers, layout=ctx.layout)
    reason = "fp is 0: end of the chain" if last_fp == 0 else f"frame record at fp {last_fp:#x}"
    attempt = StrategyAttempt(strategy, Outcome.FOUND, reason, detail, tuple(caller.valid_registers()))
    return StrategyResult((attempt,), caller, FrameTrust.FRAME_POINTER)


def _breakpad_frame_pointer(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Breakpad's arm64 frame pointer: pc' = callee lr, fp' = *fp, lr' = *(fp+8), sp' = fp+16.

    (Breakpad's extra repair of an unknown callee lr from the callee's frame record,
    CorrectRegLRByFramePointer, is not modelled: without a valid lr this step fails.)
    """
    strategy = Strategy.FRAME_POINTER
    env = walk.env
    ctx = callee.context
    lr = ctx.get(LINK_REGISTER)
    last_fp = ctx.value(FRAME_POINTER)
    if lr is None:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, "the callee's lr is not known")
        )
    reads: list[MemoryWord] = []
    caller_fp = caller_lr = 0
    if last_fp:
        fp_word = walk.memory.word(last_fp, 8, "caller fp")
        lr_word = walk.memory.word((last_fp + 8) & U64, 8, "caller lr")
        reads += [fp_word, lr_word]
        if fp_word.value is None or lr_word.value is None:
            detail = FramePointerDetail(
                FRAME_POINTER, last_fp, (FramePointerProbe(0, tuple(reads), (), False),)
            )
            return StrategyResult.failed(
                StrategyAttempt(strategy, Outcome.FAILED, "cannot read the frame record", detail)
            )
        caller_fp, caller_lr = fp_word.value, lr_word.value
    caller_lr = env.breakpad_pointer_auth_strip(caller_lr)
    caller_sp = (last_fp + 16) & U64 if last_fp else ctx.value(STACK_POINTER)
    caller = ctx.with_registers({"pc": lr, "lr": caller_lr, "fp": caller_fp, "sp": caller_sp})
    detail = FramePointerDetail(FRAME_POINTER, last_fp, (FramePointerProbe(0, tuple(reads), (), True),))
    attempt = StrategyAttempt(
        strategy, Outcome.FOUND, f"pc from the callee's lr {lr:#x}", detail, tuple(caller.valid_registers())
    )
    return StrategyResult((attempt,), caller, FrameTrust.FRAME_POINTER)


def caller_by_scan(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    strategy = Strategy.SCAN
    ctx = callee.context
    last_sp = ctx.get(STACK_POINTER)
    if last_sp is None:
        return StrategyResult.failed(StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, "sp is not known"))
    if not walk.scan_allowed:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, walk.scan_disabled_reason)
        )
    result = scan_stack(
        walk.env,
        walk.memory,
        start=last_sp,
        words=scan_words(walk.env, callee.trust),
        width=8,
        prefilter=_prefilter,
    )
    return scanned_caller(
        result,
        lambda slot, pc: CpuContext.from_registers(ctx.cpu, {"pc": pc, "sp": slot + 8}, layout=ctx.layout),
    )


def find_caller(callee: StackFrame, grand_callee: StackFrame | None, walk: ThreadWalk) -> CallerSearch:
    return first_success(
        [
            lambda: caller_by_cfi(callee, walk),
            lambda: caller_by_frame_pointer(callee, walk),
            lambda: caller_by_scan(callee, walk),
        ]
    )


def post_checks(
    callee: StackFrame, caller: CpuContext, trust: FrameTrust, walk: ThreadWalk
) -> list[PostCheck]:
    """ip ≥ 4096; sp must not decrease; an unchanged sp is allowed only in narrow cases.

    Situation: an arm64 leaf function or a function-entry CFI row (`.cfa: sp`) leaves sp
    unchanged. Handling (rust-minidump ≥ 0.26): equal sp is accepted if pc changed and
    the callee is the context frame or the caller came from CFI, so the allowance cannot
    repeat a frame forever (0.25: only when unwinding the context frame).
    """
    if walk.env.options.breakpad:
        return [instruction_check(caller), breakpad_sp_check(callee, caller)]
    checks = [instruction_check(caller)]
    old, new = callee.context.value("sp"), caller.value("sp")
    if new != old:
        checks.append(
            PostCheck(
                Check(f"caller sp {new:#x} is not below callee sp {old:#x}", new > old),
                TerminationReason.STACK_POINTER_NOT_INCREASING,
            )
        )
        return checks
    context_leaf = callee.trust is FrameTrust.CONTEXT
    if walk.env.options.arm64_lr_recovery:
        pc_changed = caller.value("pc") != callee.context.value("pc")
        allowed = pc_changed and (context_leaf or trust is FrameTrust.CFI)
        text = f"caller sp equals callee sp {old:#x}: allowed only if pc changed and (context frame or CFI)"
    else:
        allowed = context_leaf
        text = f"caller sp equals callee sp {old:#x}: allowed only when unwinding the context frame"
    checks.append(PostCheck(Check(text, allowed), TerminationReason.STACK_POINTER_NOT_INCREASING))
    return checks


UNWINDER = CpuUnwinder(find_caller, post_checks, INSTRUCTION_ADJUSTMENT)
