"""Triage marks on a walked stack: what a reader should trust less, where their own code starts,
what repeats, whether the walk ended normally, and how the report numbers the frames.

All of it is read from the frames and the termination; nothing here changes the walk. The
window shows these marks; the reports keep rust-minidump's text.

* **Numbering.** rust-minidump's report gives every inline frame a number of its own, innermost
  first, before its physical frame (`report_numbers`); every view numbers frames this way.
* **Guesses.** A name from a PUBLIC record (no FUNC covers the address) is the nearest exported
  symbol below it: right for an exported function, but for an unexported one it names a
  neighbour, often far away (`__nss_database_lookup + 0x15a98`). It is marked a guess when the
  offset is larger than a function usually is (`GUESS_OFFSET`). In a module whose symbols have no
  FUNC records at all (PUBLIC names only) the bar is lower (`GUESS_OFFSET_PUBLIC_ONLY`): if the
  names came from the dynamic symbol table only, every unexported function there takes a
  neighbour's name; but when they came from a full symbol table (libc's `.sym` made with its
  debug file), `start_thread + 0x304` is right, and marking every frame of such a library would
  teach users to ignore the mark. A PUBLIC name a few bytes in is the symbol itself (`_start`).
* **Your code.** A module is the system's when it lives in a system folder (`/lib`, `/usr/lib`,
  `C:\\Windows`, `/System/Library`, …) or is a well-known runtime library (libc, libstdc++,
  ntdll, …); every other module is the program's own (`first_own_frame`).
* **Recursion.** A run of equal physical frames (same module and function, no inline frames)
  of at least `RECURSION_MIN` frames (`recursion_runs`).
* **Normal end.** A walk that stops at a thread's entry point (`_start`, `__clone3`,
  `RtlUserThreadStart`, …), or with a null caller, ended where stacks end (`normal_end`).
* **Stack overflow.** Only on evidence: the exception says so (Windows' `STACK_OVERFLOW`); or the
  crash address is just below the crashing thread's stack pointer (within `STACK_LIMIT_REACH`:
  a push, a call or a stack probe touched the guard page past the end of the stack), whatever
  the depth; or the stack is at least `OVERFLOW_FRAMES` frames deep (or the walk reached its
  frame limit) with a recursion in it. A deep stack alone is not called an overflow.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from inspector.core.minidump import basename
from inspector.core.record import Record
from inspector.core.unwind import StackFrame, Termination, TerminationReason

#: equal frames in a row that count as a recursion (and collapse in the window)
RECURSION_MIN = 8
#: a PUBLIC name this far below the address is likely another function's
GUESS_OFFSET = 0x1000
#: the same for a module whose symbols are PUBLIC records only (no FUNC says where functions end)
GUESS_OFFSET_PUBLIC_ONLY = 0x400
#: a crashing stack this deep, with a recursion in it, is called a stack overflow
OVERFLOW_FRAMES = 1000
#: a crash address this far below the stack pointer is past the end of the stack (a stack probe
#: touches up to a page below; a large frame's first access can be further down)
STACK_LIMIT_REACH = 0x10000

_SYSTEM_DIRS = re.compile(
    r"^(/lib(32|64|x32)?/|/usr/(local/)?lib(32|64|exec)?/|/system/|/apex/|/vendor/lib|/System/Library/"
    r"|/usr/lib/system/|[a-z]:\\windows\\)",
    re.IGNORECASE,
)
_SYSTEM_NAMES = re.compile(
    r"^(ld-linux.*|ld64\.so.*|libc\.so.*|libm\.so.*|libpthread\.so.*|libdl\.so.*|librt\.so.*"
    r"|libstdc\+\+\.so.*|libgcc_s\.so.*|libc\+\+(abi)?\.so.*|linux-(vdso|gate)\.so.*|libSystem.*\.dylib"
    r"|libsystem_.*\.dylib|libdyld\.dylib|libc\+\+(abi)?\.?[0-9]*\.dylib|libobjc\.A\.dylib|dyld"
    r"|ntdll\.dll|kernel32\.dll|kernelbase\.dll|ucrtbased?\.dll|msvcrt\.dll|msvcp[0-9_]+d?\.dll"
    r"|vcruntime[0-9_]+d?\.dll|user32\.dll|win32u\.dll|gdi32(full)?\.dll|combase\.dll|rpcrt4\.dll"
    r"|libart\.so|libandroid_runtime\.so|libbionic\.so)$",
    re.IGNORECASE,
)

#: Functions where a thread's or a process's stack begins: reaching them is the normal end of a walk.
ENTRY_POINTS = frozenset(
    {
        "_start",
        "__clone",
        "__clone3",
        "clone",
        "clone3",
        "start_thread",
        "__libc_start_main",
        "__libc_start_call_main",
        "__libc_start_main_impl",
        "__libc_start_main_alias_2",
        "__start",
        "__thread_start",
        "thread_start",
        "_pthread_start",
        "start",
        "RtlUserThreadStart",
        "_RtlUserThreadStart",
        "BaseThreadInitThunk",
        "__pthread_start",
    }
)


def report_numbers(frames: Sequence[StackFrame]) -> list[int]:
    """The report's number of each physical frame (its inline frames take the numbers before it)."""
    out = []
    number = 0
    for frame in frames:
        number += len(frame.inlines)
        out.append(number)
        number += 1
    return out


