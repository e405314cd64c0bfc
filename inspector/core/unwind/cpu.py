"""What the shared unwinding strategies need to know about one CPU, as data.

Every per-CPU module (`amd64`, `x86`, `arm`, `arm64`, `mips`) describes its CPU with one
`CpuDescription` and lists, per policy, the strategies it tries and the checks a caller
must pass (`step.CpuUnwinder`). The strategies shared by several CPUs (STACK CFI, the
stack scan's opening, the scanned caller) read the register names, the word size and the
callee-saved set from here instead of from module constants of their own.
"""

from __future__ import annotations

from inspector.core.record import Record
from inspector.core.types import Cpu

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:  # the aliases are for type checkers (annotations are not evaluated)
    from collections.abc import Callable

    #: A per-CPU pre-filter for scanned words: None if the value may be a return address, else why not.
    Prefilter = Callable[[int], str | None]


class CpuDescription(Record):
    """Register names, word size, callee-saved set and instruction adjustment of one CPU.

    `word_size`: the unwinder's word, in bytes (rust-minidump reads 32-bit MIPS as 4-byte
    words although its context registers are 8 bytes). `callee_saved`: the registers STACK
    CFI carries over from the callee unless a rule says otherwise. `instruction_adjustment`:
    a caller's instruction is its return address minus this, so that it points into the call
    (1 on x86/amd64, 2 on arm, 4 on arm64, 8 on mips). `scan_prefilter`: the cheap test a
    rust-minidump scan makes before asking the modules and symbols (None: none).
    """

    cpu: Cpu
    word_size: int
    instruction_pointer: str
    stack_pointer: str
    frame_pointer: str | None
    callee_saved: tuple[str, ...]
    instruction_adjustment: int
    link_register: str | None = None
    scan_prefilter: Prefilter | None = None

    @property
    def word_mask(self) -> int:
        """All ones in a word: the largest address a word can hold."""
        return (1 << (8 * self.word_size)) - 1
