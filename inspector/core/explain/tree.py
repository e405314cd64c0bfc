"""The explanation of a walk as one tree of readable lines; the decisions are its marked nodes.

A `TraceNode` is one line: what was done (`text`), what came of it (`result`), its meaning
(`tone`: good, bad, muted, the row in force — never a colour), the stack words it read, and,
on a decision (`step`), the caller registers at that moment (`RegisterState`). The tree of
one frame is built by `build.build_frame_trace`; `--trace`, the Unwind pane, the register
provenance, the stack-memory notes and the stepper all read it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from inspector.core.enums import Enum
from inspector.core.explain.registers import RegisterState
from inspector.core.record import Record, field


class NodeKind(Enum):
    ROOT = "root"
    FRAME = "frame"
    ATTEMPT = "attempt"
    ROWS = "rows"
    ROW = "row"
    INFO = "info"
    RULE = "rule"
    TOKEN = "token"
    SCAN = "scan"
    CANDIDATE = "candidate"
    PROBE = "probe"
    READ = "read"
    CHECK = "check"
    EVALUATION = "evaluation"
    POST_CHECKS = "post-checks"
    RESULT = "result"
    TERMINATION = "termination"


class Tone(Enum):
    """How a node reads: its meaning, not its colour (a view's theme picks colours)."""

    PLAIN = "plain"
    GOOD = "good"
    BAD = "bad"
    MUTED = "muted"
    IN_FORCE = "in force"


class TraceNode(Record, eq=False, frozen=False):
    """One line of the explanation. `reads`: stack addresses this line read (a candidate: examined).

    `registers` (on decision nodes, `step`): the caller registers at this decision; None means
    "the frame's own registers" (nothing is left to decide). `expanded`: shown open at first
    (the chosen attempt, a scan's candidates), folded otherwise. A tree is built once and not
    changed afterwards.
    """

    kind: NodeKind
    text: str
    result: str = ""
    tooltip: str = ""
    tone: Tone = Tone.PLAIN
    step: bool = False
    reads: tuple[int, ...] = ()
    registers: RegisterState | None = None
    expanded: bool = False
    frame: int = 0
    children: list[TraceNode] = field(default_factory=list)
    parent: TraceNode | None = field(default=None, repr=False)
    row: int = 0

    def add(self, child: TraceNode) -> TraceNode:
        child.parent = self
        child.row = len(self.children)
        child.frame = self.frame
        self.children.append(child)
        return child

    @property
    def path(self) -> tuple[int, ...]:
        """Row numbers from the root down to this node."""
        rows: list[int] = []
        node: TraceNode | None = self
        while node is not None and node.parent is not None:
            rows.append(node.row)
            node = node.parent
        return tuple(reversed(rows))

    @property
    def depth(self) -> int:
        return len(self.path)

    def at(self, path: Sequence[int]) -> TraceNode | None:
        node = self
        for row in path:
            if not 0 <= row < len(node.children):
                return None
            node = node.children[row]
        return node

    def walk(self) -> Iterator[TraceNode]:
        """This node and everything under it, in display order."""
        yield self
        for child in self.children:
            yield from child.walk()

    @property
    def label(self) -> str:
        return f"{self.text} — {self.result}" if self.result else self.text

    def all_reads(self) -> tuple[int, ...]:
        """The reads of this node and its descendants (a rule's tokens' reads), in order, each once."""
        seen: dict[int, None] = {}
        for node in self.walk():
            for address in node.reads:
                seen.setdefault(address, None)
        return tuple(seen)


class Decision(Record):
    """One decision of a thread's walk: the frame it belongs to and its node's path in that frame's tree."""

    frame: int
    path: tuple[int, ...]
    label: str


def decisions_of(trees: Sequence[TraceNode]) -> list[Decision]:
    """The decision nodes of each frame's tree, frame by frame, in tree order (what the stepper visits)."""
    out: list[Decision] = []
    for frame, tree in enumerate(trees):
        for node in tree.walk():
            if node.step:
                out.append(Decision(frame, node.path, node.label))
    return out
