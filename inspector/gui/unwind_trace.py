"""The unwind trace of one frame as a tree of readable steps, and what the other panes derive from it.

Everything here is read from the core's trace (`StackFrame.found_by`: `UnwindStep` →
`StrategyAttempt` → `CfiDetail` / `StackWinDetail` / `FramePointerDetail` /
`ScanDetail`, and the thread's `Termination`); nothing is re-computed or guessed.

* `build_frame_trace` — the tree the Unwind pane shows for one frame: each strategy
  attempt with its outcome and reason; for CFI the INIT and delta rows (the one in force
  marked) and every rule with its postfix evaluation token by token and its memory reads;
  STACK WIN record, program and evaluation; frame-pointer probes with their words and
  checks; scan candidates with why each was accepted or rejected; post-checks; and, on a
  thread's last frame, why the walk stopped. Nodes marked `step` are the *decisions* the
  stepper walks through, in tree order.
* `register_provenance` — where each register of a frame came from.
* `stack_marks` — the stack words the walk used (return-address slots, saved registers,
  CFAs, scan candidates, frame-pointer words), for the memory pane's notes and the plot.

Pure Python over frozen core data (no Qt): built on the GUI thread when a frame is shown.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from inspector.core.minidump import basename
from inspector.core.report.human import frame_label
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


class NodeKind(enum.Enum):
    ROOT = "root"
    FRAME = "frame"
    ATTEMPT = "attempt"
    ROWS = "rows"
    ROW = "row"
    INFO = "info"
    RULE = "rule"
    TOKEN = "token"
    SCAN = "scan"
    CANDIDATE = "candidate"
    PROBE = "probe"
    READ = "read"
    CHECK = "check"
    EVALUATION = "evaluation"
    POST_CHECKS = "post-checks"
    RESULT = "result"
    TERMINATION = "termination"


class Tone(enum.Enum):
    """How a node is drawn: its meaning, not its colour (the pane's theme picks colours)."""

    PLAIN = "plain"
    GOOD = "good"
    BAD = "bad"
    MUTED = "muted"
    IN_FORCE = "in force"


@dataclass(eq=False)
class TraceNode:
    """One line of the trace tree. `reads`: stack addresses this line read (or, for a candidate, examined).

    `registers` (on step nodes): the caller registers known once this decision is made, in the
    order they became known; None means "the frame's own registers" (nothing left to decide).
    """

    kind: NodeKind
    text: str
    result: str = ""
    tooltip: str = ""
    tone: Tone = Tone.PLAIN
    step: bool = False
    reads: tuple[int, ...] = ()
    registers: tuple[tuple[str, int], ...] | None = None
    expanded: bool = False
    frame: int = 0
    children: list[TraceNode] = field(default_factory=list)
    parent: TraceNode | None = field(default=None, repr=False)
    row: int = 0

    def add(self, child: TraceNode) -> TraceNode:
        child.parent = self
        child.row = len(self.children)
        child.frame = self.frame
        self.children.append(child)
        return child

    @property
    def path(self) -> tuple[int, ...]:
        """Row numbers from the root down to this node."""
        rows: list[int] = []
        node: TraceNode | None = self
        while node is not None and node.parent is not None:
            rows.append(node.row)
            node = node.parent
        return tuple(reversed(rows))

    def at(self, path: Sequence[int]) -> TraceNode | None:
        node = self
        for row in path:
            if not 0 <= row < len(node.children):
                return None
            node = node.children[row]
        return node

    def walk(self) -> Iterator[TraceNode]:
        """This node and everything under it, in display order."""
        yield self
        for child in self.children:
            yield from child.walk()

    @property
    def label(self) -> str:
        return f"{self.text} — {self.result}" if self.result else self.text

    def all_reads(self) -> tuple[int, ...]:
        """The reads of this node and its descendants (a rule's tokens' reads), in order, each once."""
        seen: dict[int, None] = {}
        for node in self.walk():
            for address in node.reads:
                seen.setdefault(address, None)
        return tuple(seen)


# ---- formatting --------------------------------------------------------------------------------


def _hex(value: int | None) -> str:
    return "unreadable" if value is None else f"{value:#x}"


def _stack_text(result_stack: Sequence[int | str]) -> str:
    return "[" + " ".join(f"{v:#x}" if isinstance(v, int) else str(v) for v in result_stack) + "]"


def _rule_name(register: str) -> str:
    return register if register.startswith(".") else f"${register}"


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


# ---- the tree ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Names:
    ip: str
    sp: str


def build_frame_trace(
    frames: Sequence[StackFrame],
    index: int,
    *,
    termination: Termination | None = None,
    context_source: str = "context",
) -> TraceNode:
    """The trace tree of `frames[index]`; `termination` (the thread's) is shown under the last frame."""
    root = TraceNode(NodeKind.ROOT, "")
    root.frame = index
    frame = frames[index]
    names = _Names(frame.context.register_set.instruction_pointer, frame.context.register_set.stack_pointer)
    step = frame.found_by
    if step is None:
        head = root.add(
            TraceNode(
                NodeKind.FRAME,
                f"Frame {index}: {frame_label(frame)}",
                frame.trust.description,
                tooltip=f"The registers come from the {context_source}; nothing had to be unwound.",
                tone=Tone.GOOD,
                step=True,
                expanded=True,
            )
        )
        context = frame.context
        for name, role in (
            (names.ip, "the instruction pointer: where the thread was"),
            (names.sp, "the stack pointer: where the walk starts reading the stack"),
        ):
            value = context.get(name)
            if value is not None and context.is_valid(name):
                head.add(TraceNode(NodeKind.INFO, f"{name} = {value:#x}", role))
        valid = len(context.valid_registers())
        head.add(TraceNode(NodeKind.INFO, f"{valid} registers known", f"from the {context_source}"))
    else:
        _add_step(root, step, names, expand_all=False)
        root.add(
            TraceNode(
                NodeKind.RESULT,
                f"→ frame {index}: {frame_label(frame)}",
                f"found by {frame.trust.description}",
                tooltip=describe_trust(frame.trust),
                tone=Tone.GOOD,
                step=True,
            )
        )
    if termination is not None:
        node = root.add(
            TraceNode(
                NodeKind.TERMINATION,
                "Walk stopped",
                termination.message,
                tooltip=f"{termination.reason.value}: no frame after frame {index}",
                tone=Tone.BAD,
                step=True,
                registers=(),
                expanded=True,
            )
        )
        if termination.step is not None:
            _add_step(node, termination.step, names, expand_all=True)
    return root


def _add_step(parent: TraceNode, step: UnwindStep, names: _Names, *, expand_all: bool) -> None:
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
                registers=None if passed else (),
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


def _add_attempt(
    parent: TraceNode, attempt: StrategyAttempt, number: int, chosen: bool, names: _Names, *, expand: bool
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
            registers=(),
            expanded=expand,
        )
    )
    detail = attempt.detail
    if isinstance(detail, CfiDetail):
        _add_cfi(node, detail, names)
    elif isinstance(detail, StackWinDetail):
        _add_stack_win(node, detail)
    elif isinstance(detail, FramePointerDetail):
        _add_frame_pointer(node, detail, attempt if attempt.outcome is Outcome.FOUND else None)
    elif isinstance(detail, ScanDetail):
        _add_scan(node, detail, names, step=True)
    if attempt.registers:
        node.add(
            TraceNode(
                NodeKind.INFO,
                "caller registers",
                " ".join(f"{name}={value:#x}" for name, value in attempt.registers),
                tooltip="The registers this strategy produced for the caller",
            )
        )


