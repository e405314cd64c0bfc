"""The unwind trace as readable text (`stackwalk --human --trace`).

Under each caller frame: every strategy tried, in order, with its outcome and reason; for
STACK CFI the rows in force and each rule's evaluation token by token with its memory
reads; for STACK WIN the record, program, variables and evaluation; for the frame pointer
each word read and each check; for a scan the window and every candidate word with why it
was accepted or rejected; then the post-checks. After the last frame: why the walk stopped.
"""

from __future__ import annotations

from inspector.core.symbols import PostfixResult
from inspector.core.unwind import (
    CfiDetail,
    Check,
    FramePointerDetail,
    MemoryWord,
    ScanDetail,
    StackWinDetail,
    StrategyAttempt,
    Termination,
    UnwindStep,
)


def trace_lines(step: UnwindStep, *, indent: str = "") -> list[str]:
    """How a frame was found: the attempts for its callee, then the post-checks."""
    out = [f"{indent}Unwind of frame {step.callee_index}:"]
    for number, attempt in enumerate(step.attempts, 1):
        chosen = " (chosen)" if step.chosen is not None and number - 1 == step.chosen else ""
        out.extend(attempt_lines(attempt, number, indent=indent + "  ", suffix=chosen))
    if step.post_checks:
        out.append(f"{indent}  post-checks:")
        out.extend(_check_line(check, indent + "    ") for check in step.post_checks)
    if step.instruction_adjustment:
        out.append(f"{indent}  instruction = return address - {step.instruction_adjustment}")
    return out


def termination_lines(termination: Termination, *, indent: str = "") -> list[str]:
    out = [f"{indent}Walk stopped: {termination.message}"]
    if termination.step is not None:
        out.extend(trace_lines(termination.step, indent=indent + "  "))
    return out


def attempt_lines(attempt: StrategyAttempt, number: int, *, indent: str = "", suffix: str = "") -> list[str]:
    out = [f"{indent}{number}. {attempt.strategy.value}: {attempt.outcome.value}{suffix} - {attempt.reason}"]
    inner = indent + "   "
    detail = attempt.detail
    if isinstance(detail, CfiDetail):
        out.extend(_cfi_lines(detail, inner))
    elif isinstance(detail, StackWinDetail):
        out.extend(_stack_win_lines(detail, inner))
    elif isinstance(detail, FramePointerDetail):
        out.extend(_frame_pointer_lines(detail, inner))
    elif isinstance(detail, ScanDetail):
        out.extend(scan_lines(detail, inner))
    if attempt.registers:
        out.append(
            f"{inner}caller registers: " + " ".join(f"{name}={value:#x}" for name, value in attempt.registers)
        )
    return out


def _cfi_lines(detail: CfiDetail, indent: str) -> list[str]:
    out = []
    if detail.init is not None:
        out.append(f"{indent}STACK CFI INIT {detail.init.address:x} {detail.init.rules}")
        out.extend(f"{indent}STACK CFI {row.address:x} {row.rules}" for row in detail.rows_applied)
    if detail.forwarded:
        out.append(f"{indent}forwarded unless a rule says otherwise: {' '.join(detail.forwarded)}")
    if detail.note:
        out.append(f"{indent}note: {detail.note}")
    for evaluation in detail.evaluations:
        result = evaluation.result
        value = (
            f"= {result.value:#x}" if result.ok and result.value is not None else f"failed ({result.error})"
        )
        out.append(
            f"{indent}{evaluation.register}: {evaluation.expression}  {value}  [{evaluation.effect.value}]"
        )
        out.extend(postfix_lines(result, indent + "    "))
    return out


def postfix_lines(result: PostfixResult, indent: str) -> list[str]:
    """One line per token: the token, the stack after it, and a memory read or assignment."""
    out = []
    for step in result.steps:
        stack = " ".join(f"{item:#x}" if isinstance(item, int) else str(item) for item in step.stack)
        line = f"{indent}{step.token:<14} -> [{stack}]"
        if step.read is not None:
            read = step.read
            line += f"  {_word(MemoryWord(read.address, read.size, read.value, 'rule operand'))}"
        if step.assignment is not None:
            name, value = step.assignment
            line += f"  {name} := {'(undefined)' if value is None else f'{value:#x}'}"
        out.append(line)
    return out


def _stack_win_lines(detail: StackWinDetail, indent: str) -> list[str]:
    record = detail.record
    out = [
        f"{indent}STACK WIN {record.type.value} {record.address:x} {record.size:x}: parameters "
        f"{record.parameter_size:#x}, saved registers {record.saved_register_size:#x}, "
        f"locals {record.local_size:#x}"
    ]
    if detail.program:
        out.append(f"{indent}program ({detail.program_source}): {detail.program}")
    else:
        out.append(f"{indent}{detail.program_source}")
    if detail.variables:
        out.append(
            f"{indent}variables: " + " ".join(f"{name}={value:#x}" for name, value in detail.variables)
        )
    for search in detail.searches:
        out.extend(scan_lines(search, indent))
    if detail.evaluation is not None:
        result = detail.evaluation
        out.append(f"{indent}evaluation: {'ok' if result.ok else f'failed ({result.error})'}")
        out.extend(postfix_lines(result, indent + "    "))
    out.extend(f"{indent}{_word(word)}" for word in detail.reads)
    out.extend(_check_line(check, indent) for check in detail.checks)
    return out


def _frame_pointer_lines(detail: FramePointerDetail, indent: str) -> list[str]:
    out = [f"{indent}{detail.register} = {detail.value:#x}"]
    for probe in detail.probes:
        where = f"at {detail.register}+{probe.offset}" if probe.offset else f"at {detail.register}"
        out.append(f"{indent}frame record {where}: {'accepted' if probe.accepted else 'rejected'}")
        out.extend(f"{indent}  {_word(word)}" for word in probe.reads)
        out.extend(_check_line(check, indent + "  ") for check in probe.checks)
    return out


def scan_lines(detail: ScanDetail, indent: str) -> list[str]:
    out = [
        f"{indent}scan for {detail.purpose}: {detail.window_words} words of {detail.word_size} bytes from "
        f"{detail.start:#x} ({detail.stopped})"
    ]
    for candidate in detail.candidates:
        where = candidate.module or "no module"
        if candidate.symbol:
            where += f"!{candidate.symbol}"
        verdict = "ACCEPTED" if candidate.accepted else "rejected"
        word = f"[{candidate.address:#x}] = {candidate.value:#x}"
        out.append(f"{indent}  {word}  {where}: {verdict}, {candidate.reason}")
    out.extend(f"{indent}{_word(word)}" for word in detail.frame_pointer_reads)
    out.extend(_check_line(check, indent) for check in detail.frame_pointer_checks)
    return out


def _word(word: MemoryWord) -> str:
    value = "unreadable" if word.value is None else f"{word.value:#x}"
    return f"read {word.size} bytes at {word.address:#x} = {value} ({word.role})"


def _check_line(check: Check, indent: str) -> str:
    return f"{indent}{'ok' if check.passed else 'FAILED'}: {check.description}"
