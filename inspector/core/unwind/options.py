"""How a walk behaves: the policy (whose rules to follow) and its limits, as one frozen dataclass."""

from __future__ import annotations

from inspector.core.enums import Enum
from inspector.core.record import Record, replace


class WalkPolicy(Enum):
    """Whose stack-walking rules to follow where rust-minidump and Breakpad disagree.

    `RUST_MINIDUMP` (the default) gives exactly rust-minidump's frames, which is what the
    fidelity score compares against. `BREAKPAD` adds Breakpad's extra strategies and limits:
    41/161-word scans, a frame cap of 2^20 and no scanning after 2^14 scanned frames, the
    amd64 Windows leaf simulation (trust `leaf`), the x86 STACK WIN heuristics (return
    address rescans, the program-failure scan, the CFI_SCAN rescue and the %ebp recovery
    scan), Breakpad's CFI essentials, its frame-pointer rules (amd64: not on Windows, %rbp
    8-aligned; arm64: pc from the callee's lr) and its first-unwind stack-pointer rule.
    """

    RUST_MINIDUMP = "rust-minidump"
    BREAKPAD = "breakpad"


#: rust-minidump has no frame cap; ours stops a runaway walk with a clear termination.
RUST_MINIDUMP_MAX_FRAMES = 100_000
#: Breakpad's `Stackwalker::max_frames_` (1 << 20).
BREAKPAD_MAX_FRAMES = 1 << 20
#: Breakpad's `Stackwalker::max_frames_scanned_` (1 << 14): scanning is disabled after that many.
BREAKPAD_MAX_SCANNED_FRAMES = 1 << 14
#: Frames of all threads of one dump together. Neither reference has one; ours bounds a hostile
#: dump whose many threads each walk a long stack (a walk keeps ~2 KB of trace per frame).
#: Real dumps stay far below it (a thousand threads of fifty frames is 50 000).
MAX_DUMP_FRAMES = 250_000
#: rust-minidump's default scan window, in words.
DEFAULT_SCAN_WORDS = 40
#: rust-minidump's window for the context frame (and, since PR #1087, for a CFI frame).
EXTENDED_SCAN_WORDS = DEFAULT_SCAN_WORDS * 4


class PolicyRules(Record):
    """What a policy fixes, as data; the strategies each CPU tries per policy are in its module.

    `scan_words` / `first_scan_words`: the scan window after a frame found by unwinding /
    after the context frame (Breakpad's loop is inclusive: one word more). `scan_prefilter`:
    a scan rejects a word with the CPU's cheap test before asking the modules (Breakpad asks
    only the modules and symbols). `unwind_with_rejected_symbols`: a `.sym` file
    rust-minidump refuses is used for unwinding too. `later_switches`: the `WalkOptions`
    switches for rust-minidump's later behaviour apply.
    """

    max_frames: int
    max_scanned_frames: int | None
    scan_words: int
    first_scan_words: int
    scan_prefilter: bool
    unwind_with_rejected_symbols: bool
    later_switches: bool


POLICY_RULES: dict[WalkPolicy, PolicyRules] = {
    WalkPolicy.RUST_MINIDUMP: PolicyRules(
        max_frames=RUST_MINIDUMP_MAX_FRAMES,
        max_scanned_frames=None,
        scan_words=DEFAULT_SCAN_WORDS,
        first_scan_words=EXTENDED_SCAN_WORDS,
        scan_prefilter=True,
        unwind_with_rejected_symbols=False,
        later_switches=True,
    ),
    WalkPolicy.BREAKPAD: PolicyRules(
        max_frames=BREAKPAD_MAX_FRAMES,
        max_scanned_frames=BREAKPAD_MAX_SCANNED_FRAMES,
        scan_words=DEFAULT_SCAN_WORDS + 1,
        first_scan_words=EXTENDED_SCAN_WORDS + 1,
        scan_prefilter=False,
        unwind_with_rejected_symbols=True,
        later_switches=False,
    ),
}


class WalkOptions(Record):
    """Options for walking one dump; immutable so it can cross threads.

    `max_frames` None means the policy's default (100 000 for rust-minidump, 2^20 for
    Breakpad); `max_scanned_frames` None means the policy's (no limit for rust-minidump,
    2^14 for Breakpad: after that many frames found by scanning, no more scanning);
    `max_dump_frames` caps the frames of all threads of a dump together (250 000).

    Three switches select rust-minidump behaviour that changed after release 0.25.0, the
    release the reference outputs (and the fidelity score) come from:

    * `extended_scan_after_cfi` — scan 160 words (not 40) when the callee was found by CFI
      as well as for the context frame (rust-minidump PR #1087). Off: 0.25.0.
    * `windows_frame_pointer_probe` — on Windows amd64, try the frame pointer at 16
      offsets 0, 16, …, 240 instead of not at all (PR #1088, 0.26.0). Off: 0.25.0.
    * `arm64_lr_recovery` — arm64 frame-pointer frames also recover the caller's lr from
      its frame record, CFI reads such a heuristic lr only on a function-entry row, and an
      unchanged sp is accepted after a CFI entry row (PR #1155, issue #1138). Off: 0.25.0.
      It helps walks through dump_syms ≥ 2.3.6 symbols; on the corpus's arm64 microdump it
      changes no frame (only frame 9's lr becomes known under the rust-minidump policy).

    The first two change frames of Windows and CFI-then-scan walks in the corpus; all three
    are off by default, so the default is 0.25.0's behaviour throughout.
    `WalkOptions.rust_minidump_main()` turns all three on. `arm64_lr_recovery` does not
    change the Breakpad policy's walk (Breakpad has its own arm64 frame-pointer rules).

    `unwind_with_rejected_symbols`: use a `.sym` file rust-minidump would refuse (missing
    final newline, old INLINE syntax, a malformed line) for unwinding too, not only for
    names (see `WalkEnvironment.unwind_symbols`). The Breakpad policy always does.
    """

    policy: WalkPolicy = WalkPolicy.RUST_MINIDUMP
    max_frames: int | None = None
    #: frames of every thread of a dump together (None: `MAX_DUMP_FRAMES`)
    max_dump_frames: int | None = None
    max_scanned_frames: int | None = None
    extended_scan_after_cfi: bool = False
    windows_frame_pointer_probe: bool = False
    arm64_lr_recovery: bool = False
    unwind_with_rejected_symbols: bool = False

    @classmethod
    def rust_minidump_main(cls, **changes: object) -> WalkOptions:
        """rust-minidump's current main branch instead of release 0.25.0 (all three later changes on)."""
        options = cls(extended_scan_after_cfi=True, windows_frame_pointer_probe=True, arm64_lr_recovery=True)
        return replace(options, **changes)

    @property
    def rules(self) -> PolicyRules:
        """The policy's fixed rules (limits, scan windows, ...)."""
        return POLICY_RULES[self.policy]

    @property
    def breakpad(self) -> bool:
        return self.policy is WalkPolicy.BREAKPAD

    @property
    def frame_limit(self) -> int:
        """The hard cap on physical frames per thread."""
        if self.max_frames is not None:
            return max(1, self.max_frames)
        return self.rules.max_frames

    @property
    def dump_frame_limit(self) -> int:
        """The cap on the frames of all threads of one dump together."""
        return MAX_DUMP_FRAMES if self.max_dump_frames is None else max(1, self.max_dump_frames)

    @property
    def scanned_frame_limit(self) -> int | None:
        """After this many scanned frames no more scanning (Breakpad only; None = no limit)."""
        if self.max_scanned_frames is not None:
            return max(0, self.max_scanned_frames)
        return self.rules.max_scanned_frames
