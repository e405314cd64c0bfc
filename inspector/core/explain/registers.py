"""The caller's registers at each step of an unwind: which are known, with what value, from where.

The walk records what each step did (`RuleEvaluation.target` and its result, the words a
frame-pointer probe read for each register, the scan's accepted word, the registers an
attempt produced); here those records are folded, lazily and only when an explanation is
asked for, into one `RegisterState` per step. A state holds only what is true *at that
step*: a register whose STACK CFI rule has not been evaluated yet is `pending` — never
shown with the callee's value it may or may not keep — and a register no step decided is
unknown. Consecutive states share their unchanged `KnownRegister` objects.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from inspector.core.enums import Enum
from inspector.core.record import Record, field
from inspector.core.unwind import (
    CfiDetail,
    FramePointerDetail,
    MemoryWord,
    RuleEffect,
    RuleEvaluation,
    ScanDetail,
    StackFrame,
    StackWinDetail,
    Strategy,
    StrategyAttempt,
)


class RegisterSource(Enum):
    """Where a register's value came from (value: a short name for people)."""

    CONTEXT = "context"
    FORWARDED = "forwarded"
    CFI = "CFI"
    STACK_WIN = "STACK WIN"
    FRAME_POINTER = "frame pointer"
    SCAN = "stack scan"
    LEAF = "leaf return"
    KEPT = "kept from the callee"
    STRATEGY = "strategy"


class KnownRegister(Record):
    """A register's value at one step, where it came from, and that origin in words (`how`)."""

    value: int
    source: RegisterSource
    how: str


class RegisterStatus(Enum):
    KNOWN = "known"
    PENDING = "pending"
    UNKNOWN = "unknown"


class RegisterState(Record):
    """The caller registers at one step of the walk.

    `known`: the registers decided so far, in the order they became known. `pending`: the
    registers a later step of the same strategy will decide (a STACK CFI rule not evaluated
    yet); their value is not known at this step. Every other register is unknown.
    """

    known: Mapping[str, KnownRegister] = field(default_factory=dict)
    pending: frozenset[str] = frozenset()

    def status(self, name: str) -> RegisterStatus:
        if name in self.known:
            return RegisterStatus.KNOWN
        if name in self.pending:
            return RegisterStatus.PENDING
        return RegisterStatus.UNKNOWN

    def value(self, name: str) -> int | None:
        known = self.known.get(name)
        return None if known is None else known.value

    def values(self) -> tuple[tuple[str, int], ...]:
        """(name, value) of the known registers, in the order they became known."""
        return tuple((name, known.value) for name, known in self.known.items())


#: Nothing known, nothing pending: before a strategy produced anything, or after it failed.
NOTHING = RegisterState()


def rule_name(register: str) -> str:
    """`.cfa` / `.ra` as they are, a register rule with its `$`."""
    return register if register.startswith(".") else f"${register}"


# ---- STACK CFI ------------------------------------------------------------------------------------


def cfi_states(detail: CfiDetail) -> Iterator[RegisterState]:
    """The state before any rule (the rows are in force), then after each evaluated rule.

    Before: the callee-saved registers the rules leave alone are known with the callee's
    value (forwarded); those a rule will decide, and the CFA and return address, are pending.
    After each rule: what it did (set, dropped, ignored, failed) to its target register.
    """
    callee = dict(detail.callee_registers)
    evaluations = detail.evaluations
    decided = [e.target for e in evaluations]
    # how many evaluations still decide each register (a register may have two rules)
    remaining: dict[str, int] = {}
    for target in decided:
        if target is not None:
            remaining[target] = remaining.get(target, 0) + 1
    forwarded = {name for name in detail.forwarded if name in callee}
    known: dict[str, KnownRegister] = {
        name: KnownRegister(callee[name], RegisterSource.FORWARDED, _FORWARDED)
        for name in detail.forwarded
        if name in forwarded and name not in remaining
    }
    yield RegisterState(dict(known), frozenset(remaining))
    for evaluation in evaluations:
        target = evaluation.target
        if target is not None:
            remaining[target] -= 1
            if not remaining[target]:
                del remaining[target]
            effect = evaluation.effect
            value = evaluation.result.value
            if effect in (RuleEffect.CFA, RuleEffect.RETURN_ADDRESS, RuleEffect.SET) and value is not None:
                known[target] = KnownRegister(value, RegisterSource.CFI, _rule_text(evaluation))
            elif effect is RuleEffect.DROPPED:
                known.pop(target, None)
            elif effect is RuleEffect.TOO_WIDE and target in forwarded and target not in known:
                # the rule's value does not fit: the forwarded value stays
                known[target] = KnownRegister(callee[target], RegisterSource.FORWARDED, _FORWARDED)
        yield RegisterState(dict(known), frozenset(remaining))