def _add_cfi(node: TraceNode, detail: CfiDetail, names: _Names) -> None:
    callee_values = dict(detail.callee_registers)
    known: dict[str, int] = {name: callee_values[name] for name in detail.forwarded if name in callee_values}
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
                registers=tuple(known.items()),
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
    for evaluation in detail.evaluations:
        result = evaluation.result
        effect = evaluation.effect
        if effect is RuleEffect.CFA and result.value is not None:
            known[names.sp] = result.value
        elif effect is RuleEffect.RETURN_ADDRESS and result.value is not None:
            known[names.ip] = result.value
        elif effect is RuleEffect.SET and result.value is not None:
            known[evaluation.register] = result.value
        elif effect is RuleEffect.DROPPED:
            known.pop(evaluation.register, None)
        value = (
            f"= {result.value:#x}" if result.ok and result.value is not None else f"failed ({result.error})"
        )
        ok = result.ok and effect not in (RuleEffect.FAILED, RuleEffect.DROPPED)
        rule = node.add(
            TraceNode(
                NodeKind.RULE,
                f"{_rule_name(evaluation.register)}: {evaluation.expression}",
                f"{value}  [{effect.value}]",
                tooltip=f"Rule for {_rule_name(evaluation.register)}: {evaluation.expression}\n"
                f"Result: {value}\nEffect: {effect.value}",
                tone=Tone.PLAIN if ok else Tone.BAD,
                step=True,
                registers=tuple(known.items()),
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


def _add_stack_win(node: TraceNode, detail: StackWinDetail) -> None:
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
    node.add(TraceNode(NodeKind.INFO, f"program ({detail.program_source})", detail.program or "(none)"))
    if detail.variables:
        node.add(
            TraceNode(
                NodeKind.INFO,
                "initial variables",
                " ".join(f"{name}={value:#x}" for name, value in detail.variables),
            )
        )
    for search in detail.searches:
        _add_scan(node, search, None, step=False)
    if detail.evaluation is not None:
        result = detail.evaluation
        assigned = tuple(
            (name.lstrip("$"), value)
            for step in result.steps
            if step.assignment is not None
            for name, value in [step.assignment]
            if value is not None and name.startswith("$")
        )
        evaluation = node.add(
            TraceNode(
                NodeKind.EVALUATION,
                "evaluation of the program",
                "ok" if result.ok else f"failed ({result.error})",
                tone=Tone.PLAIN if result.ok else Tone.BAD,
                step=True,
                registers=assigned,
                expanded=True,
            )
        )
        _add_postfix(evaluation, result)
        evaluation.reads = evaluation.all_reads()
    for word in detail.reads:
        node.add(_read_node(word))
    for check in detail.checks:
        node.add(_check_node(check))


def _add_frame_pointer(node: TraceNode, detail: FramePointerDetail, found: StrategyAttempt | None) -> None:
    node.add(TraceNode(NodeKind.INFO, f"{detail.register} = {detail.value:#x}", "the callee's frame pointer"))
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
                registers=found.registers if probe.accepted and found is not None else (),
                expanded=True,
            )
        )
        for word in probe.reads:
            probe_node.add(_read_node(word))
        for check in probe.checks:
            probe_node.add(_check_node(check))


