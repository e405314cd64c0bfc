"""Stackwalker: frames with trust, inline frames, and a structured trace of every unwind decision.

Entry point: `walk_stack(context, stack_region, env, unloaded_modules=, cancel=)`, a
generator of `StackFrame`s followed by one `Termination`; `WalkEnvironment` holds the
dump-wide inputs (CPU, OS, modules, `Symbolizer`, `WalkOptions`). Usually driven through
`inspector.core.process`, which builds whole `CallStack`s for every thread.

Per CPU (`amd64`, `x86`, `arm`, `arm64`, `mips`) one shape (`step.CpuUnwinder`): a
`CpuDescription` (register names, word size, callee-saved set, instruction adjustment, scan
pre-filter), then per policy (`WalkPolicy`) the strategies in their fixed order —
rust-minidump's `caller_by_cfi` → `caller_by_frame_pointer` → `caller_by_scan`, Breakpad's
beside them — and the post-checks, as data. Shared strategies: `cfi.cfi_strategy`,
`step.scan_opening` / `scan_from_stack_pointer` / `scanned_caller`; what a policy fixes
(limits, scan windows) is `options.PolicyRules`. The trace model is in `trace`:
`UnwindStep` → `StrategyAttempt` → `CfiDetail` / `StackWinDetail` / `FramePointerDetail` /
`ScanDetail`, and `Termination`.
"""

from __future__ import annotations

from inspector.core.lazy import lazy_names

# Each name is imported from its module on first use: importing one module of this package no
# longer imports all of them (start-up of a headless stackwalk; `inspector.core.lazy`).
__getattr__ = lazy_names(
    __name__,
    {
        "environment": (
            "StackMemory",
            "WalkEnvironment",
        ),
        "frame": (
            "INLINE_DESCRIPTION",
            "CallStack",
            "CallStackInfo",
            "FrameTrust",
            "InlineFrame",
            "StackFrame",
            "UnloadedHit",
        ),
        "options": (
            "WalkOptions",
            "WalkPolicy",
        ),
        "trace": (
            "AttemptDetail",
            "CandidateVerdict",
            "CfiDetail",
            "Check",
            "FramePointerDetail",
            "FramePointerProbe",
            "MemoryWord",
            "Outcome",
            "RuleEffect",
            "RuleEvaluation",
            "ScanCandidate",
            "ScanDetail",
            "StackWinDetail",
            "Strategy",
            "StrategyAttempt",
            "Termination",
            "TerminationReason",
            "UnwindStep",
        ),
        "walker": (
            "UNWINDERS",
            "WalkEvent",
            "walk_stack",
        ),
    },
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:  # the same names, for type checkers
    from inspector.core.unwind.environment import StackMemory, WalkEnvironment
    from inspector.core.unwind.frame import (
        INLINE_DESCRIPTION,
        CallStack,
        CallStackInfo,
        FrameTrust,
        InlineFrame,
        StackFrame,
        UnloadedHit,
    )
    from inspector.core.unwind.options import WalkOptions, WalkPolicy
    from inspector.core.unwind.trace import (
        AttemptDetail,
        CandidateVerdict,
        CfiDetail,
        Check,
        FramePointerDetail,
        FramePointerProbe,
        MemoryWord,
        Outcome,
        RuleEffect,
        RuleEvaluation,
        ScanCandidate,
        ScanDetail,
        StackWinDetail,
        Strategy,
        StrategyAttempt,
        Termination,
        TerminationReason,
        UnwindStep,
    )
    from inspector.core.unwind.walker import UNWINDERS, WalkEvent, walk_stack

__all__ = [
    "INLINE_DESCRIPTION",
    "UNWINDERS",
    "AttemptDetail",
    "CallStack",
    "CallStackInfo",
    "CandidateVerdict",
    "CfiDetail",
    "Check",
    "FramePointerDetail",
    "FramePointerProbe",
    "FrameTrust",
    "InlineFrame",
    "MemoryWord",
    "Outcome",
    "RuleEffect",
    "RuleEvaluation",
    "ScanCandidate",
    "ScanDetail",
    "StackFrame",
    "StackMemory",
    "StackWinDetail",
    "Strategy",
    "StrategyAttempt",
    "Termination",
    "TerminationReason",
    "UnloadedHit",
    "UnwindStep",
    "WalkEnvironment",
    "WalkEvent",
    "WalkOptions",
    "WalkPolicy",
    "walk_stack",
]
