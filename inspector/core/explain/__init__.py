"""The explanation of a walk: one tree of decisions per frame, with the caller registers at each.

The walk records what it did (`inspector.core.unwind.trace`); this package reads that record
and nothing else. `build_frame_trace` makes a frame's tree (`tree.TraceNode`); its decision
nodes carry a `registers.RegisterState` (known registers with value and source, pending ones).
Every view of the walk renders this: `--trace` (`report.trace_text`), the window's Unwind
pane, the register provenance (`register_provenance`), the stepper (`decisions_of`) and the
stack-memory notes (`marks`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.core.lazy import lazy_names

# Each name is imported from its module on first use: importing one module of this package no
# longer imports all of them (start-up of a headless stackwalk; `inspector.core.lazy`).
__getattr__ = lazy_names(
    __name__,
    {
        "build": (
            "build_frame_trace",
            "candidate_where",
            "describe_trust",
        ),
        "marks": (
            "MarkKind",
            "StackMark",
            "frame_extents",
            "stack_marks",
        ),
        "registers": (
            "KnownRegister",
            "RegisterSource",
            "RegisterState",
            "RegisterStatus",
            "changed_registers",
            "frame_state",
            "register_provenance",
        ),
        "tree": (
            "Decision",
            "NodeKind",
            "Tone",
            "TraceNode",
            "decisions_of",
        ),
        "triage": (
            "report_number",
            "report_numbers",
        ),
    },
)

if TYPE_CHECKING:  # the same names, for type checkers
    from inspector.core.explain.build import build_frame_trace, candidate_where, describe_trust
    from inspector.core.explain.marks import MarkKind, StackMark, frame_extents, stack_marks
    from inspector.core.explain.registers import (
        KnownRegister,
        RegisterSource,
        RegisterState,
        RegisterStatus,
        changed_registers,
        frame_state,
        register_provenance,
    )
    from inspector.core.explain.tree import Decision, NodeKind, Tone, TraceNode, decisions_of
    from inspector.core.explain.triage import report_number, report_numbers

__all__ = [
    "Decision",
    "KnownRegister",
    "MarkKind",
    "NodeKind",
    "RegisterSource",
    "RegisterState",
    "RegisterStatus",
    "StackMark",
    "Tone",
    "TraceNode",
    "build_frame_trace",
    "candidate_where",
    "changed_registers",
    "decisions_of",
    "describe_trust",
    "frame_extents",
    "frame_state",
    "register_provenance",
    "report_number",
    "report_numbers",
    "stack_marks",
]
