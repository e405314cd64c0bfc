"""Stack scanning: look through stack words for one that looks like a return address.

Situation: neither CFI nor a frame pointer explains the callee's frame (no symbols, a
frame-pointer-less function, a corrupted frame pointer). Example: a libc function without
STACK CFI whose caller's return address sits 12 words above its stack pointer. Handling:
read the words from the callee's stack pointer upwards and take the first one that
`WalkEnvironment.return_address_verdict` accepts (in a loaded module, and in a named
function if the module has symbols), after the CPU's own cheap pre-filter.

Window sizes: rust-minidump reads 40 words, or 160 when the callee is the context frame
(Breakpad found the first unwind messy) or was found by CFI (it is trustworthy, and the
caller may be JIT code to skip: rust-minidump PR #1087). Breakpad's loop runs while
`location <= start + words * size`, i.e. 41 / 161 words. A scan stops early at the end of
readable stack memory or when the address would overflow the pointer width.
"""

from __future__ import annotations

from inspector.core.record import Record
from inspector.core.unwind.environment import StackMemory, WalkEnvironment
from inspector.core.unwind.frame import FrameTrust
from inspector.core.unwind.options import DEFAULT_SCAN_WORDS, EXTENDED_SCAN_WORDS
from inspector.core.unwind.trace import CandidateVerdict, CheckRow, ScanDetail, Text, WordRow

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from collections.abc import Sequence

    from inspector.core.unwind.cpu import Prefilter

__all__ = ["DEFAULT_SCAN_WORDS", "EXTENDED_SCAN_WORDS", "ScanResult", "scan_stack", "scan_words"]


#: Words read from the stack at a time by a scan
_CHUNK_WORDS = 16


class ScanResult(Record):
    detail: ScanDetail
    address: int | None  # where the accepted word is
    value: int | None  # the accepted word

    @property
    def found(self) -> bool:
        return self.address is not None


def scan_words(env: WalkEnvironment, callee_trust: FrameTrust) -> int:
    """How many words to scan above the callee's stack pointer.

    rust-minidump: 160 for the context frame, and for a CFI frame when
    `extended_scan_after_cfi`; else 40. Breakpad: 161 for the context frame, else 41
    (its loop is inclusive).
    """
    rules = env.rules
    return rules.first_scan_words if callee_trust in env.extended_scans_after else rules.scan_words


def scan_stack(
    env: WalkEnvironment,
    memory: StackMemory,
    *,
    start: int,
    words: int,
    width: int,
    prefilter: Prefilter | None = None,
    purpose: str = "return address",
) -> ScanResult:
    """Scan `words` words from `start`; the first accepted candidate wins.

    Every candidate examined is recorded with its verdict. `prefilter` is skipped when the
    policy says so (Breakpad checks only "in a module" and symbols). The window is read a few
    words at a time (most scans stop within the first ones) and each word judged through the
    dump's memo of verdicts (`WalkEnvironment.judge`).
    """
    limit = (1 << (8 * width)) - 1
    if not env.rules.scan_prefilter:
        prefilter = None
    # the words the window can give: it ends early at an address past `limit` or at unreadable memory
    in_range = 0 if start > limit else (limit - start) // width + 1
    available = min(words, in_range)
    memo = env.scan_verdicts(prefilter)
    values: tuple[int, ...] = ()
    verdicts: list[CandidateVerdict] = []
    found_address = found_value = None
    while found_value is None and len(values) < available:
        wanted = min(_CHUNK_WORDS, available - len(values))
        chunk = memory.words(start + len(values) * width, wanted, width)
        for value in chunk:
            verdict = memo.get(value) or env.judge(value, prefilter, memo)
            verdicts.append(verdict)
            if verdict.accepted:
                found_value = value
                break
        values += chunk
        if len(chunk) < wanted:  # readable memory ends
            break
    count = len(verdicts)
    ended: Text
    if found_value is not None:
        found_address = start + (count - 1) * width
        ended = ("accepted the word at {:#x}", found_address)
        values = values[:count]
    elif count == words:
        ended = ("no return address in the {}-word window", words)
    elif count == in_range:
        ended = ("the next address overflows {} bits", 8 * width)
    else:
        ended = ("stack memory ends before {:#x}", start + count * width)
    addresses = range(start, start + count * width, width)
    detail = ScanDetail(start, words, width, addresses, values, tuple(verdicts), ended, purpose=purpose)
    return ScanResult(detail, found_address, found_value)


def with_frame_pointer(
    detail: ScanDetail, reads: Sequence[WordRow], checks: Sequence[CheckRow]
) -> ScanDetail:
    """A scan's detail with the frame-pointer recovery (x86/amd64) that followed its hit."""
    return ScanDetail(
        detail.start,
        detail.window_words,
        detail.word_size,
        detail.addresses,
        detail.values,
        detail.verdicts,
        detail.ended,
        tuple(reads),
        tuple(checks),
        detail.purpose,
    )