def candidate_where(candidate: ScanCandidate) -> str:
    where = candidate.module or "no module"
    if candidate.symbol:
        where += f"!{candidate.symbol}"
    return where


def _add_scan(node: TraceNode, detail: ScanDetail, names: _Names | None, *, step: bool) -> None:
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
        registers: tuple[tuple[str, int], ...] = ()
        if candidate.accepted and names is not None:
            registers = ((names.ip, candidate.value), (names.sp, candidate.address + detail.word_size))
        scan.add(
            TraceNode(
                NodeKind.CANDIDATE,
                f"[{candidate.address:#x}] = {candidate.value:#x}",
                f"{candidate_where(candidate)}: {verdict}, {candidate.reason}",
                tooltip=f"Stack word at {candidate.address:#x} holds {candidate.value:#x}\n"
                f"{candidate_where(candidate)}\n{verdict}: {candidate.reason}",
                tone=Tone.GOOD if candidate.accepted else Tone.MUTED if candidate.value == 0 else Tone.BAD,
                step=step,
                reads=(candidate.address,),
                registers=registers,
            )
        )
    for word in detail.frame_pointer_reads:
        node.add(_read_node(word))
    for check in detail.frame_pointer_checks:
        node.add(_check_node(check))


# ---- decisions ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision of a thread's walk: the frame it belongs to and its node's path in that frame's tree."""

    frame: int
    path: tuple[int, ...]
    label: str


