"""The explanation of the walk as readable text (`stackwalk --human --trace`).

Under each frame, its explanation tree (`inspector.core.explain`) line by line, indented by
depth: for the context frame where its registers came from; for a caller every strategy
tried, in order, with its outcome and reason, the STACK CFI rows and each rule's evaluation
token by token with its memory reads, the STACK WIN record, program and evaluation, the
frame-pointer words and checks, the scan window and every candidate word with why it was
accepted or rejected, then the post-checks. After the last frame: why the walk stopped. The
window's Unwind pane shows the same tree.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.core.explain import NodeKind, TraceNode, build_frame_trace
from inspector.core.unwind import StackFrame, Termination

#: Nodes the text leaves out: the frame's own line is right above the explanation.
_UNPRINTED = frozenset({NodeKind.ROOT, NodeKind.FRAME, NodeKind.RESULT})


def frame_trace_lines(
    frames: Sequence[StackFrame],
    index: int,
    *,
    termination: Termination | None = None,
    context_source: str = "context",
    indent: str = "",
) -> list[str]:
    """How `frames[index]` was found (and, with `termination`, why the walk stopped after it)."""
    tree = build_frame_trace(frames, index, termination=termination, context_source=context_source)
    return tree_lines(tree, indent=indent)


def tree_lines(root: TraceNode, *, indent: str = "") -> list[str]:
    """Every printed node of the tree, `text - result`, two spaces deeper per level."""
    out = []
    for node in root.walk():
        if node.kind in _UNPRINTED:
            continue
        depth = sum(1 for ancestor in _ancestors(node) if ancestor.kind not in _UNPRINTED)
        line = f"{node.text} - {node.result}" if node.result else node.text
        out.append(f"{indent}{'  ' * depth}{line}")
    return out


def _ancestors(node: TraceNode) -> list[TraceNode]:
    out = []
    parent = node.parent
    while parent is not None:
        out.append(parent)
        parent = parent.parent
    return out