_FORWARDED = "forwarded from the callee (callee-saved, no rule)"


def _rule_text(evaluation: RuleEvaluation) -> str:
    rule = f"CFI {rule_name(evaluation.register)}: {evaluation.expression}"
    if evaluation.effect is RuleEffect.CFA:
        return f"{rule} (the CFA)"
    if evaluation.effect is RuleEffect.RETURN_ADDRESS:
        return f"{rule} (.ra)"
    return rule


# ---- what an attempt produced -------------------------------------------------------------------


def attempt_state(
    attempt: StrategyAttempt, callee: Mapping[str, int], names: tuple[str, str]
) -> RegisterState:
    """Every caller register a successful attempt produced, each with where it came from.

    `callee`: the callee's valid registers; `names`: the CPU's instruction and stack pointer.
    The values are the attempt's (what the caller frame got); the sources are read off the
    attempt's record: the rule that set the register, the word a probe or a scan read for
    it, the STACK WIN program's assignment, or the callee when nothing set it.
    """
    produced = attempt.registers
    detail = attempt.detail
    origins: dict[str, tuple[RegisterSource, str]] = {}
    if isinstance(detail, CfiDetail):
        last: RegisterState = NOTHING
        for last in cfi_states(detail):  # noqa: B007 - only the state after the last rule is kept
            pass
        origins = {name: (known.source, known.how) for name, known in last.known.items()}
    elif isinstance(detail, StackWinDetail):
        origins = _stack_win_origins(detail)
    elif isinstance(detail, FramePointerDetail):
        origins = _frame_pointer_origins(detail, produced, names)
    elif isinstance(detail, ScanDetail):
        origins = _scan_origins(detail, produced, names, attempt)
    known: dict[str, KnownRegister] = {}
    for name, value in produced:
        origin = origins.get(name)
        if origin is not None:
            source, how = origin
            if source is RegisterSource.CFI and isinstance(detail, CfiDetail):
                how = _adjusted(how, name, value, detail)
        elif callee.get(name) == value:
            source, how = RegisterSource.KEPT, f"kept from the callee ({attempt.strategy.value})"
        else:
            source, how = RegisterSource.STRATEGY, f"{attempt.strategy.value}: {attempt.reason}"
        known[name] = KnownRegister(value, source, how)
    return RegisterState(known)


def _adjusted(how: str, name: str, value: int, detail: CfiDetail) -> str:
    """A rule's text, saying so when the caller got another value than the rule's (arm64 pointer auth)."""
    for evaluation in reversed(detail.evaluations):
        if evaluation.target == name and evaluation.result.value is not None:
            if evaluation.result.value != value:
                return f"{how}, pointer authentication stripped"
            break
    return how


def _word_origin(word: MemoryWord, strategy: str) -> tuple[RegisterSource, str]:
    source = RegisterSource.SCAN if strategy == "scan" else RegisterSource.FRAME_POINTER
    return source, f"{source.value}: {word.role} at [{word.address:#x}]"


