"""x86 (32-bit) unwinder: STACK WIN / STACK CFI → frame pointer → stack scan (rust-minidump's order).

rust-minidump evaluates STACK WIN (FRAME_DATA, then FPO) and falls back to STACK CFI in one
"call frame info" step, then the %ebp chain without any sanity check, then a scan.

Under the Breakpad policy: STACK WIN with Breakpad's heuristics (`_breakpad_stack_win`),
then STACK CFI (whose result must have eip, esp and ebp), then "EBP at base" (the frame
pointer, with a stack scan inside when the frame record cannot be read).
"""

from __future__ import annotations

from inspector.core.minidump import CpuContext
from inspector.core.symbols import PostfixResult, StackWinRecord, StackWinType, evaluate_win
from inspector.core.types import Cpu
from inspector.core.unwind.cfi import (
    CallerRegisters,
    cfi_attempt,
    cfi_strategy,
    no_unwind_symbols,
    stack_win_attempt,
)
from inspector.core.unwind.cpu import CpuDescription
from inspector.core.unwind.frame import FrameTrust, StackFrame
from inspector.core.unwind.options import WalkPolicy
from inspector.core.unwind.scan import ScanResult, scan_stack, scan_words, with_frame_pointer
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
    CandidateVerdict,
    CheckRow,
    FramePointerDetail,
    FramePointerProbe,
    Outcome,
    ScanDetail,
    StackWinDetail,
    Strategy,
    StrategyAttempt,
    WordRow,
)

# ---- the CPU --------------------------------------------------------------------------------

U32 = 0xFFFF_FFFF
#: "99.5% of all frames are smaller than 128 KB" (Breakpad's frame-size histogram).
MAX_REASONABLE_GAP_BETWEEN_FRAMES = 128 * 1024
#: Breakpad's programs for STACK WIN records without one (FPO data).
PROGRAM_ALLOCATES_BASE_POINTER = (
    "$eip .raSearchStart ^ = $ebp $esp .cbCalleeParams + .cbSavedRegs + 8 - ^ = $esp .raSearchStart 4 + ="
)
PROGRAM_NO_BASE_POINTER = "$eip .raSearchStart ^ = $esp .raSearchStart 4 + ="


def _prefilter(value: int) -> str | None:
    return "null" if value == 0 else None


X86 = CpuDescription(
    Cpu.X86,
    word_size=4,
    instruction_pointer="eip",
    stack_pointer="esp",
    frame_pointer="ebp",
    callee_saved=("ebp", "ebx", "edi", "esi"),
    instruction_adjustment=1,
    scan_prefilter=_prefilter,
)
POINTER_WIDTH = X86.word_size


# ---- rust-minidump strategies ---------------------------------------------------------------

# Enum members the strategies record for every frame, read once: in Python 3.11 reading a member
# off its class goes through EnumType's `__getattr__` hook, several times the cost of a global.
_FOUND = Outcome.FOUND
_FRAME_POINTER, _BY_FRAME_POINTER = Strategy.FRAME_POINTER, FrameTrust.FRAME_POINTER
_SCAN, _BY_SCAN = Strategy.SCAN, FrameTrust.SCAN


