"""Source folders: where the sources the symbol files name are on this machine (Preferences, the Source pane).

A mapping is (recorded prefix, local folder): `/build/src` → `~/src/project` finds
`/build/src/app/main.c` at `~/src/project/app/main.c`; a relative recorded path is also looked
for under each local folder. Stored as JSON in the settings (`sources/roots`); edited in
Preferences › Source folders as a two-column table.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

SourceRoots = tuple[tuple[str, str], ...]
_KEY = "sources/roots"


def load_source_roots(store: QSettings) -> SourceRoots:
    raw = store.value(_KEY, "")
    try:
        items = json.loads(str(raw)) if raw else []
    except ValueError:
        return ()
    return tuple(
        (str(item[0]), str(item[1]))
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, list) and len(item) == 2 and all(isinstance(x, str) and x.strip() for x in item)
    )


def save_source_roots(store: QSettings, roots: SourceRoots) -> None:
    store.setValue(_KEY, json.dumps([[a, b] for a, b in roots]))


class SourceRootsBox(QGroupBox):
    """The Preferences group that edits the mappings."""

    def __init__(self, roots: SourceRoots, parent: QWidget | None = None) -> None:
        super().__init__("Source folders (the Source pane)", parent)
        self.setObjectName("sourceRoots")
        hint = QLabel(
            "Where the sources named in symbol files are on this machine: a recorded folder "
            "(e.g. <i>/build/src</i>) and the local folder that holds the same tree "
            "(e.g. <i>~/src/project</i>).",
            self,
        )
        hint.setWordWrap(True)
        self.table = QTableWidget(0, 2, self)
        self.table.setObjectName("sourceRootsTable")
        self.table.setHorizontalHeaderLabels(["Recorded folder", "Folder on this machine"])
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        for recorded, local in roots:
            self.add_row(recorded, local)
        add = QPushButton("&Add Mapping", self)
        add.clicked.connect(lambda: self.add_row("", ""))
        remove = QPushButton("Remove &Mapping", self)
        remove.clicked.connect(self._remove_selected)
        buttons = QVBoxLayout()
        buttons.addWidget(add)
        buttons.addWidget(remove)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.addWidget(self.table, 1)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.addWidget(hint)
        layout.addLayout(row)

    def add_row(self, recorded: str, local: str) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, 0, QTableWidgetItem(recorded))
        self.table.setItem(row, 1, QTableWidgetItem(local))

    def _remove_selected(self) -> None:
        for row in sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True):
            self.table.removeRow(row)

    def roots(self) -> SourceRoots:
        """The complete rows (both folders given), in order."""
        out = []
        for row in range(self.table.rowCount()):
            cells = [self.table.item(row, c) for c in (0, 1)]
            recorded, local = (c.text().strip() if c is not None else "" for c in cells)
            if recorded and local:
                out.append((recorded, local))
        return tuple(out)