def decisions_of(trees: Sequence[TraceNode]) -> list[Decision]:
    """The step nodes of each frame's tree, frame by frame, in tree order."""
    out: list[Decision] = []
    for frame, tree in enumerate(trees):
        for node in tree.walk():
            if node.step:
                out.append(Decision(frame, node.path, node.label))
    return out


# ---- where registers came from ----------------------------------------------------------------


def register_provenance(
    frame: StackFrame, callee: StackFrame | None, *, context_source: str = "context"
) -> dict[str, str]:
    """For each valid register of `frame`, where its value came from, read off the trace."""
    context = frame.context
    valid = dict(context.valid_registers())
    step = frame.found_by
    if step is None:
        return dict.fromkeys(valid, f"context ({context_source})")
    attempt = step.chosen_attempt
    if attempt is None:
        return {}
    names = _Names(context.register_set.instruction_pointer, context.register_set.stack_pointer)
    out: dict[str, str] = {}
    detail = attempt.detail
    callee_values = dict(callee.context.valid_registers()) if callee is not None else {}
    if isinstance(detail, CfiDetail):
        for evaluation in detail.evaluations:
            rule = f"CFI {_rule_name(evaluation.register)}: {evaluation.expression}"
            if evaluation.effect is RuleEffect.CFA:
                out[names.sp] = f"{rule} (the CFA)"
            elif evaluation.effect is RuleEffect.RETURN_ADDRESS:
                out[names.ip] = f"{rule} (.ra)"
            elif evaluation.effect is RuleEffect.SET:
                out[evaluation.register] = rule
        for name in detail.forwarded:
            out.setdefault(name, "forwarded from the callee (callee-saved, no rule)")
    elif isinstance(detail, StackWinDetail):
        program = detail.program or detail.program_source
        for name in valid:
            out[name] = f"STACK WIN program: {program}"
        if detail.evaluation is not None:
            for item in detail.evaluation.steps:
                if item.assignment is not None and item.assignment[0].lstrip("$") in valid:
                    name = item.assignment[0].lstrip("$")
                    out[name] = f"STACK WIN {item.assignment[0]} (program {detail.program_source})"
    elif isinstance(detail, FramePointerDetail):
        accepted = next((p for p in detail.probes if p.accepted), None)
        if accepted is not None:
            for word in accepted.reads:
                for name, value in valid.items():
                    if (
                        name not in out
                        and word.value == value
                        and ((word.role == "return address") == (name == names.ip))
                    ):
                        out[name] = f"frame pointer: {word.role} at [{word.address:#x}]"
            base = detail.value + accepted.offset
            sp = valid.get(names.sp)
            if sp is not None and names.sp not in out:
                out[names.sp] = (
                    f"frame pointer: {detail.register}{f'+{accepted.offset}' if accepted.offset else ''}"
                    f" + {sp - base} (above the frame record)"
                )
    elif isinstance(detail, ScanDetail):
        hit = detail.accepted
        if hit is not None:
            out[names.ip] = f"stack scan: return address found at [{hit.address:#x}]"
            out[names.sp] = f"stack scan: just above the return address at [{hit.address:#x}]"
        for word in detail.frame_pointer_reads:
            for name, value in valid.items():
                if name not in out and word.value == value:
                    out[name] = f"stack scan: {word.role} at [{word.address:#x}]"
    for name, value in valid.items():
        if name in out:
            continue
        if callee_values.get(name) == value:
            out[name] = f"kept from the callee ({attempt.strategy.value})"
        else:
            out[name] = f"{attempt.strategy.value}: {attempt.reason}"
    return out