def caller_by_cfi(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """STACK WIN (FRAME_DATA, else FPO), falling back to STACK CFI; trust `cfi` either way.

    The grand callee's parameter size (from its STACK WIN record, else its FUNC) sizes the
    callee's frame: with stdcall-like conventions the callee's arguments are part of it.
    """
    ctx = callee.context
    env = walk.env
    if not ctx.is_valid("esp"):
        return StrategyResult.failed(
            StrategyAttempt(Strategy.CFI, Outcome.NOT_APPLICABLE, "esp is not known")
        )
    module = callee.module
    if module is not None and env.unwind_symbols(module) is None:  # neither STACK WIN nor STACK CFI
        return env.per_module(module, no_unwind_symbols)
    grand_callee = walk.grand_callee
    state = CallerRegisters(ctx, X86.callee_saved, POINTER_WIDTH)
    attempts: list[StrategyAttempt] = []
    grand_size = 0
    # rust-minidump takes the size from the grand callee's function; a symbol file it rejects
    # gives it none (we still name the frame from such a file), so the size is then 0.
    if (
        grand_callee is not None
        and grand_callee.symbol is not None
        and grand_callee.module is not None
        and env.unwind_symbols(grand_callee.module) is not None
    ):
        grand_size = grand_callee.symbol.parameter_size
    win, caller = stack_win_attempt(
        callee,
        walk,
        has_grand_callee=grand_callee is not None,
        grand_callee_parameter_size=grand_size,
        state=state,
    )
    if win is not None:
        attempts.append(win)
        if caller is not None:
            return StrategyResult(tuple(attempts), caller, FrameTrust.CFI)
    attempt, caller = cfi_attempt(callee, walk, forwarded=X86.callee_saved, state=state)
    attempts.append(attempt)
    if caller is None:
        return StrategyResult(tuple(attempts))
    return StrategyResult(tuple(attempts), caller, FrameTrust.CFI)


def caller_by_frame_pointer(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """The %ebp chain: eip = *(ebp+4), ebp' = *ebp, esp' = ebp+8, with no sanity checks.

    rust-minidump deliberately checks nothing more here: extra checks made its scanner
    produce frames Breakpad does not (on its `test.dmp`).
    """
    strategy = _FRAME_POINTER
    ctx = callee.context
    if not ctx.is_valid("ebp"):
        return StrategyResult.failed(StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, "ebp is not known"))
    last_bp = ctx.value("ebp")
    if last_bp >= U32 - POINTER_WIDTH * 2:
        return StrategyResult.failed(
            StrategyAttempt(strategy, Outcome.FAILED, ("ebp {:#x} would overflow", last_bp))
        )
    ip_word = walk.memory.word(last_bp + 4, 4, "return address", "eip")
    caller_ip = ip_word[2]
    bp_word = walk.memory.word(last_bp, 4, "caller ebp", "ebp") if caller_ip is not None else None
    reads = (ip_word,) if bp_word is None else (ip_word, bp_word)
    caller_bp = None if bp_word is None else bp_word[2]
    ok = caller_ip is not None and caller_bp is not None
    detail = FramePointerDetail("ebp", last_bp, (FramePointerProbe(0, reads, (), ok),))
    if caller_ip is None or caller_bp is None:
        return StrategyResult.failed(
            StrategyAttempt(
                strategy, Outcome.FAILED, ("cannot read the frame record at ebp {:#x}", last_bp), detail
            )
        )
    caller = CpuContext.from_registers(
        ctx.cpu, {"eip": caller_ip, "esp": last_bp + 8, "ebp": caller_bp}, layout=ctx.layout
    )
    why = ("frame record at ebp {:#x}: return address {:#x}", last_bp, caller_ip)
    attempt = StrategyAttempt(strategy, _FOUND, why, detail, caller)
    return StrategyResult((attempt,), caller, _BY_FRAME_POINTER)


def caller_by_scan(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Stack scan, then ebp recovery.

    Situation: the scanned caller's ebp is unknown. Handling (rust-minidump): the word just
    below the return address, if it holds a higher stack address within 128 KiB that is
    readable, is the caller's saved ebp (unlike amd64, the callee's ebp need not point
    there); else the callee's ebp is kept if it is at or above the caller's esp and
    readable.
    """
    closed = scan_opening(callee, walk)
    if closed is not None:
        return closed
    strategy = _SCAN
    ctx = callee.context
    last_bp = ctx.get("ebp")
    last_sp = ctx.value("esp")
    result = scan_from_stack_pointer(callee, walk)
    if result.address is None or result.value is None:
        return StrategyResult.failed(scan_failure(result))
    slot, caller_ip = result.address, result.value
    caller_sp = slot + 4
    reads: list[WordRow] = []
    checks: list[CheckRow] = []
    caller_bp: int | None = None
    if slot > last_sp:
        word = walk.memory.word(slot - 4, 4, "word below the return address", "ebp")
        reads.append(word)
        bp = word[2] or 0
        pushed = bp > slot and bp - (slot - 4) <= MAX_REASONABLE_GAP_BETWEEN_FRAMES
        checks.append((("the word below holds a higher stack address within 128 KiB ({:#x})", bp), pushed))
        if pushed:
            readable = walk.memory.read(bp, 4) is not None
            checks.append((("saved ebp {:#x} points into the stack", bp), readable))
            if readable:
                caller_bp = bp
        elif last_bp is not None:
            kept = last_bp >= caller_sp and walk.memory.read(last_bp, 4) is not None
            keep_text = ("callee ebp {:#x} >= caller esp {:#x} and readable: keep it", last_bp, caller_sp)
            checks.append((keep_text, kept))
            if kept:
                caller_bp = last_bp
    registers = {"eip": caller_ip, "esp": caller_sp}
    if caller_bp is not None:
        registers["ebp"] = caller_bp
    caller = CpuContext.from_registers(ctx.cpu, registers, layout=ctx.layout)
    detail = with_frame_pointer(result.detail, reads, checks)
    why = ("return address {:#x} found at {:#x}, word {}", caller_ip, slot, (slot - last_sp) // 4)
    attempt = StrategyAttempt(strategy, _FOUND, why, detail, caller)
    return StrategyResult((attempt,), caller, _BY_SCAN)


# ---- Breakpad strategies --------------------------------------------------------------------


def _breakpad_frame_info(frame: StackFrame, walk: ThreadWalk) -> tuple[StackWinRecord | None, int | None]:
    """Breakpad's FindWindowsFrameInfo: (STACK WIN record, parameter size if known).

    A STACK WIN record (FRAME_DATA before FPO) has everything; without one a FUNC covering
    the address still gives the parameter size.
    """
    if frame.module is None:
        return None, None
    symbol_file = walk.env.unwind_symbols(frame.module)
    if symbol_file is None:
        return None, None
    relative = frame.instruction - frame.module.base
    record = symbol_file.find_stack_win(relative)
    if record is not None:
        return record, record.parameter_size
    function = symbol_file.find_function(relative)
    return None, None if function is None else function.parameter_size


def _callee_parameter_size(walk: ThreadWalk) -> int:
    """Breakpad's `last_frame_callee_parameter_size`.

    Situation: a caller's frame includes its callee's stack arguments (stdcall and friends
    pop them in the callee, cdecl in the caller). Breakpad walks the frames below the
    current one from the nearest downwards and, lacking a `break`, keeps the last match:
    the innermost frame with Windows frame info. We reproduce that, looking at each frame
    once: the innermost match never changes as frames are added further out (re-reading
    every frame at every step made deep walks quadratic).
    """
    if walk.param_size is None:
        for frame in walk.frames[walk.param_checked : len(walk.frames) - 1]:
            walk.param_checked += 1
            _, parameter_size = _breakpad_frame_info(frame, walk)
            if parameter_size is not None:
                walk.param_size = parameter_size
                break
    return 0 if walk.param_size is None else walk.param_size


def _breakpad_scan(walk: ThreadWalk, start: int, words: int, purpose: str) -> ScanResult:
    return scan_stack(walk.env, walk.memory, start=start & U32, words=words, width=4, purpose=purpose)


def _breakpad_stack_win(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Breakpad's GetCallerByWindowsFrameInfo with all its heuristics.

    1. `.raSearchStart = esp + callee params + locals + saved registers`, then a 3-word
       scan from there for a return address (the stack may have been quadword-aligned);
       if the callee is the context frame with FPO data and the first word equals its own
       eip (an FPO-optimised system call left its return address), skip a word and rescan.
    2. The program: the record's, or for FPO data one synthesised from the frame sizes
       (restoring ebp from the saved-register area when the function allocates it, else
       carrying ebp, and ebx, over). With `@` in the program (an aligned frame) and a
       known ebp, `.raSearchStart = ebp + 4`.
    3. If the program fails or does not set both $eip and $esp: scan from esp (trust `scan`).
    4. Unless $eip and $ebp are both 0: if $eip is in no module, scan from
       `.raSearchStart + 4` (trust `cfi_scan`); then, for programs that restore ebp, if
       frames were skipped (ebp below the return address) or ebp is unreadable, scan the
       saved-register area downwards for a word pointing into the stack: the new ebp.
    """
    strategy = Strategy.STACK_WIN_FRAME_DATA
    env = walk.env
    ctx = callee.context
    record, _ = _breakpad_frame_info(callee, walk)
    if record is None:
        return StrategyResult.failed(StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, "no STACK WIN record"))
    if record.type is StackWinType.FPO:
        strategy = Strategy.STACK_WIN_FPO
    assert callee.module is not None  # a STACK WIN record came from its symbols
    module_name = callee.module.filename
    origin = env.unwind_origin(callee.module)
    relative = callee.instruction - callee.module.base
    esp, ebp = ctx.value("esp"), ctx.value("ebp")
    ebx = ctx.get("ebx")
    callee_params = _callee_parameter_size(walk)
    variables: dict[str, int] = {"$ebp": ebp, "$esp": esp}
    if ebx is not None:
        variables["$ebx"] = ebx
    variables |= {
        ".cbCalleeParams": callee_params,
        ".cbSavedRegs": record.saved_register_size,
        ".cbLocals": record.local_size,
    }
    searches: list[ScanDetail] = []
    checks: list[CheckRow] = []
    ra_search_start = (esp + callee_params + record.local_size + record.saved_register_size) & U32
    original = ra_search_start
    aligned = _breakpad_scan(walk, ra_search_start, 4, "aligned return-address slot")
    searches.append(aligned.detail)
    if aligned.address is not None:
        ra_search_start = aligned.address
        leftover = (
            callee.trust is FrameTrust.CONTEXT
            and record.type is StackWinType.FPO
            and ra_search_start == original
            and aligned.value == ctx.value("eip")
        )
        checks.append(("the return-address slot does not hold the context frame's own eip", not leftover))
        if leftover:
            ra_search_start = (ra_search_start + 4) & U32
            again = _breakpad_scan(walk, ra_search_start, 4, "return-address slot after a leftover eip")
            searches.append(again.detail)
            if again.address is not None:
                ra_search_start = again.address
    variables[".cbParams"] = record.parameter_size
    recover_ebp = True
    if record.program_string:
        program, source = record.program_string, "record"
    elif record.allocates_base_pointer:
        program, source = PROGRAM_ALLOCATES_BASE_POINTER, "synthesised: FPO data, allocates ebp"
    else:
        program, source = PROGRAM_NO_BASE_POINTER, "synthesised: FPO data, ebp not used"
        if ebx is not None:
            program += " $ebx $ebx ="
        recover_ebp = False
    if ctx.is_valid("ebp") and "@" in program:
        ra_search_start = (ebp + 4) & U32
    variables[".raSearchStart"] = ra_search_start
    variables[".raSearch"] = ra_search_start
    result = evaluate_win(program, variables=variables, read_word=lambda a: walk.memory.read(a, 4), width=4)
    assigned = _assigned(result)
    values = dict(result.variables) if result.ok else dict(variables)
    trust = FrameTrust.CFI
    failed = not result.ok or result.leftover != 0 or "$eip" not in assigned or "$esp" not in assigned
    checks.append(("the program ran and set $eip and $esp", not failed))

    def detail() -> StackWinDetail:
        return StackWinDetail(
            module_name,
            relative,
            record,
            program,
            source,
            tuple(variables.items()),
            result,
            (),
            tuple(checks),
            tuple(searches),
            origin,
        )

    if failed:
        if not walk.scan_allowed:
            return StrategyResult.failed(
                StrategyAttempt(strategy, Outcome.FAILED, "the program failed", detail())
            )
        rescue = _breakpad_scan(walk, esp, scan_words(env, callee.trust), "return address (program failed)")
        searches.append(rescue.detail)
        if rescue.address is None or rescue.value is None:
            return StrategyResult.failed(
                StrategyAttempt(
                    strategy, Outcome.FAILED, "the program failed and no scan found a caller", detail()
                )
            )
        values["$eip"], values["$esp"] = rescue.value, rescue.address + 4
        trust = FrameTrust.SCAN
    if values.get("$eip", 0) != 0 or values.get("$ebp", 0) != 0:
        offset = 0
        eip = values.get("$eip", 0)
        in_module = env.module_at(eip) is not None
        checks.append((("$eip {:#x} is in a module", eip), in_module))
        if not in_module and walk.scan_allowed:
            start = (variables[".raSearchStart"] + 4) & U32
            better = _breakpad_scan(
                walk, start, scan_words(env, callee.trust), "return address (eip not in a module)"
            )
            searches.append(better.detail)
            if better.address is not None and better.value is not None:
                values["$eip"], values["$esp"] = better.value, better.address + 4
                offset = better.address - start
                trust = FrameTrust.CFI_SCAN
        if recover_ebp:
            new_ebp = values.get("$ebp", 0)
            skipped = trust is not FrameTrust.CFI and new_ebp <= ra_search_start + offset
            readable = walk.memory.read(new_ebp, 4) is not None
            checks.append(
                (("$ebp {:#x} is readable and no frames were skipped", new_ebp), readable and not skipped)
            )
            if skipped or not readable:
                end = (esp + callee_params) & U32
                location = (end + record.saved_register_size + offset) & U32
                candidates = []
                while location >= end:
                    word = walk.memory.read(location, 4)
                    if word is None:
                        break
                    points = walk.memory.read(word, 4) is not None
                    candidates.append((location, word, points))
                    if points:
                        values["$ebp"] = word
                        break
                    if location < 4:
                        break
                    location -= 4
                searches.append(_ebp_search(end, candidates))
    registers = {"eip": values.get("$eip", 0), "esp": values.get("$esp", 0), "ebp": values.get("$ebp", 0)}
    for name in ("$ebx", "$esi", "$edi"):
        if name in assigned and name in values:
            registers[name[1:]] = values[name]
    caller = ctx.with_registers(registers)
    kind = {FrameTrust.CFI: "program", FrameTrust.SCAN: "scan after the program failed"}.get(trust, "rescan")
    where = f"{module_name}+{relative:#x}"
    reason = f"STACK WIN at {where} ({kind}): caller eip = {registers['eip']:#x}"
    outcome_strategy = Strategy.CFI_SCAN if trust is FrameTrust.CFI_SCAN else strategy
    attempt = StrategyAttempt(outcome_strategy, Outcome.FOUND, reason, detail(), caller)
    return StrategyResult((attempt,), caller, trust)


