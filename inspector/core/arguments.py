"""Guessed x86 function arguments: rust-minidump 0.25's `--recover-function-args`.

A heuristic, as rust-minidump's `arg_recovery` is, and printed only in the human
report. It works only on x86 frames whose function name carries its parameter list
(`Foo::bar(int, char*)`; Windows `.sym` files usually have no list, so nothing is
guessed there). The rules, all rust-minidump's:

* the calling convention comes from the name: a `::` before the first `(` means a C++
  member function, assumed to be Windows `thiscall` (`this` in eax, only known when eax
  is valid for the frame); anything else is `cdecl`;
* the parameters are the text between the first `(` and the last `)`, split at commas
  outside `<…>` and `(…)`; an unbalanced list gives no guess. An empty list still counts
  one (nameless) parameter, as rust-minidump counts it;
* every parameter is taken to be 4 bytes, read in order from the caller's stack pointer
  up to (not including) the stack pointer of the frame after the caller; the thread's
  stack end stands in for a missing frame. A word outside the stack memory is unknown.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.core.enums import Enum
from inspector.core.minidump import MemoryRegion
from inspector.core.record import Record
from inspector.core.types import Cpu
from inspector.core.unwind import CallStack

_WORD = 4


class CallingConvention(Enum):
    """The convention assumed, with the words rust-minidump's report uses for it."""

    CDECL = "cdecl [static function]"
    WINDOWS_THISCALL = "windows thiscall [C++ member function]"


class FunctionArgument(Record):
    name: str  # the parameter's text from the function name (usually its type)
    value: int | None  # None: not in the stack memory, or `this` with eax unknown


class FunctionArguments(Record):
    convention: CallingConvention
    arguments: tuple[FunctionArgument, ...]


def parse_argument_list(function_name: str) -> tuple[CallingConvention, list[str]] | None:
    """The assumed convention and the parameter texts, or None when the name has no usable list."""
    head, paren, rest = function_name.partition("(")
    if not paren:
        return None
    body, close, _ = rest.rpartition(")")
    if not close:
        return None
    convention = CallingConvention.WINDOWS_THISCALL if "::" in head else CallingConvention.CDECL
    parameters = []
    start = angle = round_ = 0
    for i, char in enumerate(body):
        if char == "<":
            angle += 1
        elif char == ">":
            if angle == 0:
                return None
            angle -= 1
        elif char == "(":
            round_ += 1
        elif char == ")":
            if round_ == 0:
                return None
            round_ -= 1
        elif char == "," and angle == 0 and round_ == 0:
            parameters.append(body[start:i].strip())
            start = i + 1
    parameters.append(body[start:].strip())
    if angle or round_:
        return None
    return convention, parameters


def recover_stack_arguments(stack: CallStack, memory: MemoryRegion | None) -> dict[int, FunctionArguments]:
    """Guessed arguments of the frames of one x86 thread, by `StackFrame.index`."""
    if memory is None:
        return {}
    frames = stack.frames
    stack_end = memory.base + memory.size
    out: dict[int, FunctionArguments] = {}
    for i, frame in enumerate(frames):
        name = frame.function_name
        if frame.context.cpu is not Cpu.X86 or name is None:
            continue
        parsed = parse_argument_list(name)
        if parsed is None:
            continue
        convention, parameters = parsed
        read = frames[i + 1].context.value("esp") if i + 1 < len(frames) else stack_end
        limit = frames[i + 2].context.value("esp") if i + 2 < len(frames) else stack_end
        arguments = []
        if convention is CallingConvention.WINDOWS_THISCALL:
            arguments.append(FunctionArgument("this", frame.context.get("eax")))
        for parameter in parameters:
            value = memory.read_u32(read) if read < limit else None
            read += _WORD
            arguments.append(FunctionArgument(parameter, value))
        out[frame.index] = FunctionArguments(convention, tuple(arguments))
    return out


def recover_function_arguments(
    threads: Sequence[CallStack], stacks: Sequence[MemoryRegion | None]
) -> tuple[tuple[tuple[int, int], FunctionArguments], ...]:
    """Guessed arguments for every x86 frame that has them, as ((thread index, frame index), arguments)
    pairs (`ProcessState.function_arguments`); `stacks`: the stack memory each thread's walk read, by
    thread index (`ProcessState.thread_starts`)."""
    out: list[tuple[tuple[int, int], FunctionArguments]] = []
    for stack in threads:
        if not stack.frames or stack.thread_index >= len(stacks):
            continue
        guessed = recover_stack_arguments(stack, stacks[stack.thread_index])
        out.extend(
            ((stack.thread_index, frame_index), arguments) for frame_index, arguments in guessed.items()
        )
    return tuple(out)