def _read_for(words: Sequence[MemoryWord], name: str, value: int) -> MemoryWord | None:
    """The word read for register `name` whose value the caller got."""
    return next((w for w in words if w.register == name and w.value == value), None)


def _frame_pointer_origins(
    detail: FramePointerDetail, produced: Sequence[tuple[str, int]], names: tuple[str, str]
) -> dict[str, tuple[RegisterSource, str]]:
    accepted = next((p for p in detail.probes if p.accepted), None)
    if accepted is None:
        return {}
    out: dict[str, tuple[RegisterSource, str]] = {}
    _ip, sp = names
    for name, value in produced:
        word = _read_for(accepted.reads, name, value)
        if word is not None:
            out[name] = _word_origin(word, "frame pointer")
        elif name == sp:
            where = f"{detail.register}{f'+{accepted.offset}' if accepted.offset else ''}"
            out[name] = (RegisterSource.FRAME_POINTER, f"frame pointer: above the frame record at {where}")
    return out


def _scan_origins(
    detail: ScanDetail, produced: Sequence[tuple[str, int]], names: tuple[str, str], attempt: StrategyAttempt
) -> dict[str, tuple[RegisterSource, str]]:
    hit = detail.accepted
    if hit is None:
        return {}
    source = RegisterSource.LEAF if attempt.strategy is Strategy.LEAF else RegisterSource.SCAN
    ip, sp = names
    out = {
        ip: (source, f"{source.value}: return address found at [{hit.address:#x}]"),
        sp: (source, f"{source.value}: just above the return address at [{hit.address:#x}]"),
    }
    for name, value in produced:
        word = _read_for(detail.frame_pointer_reads, name, value)
        if word is not None and name not in out:
            out[name] = _word_origin(word, "scan")
    return out


def _stack_win_origins(detail: StackWinDetail) -> dict[str, tuple[RegisterSource, str]]:
    out: dict[str, tuple[RegisterSource, str]] = {}
    if detail.evaluation is not None:
        for step in detail.evaluation.steps:
            if step.assignment is not None and step.assignment[0].startswith("$"):
                name = step.assignment[0]
                out[name[1:]] = (
                    RegisterSource.STACK_WIN,
                    f"STACK WIN {name} (program {detail.program_source})",
                )
    for word in detail.reads:
        if word.register is not None and word.value is not None:
            out[word.register] = (RegisterSource.STACK_WIN, f"STACK WIN: {word.role} at [{word.address:#x}]")
    return out


# ---- a frame's registers ----------------------------------------------------------------------------


def frame_state(
    frame: StackFrame, callee: StackFrame | None, *, context_source: str = "context"
) -> RegisterState:
    """The frame's own (final) registers with their sources: the context's, or the chosen attempt's."""
    context = frame.context
    step = frame.found_by
    if step is None:
        how = f"context ({context_source})"
        return RegisterState(
            {
                name: KnownRegister(value, RegisterSource.CONTEXT, how)
                for name, value in context.valid_registers()
            }
        )
    attempt = step.chosen_attempt
    if attempt is None:
        return NOTHING
    callee_values = dict(callee.context.valid_registers()) if callee is not None else {}
    rs = context.register_set
    # the attempt's registers are the caller's valid ones: the frame is made from them
    return attempt_state(attempt, callee_values, (rs.instruction_pointer, rs.stack_pointer))


def register_provenance(
    frame: StackFrame, callee: StackFrame | None, *, context_source: str = "context"
) -> dict[str, str]:
    """For each valid register of `frame`, where its value came from (the Registers pane's "From")."""
    return {
        name: known.how
        for name, known in frame_state(frame, callee, context_source=context_source).known.items()
    }


def changed_registers(frame: StackFrame, callee: StackFrame | None) -> set[str]:
    """Valid registers of `frame` whose value differs from the callee's (or that the callee lacked)."""
    if callee is None:
        return set()
    before = dict(callee.context.valid_registers())
    return {name for name, value in frame.context.valid_registers() if before.get(name) != value}