def _assigned(result: PostfixResult) -> set[str]:
    return {step.assignment[0] for step in result.steps if step.assignment is not None}


#: The verdicts of Breakpad's saved-ebp search on a word
_POINTS_INTO_STACK = CandidateVerdict(True, None, None, "points into the stack")
_NOT_INTO_STACK = CandidateVerdict(False, None, None, "does not point into the stack")


def _ebp_search(end: int, candidates: list[tuple[int, int, bool]]) -> ScanDetail:
    """The saved-ebp search as a scan's detail: the words read downwards from the first location."""
    first = candidates[0][0] if candidates else end
    addresses = range(first, first - 4 * len(candidates), -4)
    values = tuple(value for _, value, _ in candidates)
    verdicts = tuple(_POINTS_INTO_STACK if points else _NOT_INTO_STACK for _, _, points in candidates)
    stopped = "found a saved ebp" if any(points for _, _, points in candidates) else "no saved ebp found"
    return ScanDetail(
        end,
        len(candidates),
        4,
        addresses,
        values,
        verdicts,
        stopped,
        purpose="saved ebp (searched downwards)",
    )


def _breakpad_ebp_at_base(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """Breakpad's GetCallerByEBPAtBase: the ebp chain, or (if unreadable) a scan with ebp-chain repair."""
    ctx = callee.context
    last_esp, last_ebp = ctx.value("esp"), ctx.value("ebp")
    ip_word = walk.memory.word((last_ebp + 4) & U32, 4, "return address", "eip")
    bp_word = walk.memory.word(last_ebp, 4, "caller ebp", "ebp")
    caller_eip, caller_ebp = ip_word[2], bp_word[2]
    if caller_eip is not None and caller_ebp is not None:
        caller = ctx.with_registers({"eip": caller_eip, "esp": (last_ebp + 8) & U32, "ebp": caller_ebp})
        detail = FramePointerDetail("ebp", last_ebp, (FramePointerProbe(0, (ip_word, bp_word), (), True),))
        attempt = StrategyAttempt(
            Strategy.FRAME_POINTER,
            Outcome.FOUND,
            ("frame record at ebp {:#x}: return address {:#x}", last_ebp, caller_eip),
            detail,
            caller,
        )
        return StrategyResult((attempt,), caller, FrameTrust.FRAME_POINTER)
    fp_detail = FramePointerDetail("ebp", last_ebp, (FramePointerProbe(0, (ip_word, bp_word), (), False),))
    fp_attempt = StrategyAttempt(
        Strategy.FRAME_POINTER,
        Outcome.FAILED,
        f"cannot read the frame record at ebp {last_ebp:#x}",
        fp_detail,
    )
    if not walk.scan_allowed:
        return StrategyResult.failed(fp_attempt)
    result = _breakpad_scan(walk, last_esp, scan_words(walk.env, callee.trust), "return address")
    if result.address is None or result.value is None:
        return StrategyResult((fp_attempt, scan_failure(result)))
    caller_esp = result.address + 4
    chain = caller_esp - 8
    saved = walk.memory.word(chain, 4, "saved ebp below the return address", "ebp")
    saved_ebp = saved[2]
    good = (
        saved_ebp is not None and saved_ebp > chain and saved_ebp - chain <= MAX_REASONABLE_GAP_BETWEEN_FRAMES
    )
    caller_ebp = saved_ebp if good and saved_ebp is not None else last_ebp
    check: CheckRow = ("the word below the return address continues the ebp chain", good)
    caller = ctx.with_registers({"eip": result.value, "esp": caller_esp, "ebp": caller_ebp})
    scan_detail = with_frame_pointer(result.detail, [saved], [check])
    attempt = StrategyAttempt(
        Strategy.SCAN,
        Outcome.FOUND,
        f"return address {result.value:#x} found at {result.address:#x}",
        scan_detail,
        caller,
    )
    return StrategyResult((fp_attempt, attempt), caller, FrameTrust.SCAN)


def _breakpad_cfi(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """STACK CFI; Breakpad needs eip, esp and ebp from it."""
    result = cfi_strategy(callee, walk)
    context = result.context
    if context is not None and not all(context.is_valid(r) for r in ("eip", "esp", "ebp")):
        return StrategyResult.failed(
            result.attempts[0].with_outcome(Outcome.FAILED, "Breakpad needs eip, esp and ebp from CFI")
        )
    return result


UNWINDER = CpuUnwinder(
    X86,
    strategies={
        WalkPolicy.RUST_MINIDUMP: (caller_by_cfi, caller_by_frame_pointer, caller_by_scan),
        WalkPolicy.BREAKPAD: (_breakpad_stack_win, _breakpad_cfi, _breakpad_ebp_at_base),
    },
    post_checks={
        WalkPolicy.RUST_MINIDUMP: (NULL_INSTRUCTION, INCREASING_SP),
        WalkPolicy.BREAKPAD: (NULL_INSTRUCTION, BREAKPAD_SP),
    },
)
