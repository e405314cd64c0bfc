"""The explanation tree of one frame, read off the walk's own record.

Everything comes from the trace the walk recorded (`StackFrame.found_by`: `UnwindStep` →
`StrategyAttempt` → `CfiDetail` / `StackWinDetail` / `FramePointerDetail` / `ScanDetail`,
and the thread's `Termination`); nothing is re-computed or guessed. For each frame: each
strategy attempt with its outcome and reason; for CFI the INIT and delta rows (the one in
force marked) and every rule with its postfix evaluation token by token and its memory
reads; the STACK WIN record, program and evaluation; frame-pointer probes with their words
and checks; scan candidates with why each was accepted or rejected; post-checks; and, under
a thread's last frame, why the walk stopped. Decision nodes (`step`) carry the caller
registers at that moment (`registers.RegisterState`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from inspector.core.explain.registers import (
    NOTHING,
    KnownRegister,
    RegisterSource,
    RegisterState,
    attempt_state,
    cfi_states,
    rule_name,
)
from inspector.core.explain.tree import NodeKind, Tone, TraceNode
from inspector.core.explain.triage import normal_end, report_number
from inspector.core.record import Record
from inspector.core.report.frame_text import frame_label
from inspector.core.symbols import PostfixResult
from inspector.core.unwind import (
    CfiDetail,
    Check,
    FramePointerDetail,
    FrameTrust,
    MemoryWord,
    Outcome,
    RuleEffect,
    ScanCandidate,
    ScanDetail,
    StackFrame,
    StackWinDetail,
    StrategyAttempt,
    Termination,
    UnwindStep,
)

# ---- formatting --------------------------------------------------------------------------------


def _hex(value: int | None) -> str:
    return "unreadable" if value is None else f"{value:#x}"


def _values(pairs: Sequence[tuple[str, int]]) -> str:
    """`rip=0x1000 rsp=0x2000`."""
    return " ".join(f"{name}={value:#x}" for name, value in pairs)


def _stack_text(result_stack: Sequence[int | str]) -> str:
    return "[" + " ".join(f"{v:#x}" if isinstance(v, int) else str(v) for v in result_stack) + "]"


def _check_node(check: Check) -> TraceNode:
    return TraceNode(
        NodeKind.CHECK,
        check.description,
        "ok" if check.passed else "FAILED",
        tone=Tone.GOOD if check.passed else Tone.BAD,
    )


def _read_node(word: MemoryWord) -> TraceNode:
    return TraceNode(
        NodeKind.READ,
        f"read [{word.address:#x}]",
        f"= {_hex(word.value)} ({word.role})",
        tooltip=f"{word.size} bytes at {word.address:#x}: {_hex(word.value)}, read as {word.role}",
        tone=Tone.BAD if word.value is None else Tone.PLAIN,
        reads=(word.address,),
    )


def describe_trust(trust: FrameTrust) -> str:
    """What a trust level means for the person reading the stack."""
    return _TRUST_MEANING[trust]


_TRUST_MEANING = {
    FrameTrust.CONTEXT: "The instruction pointer comes straight from the thread's CPU context: exact.",
    FrameTrust.PREWALKED: "Recovered by an external stack walker.",
    FrameTrust.CFI: "Found with the module's call frame information (STACK CFI): reliable.",
    FrameTrust.CFI_SCAN: "STACK WIN information with scanning: fairly reliable.",
    FrameTrust.FRAME_POINTER: "Found by following the frame-pointer chain: usually right.",
    FrameTrust.SCAN: "Found by scanning the stack for a plausible return address: may be wrong.",
    FrameTrust.LEAF: "Simulated return from a leaf function: a guess.",
    FrameTrust.NONE: "How this frame was found is unknown.",
}


def candidate_where(candidate: ScanCandidate) -> str:
    """`module!symbol` (or what is known of it) for a scanned word."""
    where = candidate.module or "no module"
    if candidate.symbol:
        where += f"!{candidate.symbol}"
    return where


# ---- the tree ------------------------------------------------------------------------------------


class _Step(Record):
    """What every node of one unwind step needs: the CPU's ip / sp names and the callee's registers."""

    ip: str
    sp: str
    callee: Mapping[str, int]

    @property
    def names(self) -> tuple[str, str]:
        return self.ip, self.sp


def build_frame_trace(
    frames: Sequence[StackFrame],
    index: int,
    *,
    termination: Termination | None = None,
    context_source: str = "context",
) -> TraceNode:
    """The explanation of `frames[index]`; `termination` (the thread's) is shown under the last frame."""
    root = TraceNode(NodeKind.ROOT, "")
    root.frame = index
    frame = frames[index]
    number = report_number(frames, index)  # the report's number, as every view shows it
    rs = frame.context.register_set
    step = frame.found_by
    if step is None:
        head = root.add(
            TraceNode(
                NodeKind.FRAME,
                f"Frame {number}: {frame_label(frame)}",
                frame.trust.description,
                tooltip=f"The registers come from the {context_source}; nothing had to be unwound.",
                tone=Tone.GOOD,
                step=True,
                expanded=True,
            )
        )
        context = frame.context
        for name, role in (
            (rs.instruction_pointer, "the instruction pointer: where the thread was"),
            (rs.stack_pointer, "the stack pointer: where the walk starts reading the stack"),
        ):
            value = context.get(name)
            if value is not None and context.is_valid(name):
                head.add(TraceNode(NodeKind.INFO, f"{name} = {value:#x}", role))
        valid = len(context.valid_registers())
        head.add(TraceNode(NodeKind.INFO, f"{valid} registers known", f"from the {context_source}"))
    else:
        callee = dict(frames[index - 1].context.valid_registers()) if index > 0 else {}
        _add_step(root, step, _Step(rs.instruction_pointer, rs.stack_pointer, callee), expand_all=False)
        root.add(
            TraceNode(
                NodeKind.RESULT,
                f"→ frame {number}: {frame_label(frame)}",
                f"found by {frame.trust.description}",
                tooltip=describe_trust(frame.trust),
                tone=Tone.GOOD,
                step=True,
            )
        )
    if termination is not None:
        # reaching a thread's entry point is where every stack ends: told plainly, not as a failure
        normal = normal_end(frames[: index + 1], termination)
        node = root.add(
            TraceNode(
                NodeKind.TERMINATION,
                "Walk ended: the bottom of the stack" if normal else "Walk stopped",
                termination.message,
                tooltip=(
                    f"{termination.reason.value}: no frame after frame {number}"
                    + (f" ({frame.function_name}, where the thread started)" if normal else "")
                ),
                tone=Tone.PLAIN if normal else Tone.BAD,
                step=True,
                registers=NOTHING,
                expanded=True,
            )
        )
        if termination.step is not None:
            callee = dict(frame.context.valid_registers())
            _add_step(
                node,
                termination.step,
                _Step(rs.instruction_pointer, rs.stack_pointer, callee),
                expand_all=not normal,
            )
            if normal:  # nothing went wrong: every strategy rightly found no caller
                for attempt_node in node.children:
                    if attempt_node.tone is Tone.BAD:
                        attempt_node.tone = Tone.MUTED
    return root


def _add_step(parent: TraceNode, step: UnwindStep, names: _Step, *, expand_all: bool) -> None:
    for number, attempt in enumerate(step.attempts, 1):
        chosen = step.chosen is not None and number - 1 == step.chosen
        _add_attempt(parent, attempt, number, chosen, names, expand=chosen or expand_all)
    if step.post_checks:
        passed = all(c.passed for c in step.post_checks)
        checks = parent.add(
            TraceNode(
                NodeKind.POST_CHECKS,
                "Post-checks on the caller",
                "all passed"
                if passed
                else "failed: " + "; ".join(c.description for c in step.post_checks if not c.passed),
                tooltip="Checks every caller must pass before the walk accepts it",
                tone=Tone.GOOD if passed else Tone.BAD,
                step=True,
                registers=None if passed else NOTHING,
                expanded=True,
            )
        )
        for check in step.post_checks:
            checks.add(_check_node(check))
    if step.instruction_adjustment:
        parent.add(
            TraceNode(
                NodeKind.INFO,
                f"instruction = return address - {step.instruction_adjustment}",
                tooltip="Symbols and CFI of the caller are looked up at the call instruction, "
                "not at the return address after it",
            )
        )


def _attempt_tone(attempt: StrategyAttempt, chosen: bool) -> Tone:
    if chosen:
        return Tone.GOOD
    if attempt.outcome in (Outcome.NOT_APPLICABLE, Outcome.SKIPPED):
        return Tone.MUTED
    return Tone.BAD


def _produced(attempt: StrategyAttempt, names: _Step) -> RegisterState:
    """The registers an attempt produced with their sources (NOTHING if it produced none)."""
    if not attempt.registers:
        return NOTHING
    return attempt_state(attempt, names.callee, names.names)


def _add_attempt(
    parent: TraceNode, attempt: StrategyAttempt, number: int, chosen: bool, names: _Step, *, expand: bool
) -> None:
    outcome = attempt.outcome.value + (" (chosen)" if chosen else "")
    node = parent.add(
        TraceNode(
            NodeKind.ATTEMPT,
            f"{number}. {attempt.strategy.value}",
            f"{outcome}: {attempt.reason}",
            tooltip=f"Strategy {number}: {attempt.strategy.value}\nOutcome: {outcome}\n{attempt.reason}",
            tone=_attempt_tone(attempt, chosen),
            step=True,
            registers=NOTHING,
            expanded=expand,
        )
    )
    detail = attempt.detail
    if isinstance(detail, CfiDetail):
        _add_cfi(node, detail)
    elif isinstance(detail, StackWinDetail):
        _add_stack_win(node, detail, attempt, names)
    elif isinstance(detail, FramePointerDetail):
        _add_frame_pointer(node, detail, attempt, names)
    elif isinstance(detail, ScanDetail):
        _add_scan(node, detail, names, step=True, attempt=attempt)
    if attempt.registers:
        node.add(
            TraceNode(
                NodeKind.INFO,
                "caller registers",
                _values(attempt.registers),
                tooltip="The registers this strategy produced for the caller",
            )
        )


def _origin_node(origin: str | None, what: str) -> TraceNode | None:
    if origin is None:
        return None
    return TraceNode(
        NodeKind.INFO,
        f"{what} from",
        origin,
        tooltip=f"Where the {what} came from: the .sym file, or the unwind tables of which binary or "
        "debug file, and where that file was found",
    )


def _add_cfi(node: TraceNode, detail: CfiDetail) -> None:
    states = iter(cfi_states(detail))
    before_rules = next(states)
    if detail.init is not None:
        rows = node.add(
            TraceNode(
                NodeKind.ROWS,
                f"STACK CFI block of {detail.module}",
                f"{len(detail.rows_applied)} delta row{'s' if len(detail.rows_applied) != 1 else ''} "
                f"applied at {detail.module}+{detail.address:#x}",
                tooltip="The STACK CFI INIT row, then the delta rows whose address is at or before "
                "the instruction; the last one is in force",
                step=True,
                registers=before_rules,
                expanded=True,
            )
        )
        in_force = detail.rows_applied[-1] if detail.rows_applied else detail.init
        for row, prefix in [
            (detail.init, "STACK CFI INIT"),
            *((r, "STACK CFI") for r in detail.rows_applied),
        ]:
            forced = row is in_force
            rows.add(
                TraceNode(
                    NodeKind.ROW,
                    f"{prefix} {row.address:x} {row.rules}",
                    "in force" if forced else "applied",
                    tooltip=f"{detail.module}+{row.address:#x}"
                    + (": the last row at or before the instruction" if forced else ""),
                    tone=Tone.IN_FORCE if forced else Tone.PLAIN,
                )
            )
    if (origin := _origin_node(detail.origin, "rules")) is not None:
        node.add(origin)
    if detail.forwarded:
        node.add(
            TraceNode(
                NodeKind.INFO,
                "forwarded from the callee unless a rule says otherwise",
                " ".join(detail.forwarded),
                tooltip="Callee-saved registers keep the callee's value when no rule restores them",
            )
        )
    if detail.note:
        node.add(TraceNode(NodeKind.INFO, "note", detail.note))
    for evaluation, after in zip(detail.evaluations, states, strict=True):
        result = evaluation.result
        effect = evaluation.effect
        value = (
            f"= {result.value:#x}" if result.ok and result.value is not None else f"failed ({result.error})"
        )
        ok = result.ok and effect not in (RuleEffect.FAILED, RuleEffect.DROPPED)
        rule = node.add(
            TraceNode(
                NodeKind.RULE,
                f"{rule_name(evaluation.register)}: {evaluation.expression}",
                f"{value}  [{effect.value}]",
                tooltip=f"Rule for {rule_name(evaluation.register)}: {evaluation.expression}\n"
                f"Result: {value}\nEffect: {effect.value}",
                tone=Tone.PLAIN if ok else Tone.BAD,
                step=True,
                registers=after,
            )
        )
        _add_postfix(rule, result)
        rule.reads = rule.all_reads()


def _add_postfix(parent: TraceNode, result: PostfixResult) -> None:
    for step in result.steps:
        text = _stack_text(step.stack)
        reads: tuple[int, ...] = ()
        tooltip = f"after {step.token!r} the stack is {text}"
        if step.read is not None:
            read = step.read
            text += f"   read [{read.address:#x}] = {_hex(read.value)}"
            tooltip += f"\nread {read.size} bytes at {read.address:#x}: {_hex(read.value)}"
            reads = (read.address,)
        if step.assignment is not None:
            name, value = step.assignment
            text += f"   {name} := {'(undefined)' if value is None else f'{value:#x}'}"
        parent.add(TraceNode(NodeKind.TOKEN, step.token, text, tooltip=tooltip, reads=reads))


def _add_stack_win(node: TraceNode, detail: StackWinDetail, attempt: StrategyAttempt, names: _Step) -> None:
    record = detail.record
    node.add(
        TraceNode(
            NodeKind.ROW,
            f"STACK WIN {record.type.value} {record.address:x} {record.size:x}",
            f"parameters {record.parameter_size:#x}, saved registers {record.saved_register_size:#x}, "
            f"locals {record.local_size:#x}",
            tone=Tone.IN_FORCE,
        )
    )
    if (origin := _origin_node(detail.origin, "record")) is not None:
        node.add(origin)
    node.add(TraceNode(NodeKind.INFO, f"program ({detail.program_source})", detail.program or "(none)"))
    if detail.variables:
        node.add(
            TraceNode(
                NodeKind.INFO,
                "initial variables",
                _values(detail.variables),
            )
        )
    for search in detail.searches:
        _add_scan(node, search, None, step=False)
    if detail.evaluation is not None:
        result = detail.evaluation
        how = f"STACK WIN program ({detail.program_source})"
        assigned = {
            name[1:]: KnownRegister(value, RegisterSource.STACK_WIN, f"STACK WIN {name} ({how})")
            for step in result.steps
            if step.assignment is not None
            for name, value in [step.assignment]
            if value is not None and name.startswith("$")
        }
        evaluation = node.add(
            TraceNode(
                NodeKind.EVALUATION,
                "evaluation of the program",
                "ok" if result.ok else f"failed ({result.error})",
                tone=Tone.PLAIN if result.ok else Tone.BAD,
                step=True,
                registers=RegisterState(assigned),
                expanded=True,
            )
        )
        _add_postfix(evaluation, result)
        evaluation.reads = evaluation.all_reads()
    elif attempt.outcome is Outcome.FOUND:
        # FPO data has no program: the attempt itself is the decision, with what it produced
        node.registers = _produced(attempt, names)
    for word in detail.reads:
        node.add(_read_node(word))
    for check in detail.checks:
        node.add(_check_node(check))


def _add_frame_pointer(
    node: TraceNode, detail: FramePointerDetail, attempt: StrategyAttempt, names: _Step
) -> None:
    node.add(TraceNode(NodeKind.INFO, f"{detail.register} = {detail.value:#x}", "the callee's frame pointer"))
    produced = _produced(attempt, names) if attempt.outcome in (Outcome.FOUND, Outcome.REJECTED) else NOTHING
    for probe in detail.probes:
        where = f"{detail.register}+{probe.offset}" if probe.offset else detail.register
        probe_node = node.add(
            TraceNode(
                NodeKind.PROBE,
                f"frame record at {where}",
                "accepted" if probe.accepted else "rejected",
                tooltip="A saved frame pointer and a return address, side by side on the stack",
                tone=Tone.GOOD if probe.accepted else Tone.BAD,
                step=True,
                reads=tuple(w.address for w in probe.reads),
                registers=produced if probe.accepted else NOTHING,
                expanded=True,
            )
        )
        for word in probe.reads:
            probe_node.add(_read_node(word))
        for check in probe.checks:
            probe_node.add(_check_node(check))


def _add_scan(
    node: TraceNode,
    detail: ScanDetail,
    names: _Step | None,
    *,
    step: bool,
    attempt: StrategyAttempt | None = None,
) -> None:
    scan = node.add(
        TraceNode(
            NodeKind.SCAN,
            f"scan for a {detail.purpose}: {detail.window_words} words of {detail.word_size} bytes "
            f"from {detail.start:#x}",
            detail.stopped,
            tooltip="Each word is examined in turn: does it point just after a call in a module?",
            expanded=True,
        )
    )
    for candidate in detail.candidates:
        verdict = "ACCEPTED" if candidate.accepted else "rejected"
        accepted = candidate.accepted and names is not None and attempt is not None
        scan.add(
            TraceNode(
                NodeKind.CANDIDATE,
                f"[{candidate.address:#x}] = {candidate.value:#x}",
                f"{candidate_where(candidate)}: {verdict}, {candidate.reason}",
                tooltip=f"Stack word at {candidate.address:#x} holds {candidate.value:#x}\n"
                f"{candidate_where(candidate)}\n{verdict}: {candidate.reason}",
                # a rejected word is the scan working, not a fault: muted, never red
                tone=Tone.GOOD if candidate.accepted else Tone.MUTED,
                step=step,
                reads=(candidate.address,),
                # the accepted word: the caller is what the attempt made of it
                registers=_produced(attempt, names) if accepted and attempt and names else NOTHING,
            )
        )
    for word in detail.frame_pointer_reads:
        node.add(_read_node(word))
    for check in detail.frame_pointer_checks:
        node.add(_check_node(check))
