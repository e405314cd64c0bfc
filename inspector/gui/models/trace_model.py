"""`TraceTreeModel`: one frame's explanation (`explain.TraceNode`) as a tree of two columns: step, result.

The tree is built once per frame by `Document.trace_tree` and never changes,
so the model only resets when another frame is shown. Indexes point at their
`TraceNode` (internal pointer); the tree is kept alive by the model.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from inspector.core.explain import NodeKind, Tone, TraceNode
from inspector.gui.models.headered_model import HeaderedTreeModel
from inspector.gui.models.roles import ItemRole
from inspector.gui.theme import Theme

_Index = QModelIndex | QPersistentModelIndex
_ROLE = Qt.ItemDataRole

#: Lines whose text is an expression, a rule or an address: shown in the monospace font.
_MONO_KINDS = frozenset(
    {NodeKind.ROW, NodeKind.RULE, NodeKind.TOKEN, NodeKind.CANDIDATE, NodeKind.READ, NodeKind.PROBE}
)


class TraceTreeModel(HeaderedTreeModel):
    COL_STEP = 0
    COL_RESULT = 1
    HEADERS = ("Step", "Result")
    TOOLTIPS = (
        "What the stackwalker did, in order (bold: a decision the stepper stops at)",
        "What came of it",
    )

    def __init__(self, theme: Theme, parent: object = None) -> None:
        super().__init__(parent)  # type: ignore[arg-type]
        self._theme = theme
        self._root: TraceNode | None = None

    def set_theme(self, theme: Theme) -> None:
        self._theme = theme
        # a repaint, not a reset: the view keeps which lines are expanded and the current one
        self._all_changed()

    @property
    def root(self) -> TraceNode | None:
        return self._root

    def set_tree(self, root: TraceNode | None) -> None:
        if root is self._root:
            return
        self.beginResetModel()
        self._root = root
        self.endResetModel()

    def node(self, index: _Index) -> TraceNode | None:
        if not index.isValid():
            return self._root
        node = index.internalPointer()
        return node if isinstance(node, TraceNode) else None

    def index_of(self, node: TraceNode, column: int = 0) -> QModelIndex:
        if node.parent is None:
            return QModelIndex()
        return self.createIndex(node.row, column, node)

    def index_at(self, path: Sequence[int]) -> QModelIndex:
        root = self._root
        node = root.at(path) if root is not None else None
        return QModelIndex() if node is None or node is root else self.index_of(node)

    # ---- HeaderedTreeModel ----

    def index(self, row: int, column: int, parent: _Index = QModelIndex()) -> QModelIndex:  # noqa: B008
        if not self.hasIndex(row, column, parent):
            return QModelIndex()
        owner = self.node(parent)
        if owner is None or not 0 <= row < len(owner.children):
            return QModelIndex()
        return self.createIndex(row, column, owner.children[row])

    def parent(self, index: _Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        node = self.node(index) if index.isValid() else None
        if node is None or node.parent is None or node.parent is self._root:
            return QModelIndex()
        return self.createIndex(node.parent.row, 0, node.parent)

    def rowCount(self, parent: _Index = QModelIndex()) -> int:  # noqa: B008
        if parent.isValid() and parent.column() != 0:
            return 0
        owner = self.node(parent)
        return 0 if owner is None else len(owner.children)

    def data(self, index: _Index, role: int = _ROLE.DisplayRole) -> object:
        node = self.node(index) if index.isValid() else None
        if node is None:
            return None
        column = index.column()
        theme = self._theme
        if role == _ROLE.DisplayRole:
            return node.text if column == self.COL_STEP else node.result
        if role == _ROLE.ToolTipRole:
            return node.tooltip or node.label
        if role == _ROLE.FontRole:
            if column == self.COL_STEP and node.step and node.kind not in _MONO_KINDS:
                return theme.bold
            if node.kind in _MONO_KINDS or (column == self.COL_RESULT and node.kind is NodeKind.INFO):
                # a decision line is bold, unless it is one that was rightly passed over (muted)
                bold = node.step and column == self.COL_STEP and node.tone is not Tone.MUTED
                return theme.mono_bold if bold else theme.mono
            return None
        if role == _ROLE.ForegroundRole:
            tone = node.tone
            if tone is Tone.BAD:
                return theme.crash
            if tone is Tone.GOOD and column == self.COL_RESULT:
                return theme.ok
            if tone is Tone.MUTED:
                return theme.muted
            return None
        if role == _ROLE.BackgroundRole and node.tone is Tone.IN_FORCE:
            return theme.in_force
        if role == ItemRole:
            return node
        return None
