"""The decision stepper's arithmetic: where the focus is among a thread's decisions, where a step goes.

A thread's decisions are the decision nodes of its frames' explanation trees, in order
(`explain.decisions_of`); the stepper moves the trace focus from one to the next (F10) or the
previous (Shift+F10). No Qt: `Session` holds the focus and announces it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inspector.core.explain import Decision, TraceNode


@dataclass(frozen=True, slots=True)
class DecisionPosition:
    """Where the stepper is: decision `index` (0-based) of `total` in the selected thread's walk."""

    index: int
    total: int
    decision: Decision
    #: the decision's frame as the report numbers it (its inline frames take the numbers before it)
    frame_number: int | None = None

    @property
    def text(self) -> str:
        number = self.decision.frame if self.frame_number is None else self.frame_number
        return f"decision {self.index + 1} of {self.total}: frame {number}: {self.decision.label}"


def position_of(decisions: Sequence[Decision], frame: int, path: tuple[int, ...]) -> DecisionPosition | None:
    """The decision the focused line (`frame`, `path`) is, or lies under (the deepest such); None if none."""
    best: int | None = None
    for i, d in enumerate(decisions):
        if d.frame != frame:
            continue
        if path[: len(d.path)] == d.path and (best is None or len(d.path) >= len(decisions[best].path)):
            best = i
    return None if best is None else DecisionPosition(best, len(decisions), decisions[best])


def step_target(
    decisions: Sequence[Decision],
    position: DecisionPosition | None,
    focus_path: tuple[int, ...] | None,
    selected_frame: int,
    delta: int,
) -> Decision:
    """The decision a step of `delta` (+1 / -1) goes to. Without a focus: the selected frame's first
    decision (forward) or the one before it (back); from a line under a decision, back goes to that
    decision itself. Clamped to the first and last decision."""
    if position is not None:
        exact = decisions[position.index].path == focus_path
        target = position.index + delta if exact or delta > 0 else position.index
    else:
        first = next((i for i, d in enumerate(decisions) if d.frame == selected_frame), 0)
        target = first if delta > 0 else first - 1
    return decisions[max(0, min(len(decisions) - 1, target))]


def node_reading(tree: TraceNode, address: int) -> TraceNode | None:
    """The first decision line whose reads include `address` (a rule, a candidate, a probe), else any line."""
    fallback = None
    for node in tree.walk():
        if address in node.reads:
            if node.step:
                return node
            fallback = fallback or node
    return fallback