def changed_registers(frame: StackFrame, callee: StackFrame | None) -> set[str]:
    """Valid registers of `frame` whose value differs from the callee's (or that the callee lacked)."""
    if callee is None:
        return set()
    before = dict(callee.context.valid_registers())
    return {name for name, value in frame.context.valid_registers() if before.get(name) != value}


# ---- stack words the walk used --------------------------------------------------------------------


class MarkKind(enum.Enum):
    RETURN_ADDRESS = "return address"
    SAVED_REGISTER = "saved register"
    CFA = "canonical frame address"
    SCAN_ACCEPTED = "scan: accepted"
    SCAN_REJECTED = "scan: rejected"


@dataclass(frozen=True, slots=True)
class StackMark:
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
    for index, frame in enumerate(frames):
        step = frame.found_by
        if step is None:
            continue
        callee = index - 1
        attempt = step.chosen_attempt
        if attempt is not None:
            marks.extend(_attempt_marks(attempt, callee, frame))
        for other in step.attempts:
            if other is not attempt and isinstance(other.detail, ScanDetail):
                marks.extend(_scan_marks(other.detail, callee, None))
    if termination is not None and termination.step is not None and frames:
        last = len(frames) - 1
        for attempt in termination.step.attempts:
            if isinstance(attempt.detail, ScanDetail):
                marks.extend(_scan_marks(attempt.detail, last, None))
    return marks


def _attempt_marks(attempt: StrategyAttempt, callee: int, caller: StackFrame) -> list[StackMark]:
    detail = attempt.detail
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
                        f"CFA of frame {callee} (frame {callee + 1}'s stack pointer)",
                    )
                )
            elif evaluation.effect is RuleEffect.RETURN_ADDRESS and reads:
                out.append(
                    StackMark(
                        reads[-1].address,
                        callee,
                        MarkKind.RETURN_ADDRESS,
                        f"return address of frame {callee} → {target}",
                    )
                )
            elif evaluation.effect is RuleEffect.SET and reads:
                out.append(
                    StackMark(
                        reads[-1].address,
                        callee,
                        MarkKind.SAVED_REGISTER,
                        f"saved {evaluation.register} (frame {callee + 1}'s, CFI)",
                    )
                )
    elif isinstance(detail, FramePointerDetail):
        for probe in detail.probes:
            if not probe.accepted:
                continue
            for word in probe.reads:
                kind = MarkKind.RETURN_ADDRESS if word.role == "return address" else MarkKind.SAVED_REGISTER
                text = (
                    f"return address of frame {callee} → {target} (frame pointer)"
                    if kind is MarkKind.RETURN_ADDRESS
                    else f"{word.role} (frame pointer)"
                )
                out.append(StackMark(word.address, callee, kind, text))
    elif isinstance(detail, ScanDetail):
        out.extend(_scan_marks(detail, callee, target))
    elif isinstance(detail, StackWinDetail):
        for word in detail.reads:
            out.append(StackMark(word.address, callee, MarkKind.SAVED_REGISTER, f"{word.role} (STACK WIN)"))
    return out


def _scan_marks(detail: ScanDetail, callee: int, target: str | None) -> list[StackMark]:
    out = []
    for candidate in detail.candidates:
        if candidate.accepted:
            text = f"scan hit: return address of frame {callee} → {target or candidate_where(candidate)}"
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


__all__ = [
    "Decision",
    "MarkKind",
    "NodeKind",
    "StackMark",
    "Tone",
    "TraceNode",
    "build_frame_trace",
    "changed_registers",
    "decisions_of",
    "describe_trust",
    "frame_extents",
    "register_provenance",
    "stack_marks",
]
