"""STACK CFI and STACK WIN evaluation for one unwind step, recorded rule by rule for the trace.

The semantics are rust-minidump's (`breakpad-symbols` walker + `minidump-unwind`'s
CfiStackWalker):

* The caller starts as a copy of the callee with only the CPU's callee-saved registers
  valid (those valid in the callee).
* STACK CFI: the INIT row and the delta rows at or below the address are composed (later
  rules win); `.cfa` and `.ra` must exist; `.cfa` is evaluated without `.cfa`, `.ra` with
  it, both must succeed and fit the register width, and become the caller's stack pointer
  and instruction pointer. Every other rule is evaluated with `.cfa`; a failure drops that
  register (also when it was forwarded), an unknown register name is ignored.
* Arithmetic is 64-bit wrapping for every CPU (memory words are the CPU's width); a value
  that does not fit a 32-bit register is not set.
* STACK WIN (x86 only): FRAME_DATA before FPO; if the STACK WIN record fails, STACK CFI is
  tried with the same caller state. rust-minidump's attempt to clear the forwarded
  registers before STACK WIN names them with a `$` and so clears nothing: the callee-saved
  registers stay forwarded, as its output shows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from inspector.core.minidump import CpuContext, Module
from inspector.core.record import replace
from inspector.core.symbols import (
    CfiLookup,
    PostfixResult,
    StackWinRecord,
    StackWinType,
    evaluate_cfi,
    evaluate_win,
)
from inspector.core.symbols.postfix import win_frame_size, win_variables
from inspector.core.unwind.environment import (
    U64,
    StackMemory,
    WalkEnvironment,
    readable_registers,
    register_name,
)
from inspector.core.unwind.frame import FrameTrust, StackFrame
from inspector.core.unwind.step import StrategyResult, ThreadWalk, register_not_known
from inspector.core.unwind.trace import (
    CfiDetail,
    CheckRow,
    Outcome,
    RuleEffect,
    RuleEvaluation,
    StackWinDetail,
    Strategy,
    StrategyAttempt,
    Text,
    WordRow,
)


class CallerRegisters:
    """The caller's registers while a CFI / STACK WIN evaluation builds them (rust-minidump's caller_ctx)."""

    __slots__ = ("callee", "valid", "values", "width")

    def __init__(self, callee: CpuContext, forwarded: Iterable[str], width: int) -> None:
        self.callee = callee
        self.width = width
        self.values: dict[str, int] = {}
        self.valid: set[str] = {name for name in forwarded if name in callee.valid}

    def set(self, name: str, value: int) -> RuleEffect:
        canonical = register_name(self.callee, name)
        if canonical is None:
            return RuleEffect.UNKNOWN_REGISTER
        if value > (1 << (8 * self.width)) - 1:
            return RuleEffect.TOO_WIDE
        self.values[canonical] = value
        self.valid.add(canonical)
        return RuleEffect.SET

    def clear(self, name: str) -> None:
        # rust-minidump removes the name exactly as written: `x29` does not clear `fp`.
        self.valid.discard(name)

    def raw(self, name: str) -> int:
        """The value whether valid or not (the callee's when never set), as rust-minidump reads it."""
        canonical = self.callee.canonical(name) or name
        if canonical in self.values:
            return self.values[canonical]
        return self.callee.value(canonical)

    def context(self) -> CpuContext:
        updated = self.callee.with_registers(self.values, keep_valid=True)
        return updated.subset(self.valid)

    def found(
        self, strategy: Strategy, reason: Text, detail: CfiDetail | StackWinDetail
    ) -> tuple[StrategyAttempt, CpuContext]:
        """The successful attempt and the caller's context, built once for both."""
        context = self.context()
        attempt = StrategyAttempt(strategy, Outcome.FOUND, reason, detail, context)
        return attempt, context


def _module_label(module: Module) -> str:
    return module.filename


def cfi_attempt(
    callee: StackFrame,
    walk: ThreadWalk,
    *,
    forwarded: tuple[str, ...],
    state: CallerRegisters | None = None,
    entry_only: frozenset[str] = frozenset(),
    adjust: Callable[[CallerRegisters], None] | None = None,
) -> tuple[StrategyAttempt, CpuContext | None]:
    """Evaluate the STACK CFI covering the callee's instruction: the attempt and, if it worked, the caller.

    `adjust` may change the caller's registers after the rules and before the caller's
    context (and the attempt's list of registers) is built: arm64 strips pointer auth there.

    `entry_only`: callee registers the rules may read only when the INIT row starts
    exactly at `instruction` (rust-minidump's arm64 rule for an lr that frame-pointer
    unwinding recovered heuristically: only a function-entry row `.ra: x30` may use it).
    """
    env = walk.env
    instruction, module = callee.instruction, callee.module
    if module is None:
        return _na(Strategy.CFI, f"{instruction:#x} is not in any loaded module"), None
    symbols = env.unwind_symbols(module)
    if symbols is None:
        return env.per_module(module, no_unwind_symbols).attempts[0], None
    lookup = env.cfi_lookup(module, instruction)
    if lookup is None:
        where = (_module_label(module), instruction - module.base)
        return _na(Strategy.CFI, ("no STACK CFI covers {}+{:#x}", *where)), None
    return _evaluate_rules(
        callee, walk, lookup, forwarded=forwarded, state=state, entry_only=entry_only, adjust=adjust
    )


def _evaluate_rules(
    callee: StackFrame,
    walk: ThreadWalk,
    lookup: CfiLookup,
    *,
    forwarded: tuple[str, ...],
    state: CallerRegisters | None,
    entry_only: frozenset[str],
    adjust: Callable[[CallerRegisters], None] | None,
) -> tuple[StrategyAttempt, CpuContext | None]:
    """`cfi_attempt` once a STACK CFI block covers the instruction: the rules, evaluated and recorded."""
    env, memory = walk.env, walk.memory
    width = env.width
    instruction, module, callee_context = callee.instruction, callee.module, callee.context
    assert module is not None  # the CFI came from its symbols
    relative = instruction - module.base
    caller = state if state is not None else CallerRegisters(callee_context, forwarded, width)
    registers = readable_registers(callee_context, all_valid=callee.trust is FrameTrust.CONTEXT)
    note = None
    present = sorted(name for name in entry_only if name in registers)
    if present and module.base + lookup.init.address != instruction:
        for name in present:
            del registers[name]
        note = (
            f"{'/'.join(present)} came from frame-pointer unwinding and is used only by a function-entry "
            "row; this row is not one"
        )
    forwarded_now = tuple(sorted(caller.valid))
    readable = tuple(registers.items())
    rules: tuple[tuple[str, str], ...] = () if lookup.rules is None else tuple(lookup.rules.items())
    evaluations: list[RuleEvaluation] = []

    def detail() -> CfiDetail:
        return CfiDetail(
            _module_label(module),
            relative,
            lookup.init,
            lookup.applied_rows,
            rules,
            forwarded_now,
            readable,
            tuple(evaluations),
            note,
            env.unwind_origin(module),
        )

    if lookup.rules is None:
        return _failed(Strategy.CFI, lookup.error or "malformed STACK CFI rules", detail()), None

    def read_word(address: int) -> int | None:
        return memory.read(address, width)

    def evaluate(expression: str, cfa: int | None) -> PostfixResult:
        # 64-bit arithmetic as rust-minidump, memory words of the CPU's width
        return evaluate_cfi(
            expression, registers=registers, read_word=read_word, cfa=cfa, width=8, read_size=width
        )

    rs = callee_context.register_set
    cfa_expr = lookup.rules.get(".cfa")
    ra_expr = lookup.rules.get(".ra")
    if cfa_expr is None or ra_expr is None:
        missing = ".cfa" if cfa_expr is None else ".ra"
        return _failed(Strategy.CFI, f"the rules have no {missing} rule", detail()), None
    cfa = evaluate(cfa_expr, None)
    if not cfa.ok or cfa.value is None:
        evaluations.append(RuleEvaluation(".cfa", cfa_expr, cfa, RuleEffect.FAILED, rs.stack_pointer))
        return _failed(Strategy.CFI, f".cfa could not be evaluated: {cfa.error}", detail()), None
    ra = evaluate(ra_expr, cfa.value)
    if not ra.ok or ra.value is None:
        evaluations.append(RuleEvaluation(".cfa", cfa_expr, cfa, RuleEffect.CFA, rs.stack_pointer))
        evaluations.append(RuleEvaluation(".ra", ra_expr, ra, RuleEffect.FAILED, rs.instruction_pointer))
        return _failed(Strategy.CFI, f".ra could not be evaluated: {ra.error}", detail()), None
    limit = (1 << (8 * width)) - 1
    for name, result in ((".cfa", cfa), (".ra", ra)):
        assert result.value is not None
        if result.value > limit:
            pointer = rs.stack_pointer if name == ".cfa" else rs.instruction_pointer
            evaluations.append(RuleEvaluation(name, result.expression, result, RuleEffect.FAILED, pointer))
            return (
                _failed(
                    Strategy.CFI,
                    f"{name} = {result.value:#x} does not fit a {8 * width}-bit register",
                    detail(),
                ),
                None,
            )
    caller.values[rs.stack_pointer] = cfa.value
    caller.valid.add(rs.stack_pointer)
    evaluations.append(RuleEvaluation(".cfa", cfa_expr, cfa, RuleEffect.CFA, rs.stack_pointer))
    caller.values[rs.instruction_pointer] = ra.value
    caller.valid.add(rs.instruction_pointer)
    evaluations.append(RuleEvaluation(".ra", ra_expr, ra, RuleEffect.RETURN_ADDRESS, rs.instruction_pointer))
    for name, expression in rules:
        if name in (".cfa", ".ra"):
            continue
        result = evaluate(expression, cfa.value)
        target: str | None = register_name(callee_context, name)
        if result.ok and result.value is not None:
            effect = caller.set(name, result.value)
        else:
            caller.clear(name)
            effect = RuleEffect.DROPPED
            if target != name:  # rust-minidump drops the name as written: an alias drops nothing
                target = None
        evaluations.append(RuleEvaluation(name, expression, result, effect, target))
    sp, ip = cfa.value, ra.value
    reason = (
        "STACK CFI at {}+{:#x}: caller {} = {:#x}, {} = {:#x}",
        _module_label(module),
        relative,
        rs.instruction_pointer,
        ip,
        rs.stack_pointer,
        sp,
    )
    if adjust is not None:
        adjust(caller)
    return caller.found(Strategy.CFI, reason, detail())


def stack_win_attempt(
    callee: StackFrame,
    walk: ThreadWalk,
    *,
    has_grand_callee: bool,
    grand_callee_parameter_size: int,
    state: CallerRegisters,
) -> tuple[StrategyAttempt | None, CpuContext | None]:
    """rust-minidump's STACK WIN step (x86): FRAME_DATA, else FPO; (attempt, the caller if it worked).

    Returns (None, None) when no STACK WIN record covers the instruction.
    """
    module = callee.module
    symbols = None if module is None else walk.env.unwind_symbols(module)
    if module is None or symbols is None:
        return None, None
    relative = callee.instruction - module.base
    record = symbols.find_stack_win(relative)
    if record is None:
        return None, None
    registers = readable_registers(callee.context, all_valid=callee.trust is FrameTrust.CONTEXT)
    memory = walk.memory
    if record.type is StackWinType.FRAME_DATA:
        attempt, caller = _frame_data(
            record=record,
            module=module,
            relative=relative,
            registers=registers,
            grand=grand_callee_parameter_size,
            memory=memory,
            state=state,
        )
    else:
        attempt, caller = _fpo(
            record=record,
            module=module,
            relative=relative,
            registers=registers,
            has_grand_callee=has_grand_callee,
            grand=grand_callee_parameter_size,
            memory=memory,
            state=state,
        )
    return with_origin(attempt, walk.env.unwind_origin(module)), caller


def with_origin(attempt: StrategyAttempt, origin: str | None) -> StrategyAttempt:
    """The attempt with its STACK WIN detail labelled with where the record came from."""
    detail = attempt.detail
    if origin is None or not isinstance(detail, StackWinDetail):
        return attempt
    return replace(attempt, detail=replace(detail, origin=origin))


def _frame_data(
    *,
    record: StackWinRecord,
    module: Module,
    relative: int,
    registers: dict[str, int],
    grand: int,
    memory: StackMemory,
    state: CallerRegisters,
) -> tuple[StrategyAttempt, CpuContext | None]:
    strategy = Strategy.STACK_WIN_FRAME_DATA
    program = record.program_string or ""
    esp, ebp = registers.get("esp"), registers.get("ebp")
    if esp is None or ebp is None:
        missing = "esp" if esp is None else "ebp"
        return _failed(strategy, f"the callee's {missing} is not known"), None
    variables = win_variables(
        record, esp=esp, ebp=ebp, ebx=registers.get("ebx"), grand_callee_parameter_size=grand
    )
    if variables is None:
        return _failed(strategy, ".raSearchStart overflows 32 bits"), None
    result = evaluate_win(program, variables=variables, read_word=lambda a: memory.read(a, 4), width=4)
    detail = StackWinDetail(
        _module_label(module), relative, record, program, "record", tuple(variables.items()), result
    )
    if not result.ok:
        return _failed(strategy, f"the program failed: {result.error}", detail), None
    for name in ("$eip", "$esp", "$ebp", "$ebx", "$esi", "$edi"):
        if name in result.variables:
            state.set(name[1:], result.variables[name])
    eip = result.variables.get("$eip")
    shown = "not set" if eip is None else f"{eip:#x}"
    reason = (
        f"STACK WIN frame data at {_module_label(module)}+{relative:#x}: caller eip = {shown}, "
        f"esp = {result.variables.get('$esp', 0):#x}"
    )
    return state.found(strategy, reason, detail)


def _fpo(
    *,
    record: StackWinRecord,
    module: Module,
    relative: int,
    registers: dict[str, int],
    has_grand_callee: bool,
    grand: int,
    memory: StackMemory,
    state: CallerRegisters,
) -> tuple[StrategyAttempt, CpuContext | None]:
    """rust-minidump's `walk_with_stack_win_fpo`.

    Situation: old FPO data (STACK WIN type 0) gives only frame sizes. Handling: the
    return address is at `esp + locals + saved registers + the grand-callee's parameter
    size`; a "leftover return address" equal to the context frame's own eip (an
    FPO-optimised system call that returned without popping it) is skipped; `ebp` is read
    from the saved-register area when the function allocates it, else it and `ebx` are
    carried over.
    """
    strategy = Strategy.STACK_WIN_FPO
    frame_size = win_frame_size(record, grand)
    reads: list[WordRow] = []
    checks: list[CheckRow] = []
    variables = (("frame size", frame_size), ("grand-callee parameter size", grand))

    def detail() -> StackWinDetail:
        return StackWinDetail(
            _module_label(module),
            relative,
            record,
            "",
            "FPO data (no program)",
            variables,
            None,
            tuple(reads),
            tuple(checks),
        )

    esp = registers.get("esp")
    if esp is None:
        return _failed(strategy, "the callee's esp is not known", detail()), None
    eip_address = (esp + frame_size) & U64
    word = memory.word(eip_address, 4, "return address", "eip")
    reads.append(word)
    caller_eip = word[2]
    if caller_eip is None:
        return _failed(strategy, f"cannot read the return address at {eip_address:#x}", detail()), None
    callee_eip = registers.get("eip")
    if not has_grand_callee:
        leftover = callee_eip is not None and caller_eip == callee_eip
        checks.append(("the word is not a leftover copy of the context frame's eip", not leftover))
        if callee_eip is None:
            return _failed(strategy, "the callee's eip is not known", detail()), None
        if leftover:
            eip_address = (eip_address + 4) & U64
            word = memory.word(eip_address, 4, "return address (after a leftover one)", "eip")
            reads.append(word)
            caller_eip = word[2]
            if caller_eip is None:
                return _failed(
                    strategy, f"cannot read the return address at {eip_address:#x}", detail()
                ), None
    caller_esp = eip_address + 4
    if record.allocates_base_pointer:
        ebp_address = (esp + grand + record.saved_register_size - 8) & U64
        saved = memory.word(ebp_address, 4, "saved ebp", "ebp")
        reads.append(saved)
        saved_ebp = saved[2]
        if saved_ebp is None:
            return _failed(strategy, f"cannot read the saved ebp at {ebp_address:#x}", detail()), None
        caller_ebp = saved_ebp
    else:
        if "ebx" in registers:
            state.set("ebx", registers["ebx"])
        ebp = registers.get("ebp")
        if ebp is None:
            return _failed(strategy, "the callee's ebp is not known", detail()), None
        caller_ebp = ebp
    for name, value in (("eip", caller_eip), ("esp", caller_esp), ("ebp", caller_ebp)):
        if state.set(name, value) is not RuleEffect.SET:
            return _failed(strategy, f"caller {name} = {value:#x} does not fit 32 bits", detail()), None
    reason = (
        f"STACK WIN FPO at {_module_label(module)}+{relative:#x}: return address {caller_eip:#x} "
        f"read at {eip_address:#x}"
    )
    return state.found(strategy, reason, detail())


def _na(strategy: Strategy, reason: Text) -> StrategyAttempt:
    return StrategyAttempt(strategy, Outcome.NOT_APPLICABLE, reason)


def _failed(
    strategy: Strategy, reason: str, detail: CfiDetail | StackWinDetail | None = None
) -> StrategyAttempt:
    return StrategyAttempt(strategy, Outcome.FAILED, reason, detail)


def no_unwind_symbols(env: WalkEnvironment, module: Module) -> StrategyResult:
    """STACK CFI's result for a frame in a module without symbols to unwind with (one per module)."""
    return StrategyResult.failed(_na(Strategy.CFI, env.unwind_symbols_missing_reason(module)))


def cfi_strategy(callee: StackFrame, walk: ThreadWalk) -> StrategyResult:
    """STACK CFI as most CPUs use it: needs the callee's stack pointer, forwards the callee-saved set."""
    cpu = walk.cpu
    if not callee.context.is_valid(cpu.stack_pointer):
        return register_not_known(Strategy.CFI, cpu.stack_pointer)
    module = callee.module
    if module is not None and walk.env.unwind_symbols(module) is None:
        return walk.env.per_module(module, no_unwind_symbols)
    attempt, caller = cfi_attempt(callee, walk, forwarded=cpu.callee_saved)
    if caller is None:
        return StrategyResult.failed(attempt)
    return StrategyResult((attempt,), caller, FrameTrust.CFI)
