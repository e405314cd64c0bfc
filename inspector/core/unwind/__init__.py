"""Stackwalker: frames with trust, inline frames, and a structured trace of every unwind decision.

Entry point: `walk_stack(context, stack_region, env, unloaded_modules=, cancel=)`, a
generator of `StackFrame`s followed by one `Termination`; `WalkEnvironment` holds the
dump-wide inputs (CPU, OS, modules, `Symbolizer`, `WalkOptions`). Usually driven through
`inspector.core.process`, which builds whole `CallStack`s for every thread.

Per CPU (`amd64`, `x86`, `arm`, `arm64`, `mips`): a constants block, then `caller_by_cfi`
→ `caller_by_frame_pointer` → `caller_by_scan` in rust-minidump's fixed order, with the
Breakpad policy's extra strategies (`WalkPolicy.BREAKPAD`) beside them. The trace model is
in `trace`: `UnwindStep` → `StrategyAttempt` → `CfiDetail` / `StackWinDetail` /
`FramePointerDetail` / `ScanDetail`, and `Termination`.
"""

from __future__ import annotations

from inspector.core.unwind.environment import CandidateVerdict, StackMemory, WalkEnvironment
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
