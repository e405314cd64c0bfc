"""Frames, their trust, inline frames and a thread's call stack."""

from __future__ import annotations

from inspector.core.enums import Enum
from inspector.core.minidump import CpuContext, Module
from inspector.core.record import Record
from inspector.core.symbols import FrameSymbol
from inspector.core.types import AddressRange
from inspector.core.unwind.trace import Termination, UnwindStep


class FrameTrust(Enum):
    """How much a frame's instruction pointer is trusted; the value is rust-minidump's JSON spelling.

    `LEAF` is Breakpad's (amd64 Windows leaf simulation, `WalkPolicy.BREAKPAD` only).
    """

    CONTEXT = "context"
    PREWALKED = "prewalked"
    CFI = "cfi"
    CFI_SCAN = "cfi_scan"
    FRAME_POINTER = "frame_pointer"
    SCAN = "scan"
    LEAF = "leaf"
    NONE = "non"

    @property
    def description(self) -> str:
        """The exact `Found by:` text of both reference stackwalkers."""
        return _DESCRIPTIONS[self]


_DESCRIPTIONS = {
    FrameTrust.CONTEXT: "given as instruction pointer in context",
    FrameTrust.PREWALKED: "recovered by external stack walker",
    FrameTrust.CFI: "call frame info",
    FrameTrust.CFI_SCAN: "call frame info with scanning",
    FrameTrust.FRAME_POINTER: "previous frame's frame pointer",
    FrameTrust.SCAN: "stack scanning",
    FrameTrust.LEAF: "simulating a return from leaf function",
    FrameTrust.NONE: "unknown",
}

#: The `Found by:` text of an inline pseudo-frame.
INLINE_DESCRIPTION = "inlining"


class InlineFrame(Record):
    """A function inlined at a frame's instruction (from the INLINE records); line None = unknown."""

    function: str
    file: str | None
    line: int | None


class UnloadedHit(Record):
    """An unloaded module that covered a frame's instruction, and the offsets into it."""

    name: str
    offsets: tuple[int, ...]


class StackFrame(Record):
    """One physical frame.

    `instruction` is the address looked up for symbols and CFI (the context's pc for frame
    0, the return address minus 1/2/4/8 for callers); `return_address` the raw instruction
    pointer of `context` (rust-minidump's `resume_address`, Breakpad's `ReturnAddress()`).
    `inlines` are innermost first and precede the frame in display order. `found_by` is
    None for the context frame.
    """

    index: int
    trust: FrameTrust
    context: CpuContext
    instruction: int
    return_address: int
    module: Module | None = None
    module_index: int | None = None
    symbol: FrameSymbol | None = None
    inlines: tuple[InlineFrame, ...] = ()
    unloaded_modules: tuple[UnloadedHit, ...] = ()
    found_by: UnwindStep | None = None

    @property
    def function_name(self) -> str | None:
        return None if self.symbol is None else self.symbol.function_name

    @property
    def function_base(self) -> int | None:
        """Absolute address of the function (or PUBLIC symbol) holding `instruction`."""
        if self.symbol is None or self.module is None:
            return None
        return self.module.base + self.symbol.function_base

    @property
    def function_offset(self) -> int | None:
        base = self.function_base
        return None if base is None else self.instruction - base

    @property
    def module_offset(self) -> int | None:
        return None if self.module is None else self.instruction - self.module.base

    @property
    def source_file(self) -> str | None:
        return None if self.symbol is None else self.symbol.source_file

    @property
    def source_line(self) -> int | None:
        return None if self.symbol is None else self.symbol.source_line

    @property
    def source_line_base(self) -> int | None:
        if self.symbol is None or self.module is None or self.symbol.source_line_base is None:
            return None
        return self.module.base + self.symbol.source_line_base

    @property
    def missing_symbols(self) -> bool:
        """rust-minidump's `missing_symbols`: no function name was found."""
        return self.symbol is None


class CallStackInfo(Enum):
    OK = "ok"
    MISSING_CONTEXT = "missing context"
    MISSING_MEMORY = "missing memory"
    UNSUPPORTED_CPU = "unsupported cpu"
    DUMP_THREAD_SKIPPED = "dump thread skipped"


class CallStack(Record):
    """A walked thread: its frames (innermost first), why the walk stopped, and what it read."""

    thread_index: int
    thread_id: int
    thread_name: str | None
    frames: tuple[StackFrame, ...]
    info: CallStackInfo
    termination: Termination | None
    stack_region: AddressRange | None = None
    last_error_value: int | None = None