def report_number(frames: Sequence[StackFrame], index: int, inline_depth: int = 0) -> int:
    """The report's number of physical frame `index` (inline_depth 0) or of its inline frame at
    `inline_depth` (1 = innermost, numbered first)."""
    first = sum(len(f.inlines) + 1 for f in frames[:index])
    if inline_depth:
        return first + inline_depth - 1
    return first + (len(frames[index].inlines) if index < len(frames) else 0)


def is_system_module(code_file: str) -> bool:
    """A module of the operating system or the language runtime, not the program's own."""
    path = code_file.replace("\\\\", "\\")
    return bool(_SYSTEM_DIRS.match(path) or _SYSTEM_NAMES.match(basename(path)))


def is_own_frame(frame: StackFrame) -> bool:
    return frame.module is not None and not is_system_module(frame.module.code_file)


def first_own_frame(frames: Sequence[StackFrame]) -> int | None:
    """The index of the first physical frame in the program's own code, if the stack has one."""
    return next((f.index for f in frames if is_own_frame(f)), None)


def is_guess(frame: StackFrame, module_has_functions: bool = True) -> bool:
    """The frame's name is the nearest PUBLIC symbol below the address and likely another function's:
    far below it (less far in a module whose symbols name no function by a FUNC record). A FUNC's
    name is never a guess."""
    symbol = frame.symbol
    if symbol is None or not symbol.from_public:
        return False
    offset = frame.function_offset
    limit = GUESS_OFFSET if module_has_functions else GUESS_OFFSET_PUBLIC_ONLY
    return offset is None or offset > limit


class RecursionRun(Record):
    """Physical frames `first` … `first + count - 1` are the same function, one calling the next."""

    first: int
    count: int

    @property
    def last(self) -> int:
        return self.first + self.count - 1


def recursion_key(frame: StackFrame) -> tuple[str, str] | None:
    """What equal frames of a recursion share: the module and function (None: cannot be told)."""
    if frame.inlines or frame.module is None or frame.function_name is None:
        return None
    return frame.module.code_file, frame.function_name


def recursion_runs(frames: Sequence[StackFrame], minimum: int = RECURSION_MIN) -> list[RecursionRun]:
    runs = []
    start = 0
    while start < len(frames):
        key = recursion_key(frames[start])
        end = start + 1
        if key is not None:
            while end < len(frames) and recursion_key(frames[end]) == key:
                end += 1
        if end - start >= minimum:
            runs.append(RecursionRun(start, end - start))
        start = end
    return runs


def normal_end(frames: Sequence[StackFrame], termination: Termination | None) -> bool:
    """The walk stopped where stacks end: at an entry point, or at a null return address."""
    if termination is None or not frames:
        return False
    if termination.reason is TerminationReason.NULL_INSTRUCTION:
        return True
    if termination.reason is not TerminationReason.NO_CALLER:
        return False
    name = frames[-1].function_name
    if name is None:
        return False
    bare = name.split("(", 1)[0].strip()
    return bare in ENTRY_POINTS


def overflow_reason(
    frames: Sequence[StackFrame],
    termination: Termination | None,
    exception_name: str | None = None,
    crash_address: int | None = None,
) -> str | None:
    """Why this crashing stack is a stack overflow, or None when nothing says so."""
    if exception_name is not None and "STACK_OVERFLOW" in exception_name.upper():
        return f"the exception is {exception_name}"
    below = _below_stack_pointer(frames, crash_address)
    if below is not None:
        return (
            f"the crash address is {below:,} bytes below the stack pointer: the thread ran out of stack "
            f"{len(frames):,} frames deep"
        )
    limit = termination is not None and termination.reason is TerminationReason.MAX_FRAMES
    if len(frames) >= OVERFLOW_FRAMES or limit:
        runs = recursion_runs(frames)
        if runs:
            run = max(runs, key=lambda r: r.count)
            name = frames[run.first].function_name
            deep = f"{len(frames):,} frames deep"
            if limit:
                deep = f"the walk reached its limit of {len(frames):,} frames"
            return f"{deep}, {run.count:,} of them recursive calls of {name}"
    return None


def _below_stack_pointer(frames: Sequence[StackFrame], address: int | None) -> int | None:
    """How far `address` is below the top frame's stack pointer, when it is near enough to be the end
    of the stack (None otherwise)."""
    if address is None or not frames:
        return None
    top = frames[0]
    sp = top.context.stack_pointer
    if sp is None or address == top.instruction or not 0 < sp - address <= STACK_LIMIT_REACH:
        return None
    return sp - address
