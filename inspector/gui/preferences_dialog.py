"""Preferences: symbol paths (folders and single `.sym` files, in search order), symbol servers
(URLs in order, a bearer token each, shown masked; offline; download timeout) and the symbol index cache."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, QStringListModel, Qt, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QGridLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.symbols import default_cache_directory, token_variable
from inspector.core.symbols.http_fetch import url_problem
from inspector.gui.settings import DEFAULT_DOWNLOAD_TIMEOUT, ServerEntry


def _move_row(model: QStringListModel, row: int, step: int) -> int | None:
    """Swap `row` with the row `step` away (the order the list is tried in); the row it moved to, or None
    when there is no such row (or no row is selected)."""
    items = model.stringList()
    target = row + step
    if row < 0 or not 0 <= target < len(items):
        return None
    items[row], items[target] = items[target], items[row]
    model.setStringList(items)
    return target


@dataclass(frozen=True, slots=True)
class SymbolPreferences:
    paths: tuple[Path, ...]
    cache_enabled: bool = True
    #: None: the default folder (`default_cache_directory()`)
    cache_dir: Path | None = None
    servers: tuple[ServerEntry, ...] = ()
    offline: bool = False
    download_timeout: float = DEFAULT_DOWNLOAD_TIMEOUT


class PreferencesDialog(QDialog):
    def __init__(
        self,
        preferences: SymbolPreferences,
        parent: QWidget | None = None,
        *,
        session_only_paths: Sequence[Path] = (),
    ) -> None:
        super().__init__(parent)
        self.setObjectName("preferencesDialog")
        self.setWindowTitle("Preferences")
        self.resize(680, 640)

        self.paths_model = QStringListModel([str(p) for p in preferences.paths], self)
        self.paths_view = QListView(self)
        self.paths_view.setObjectName("symbolPaths")
        self.paths_view.setModel(self.paths_model)
        self.paths_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.paths_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.paths_view.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.paths_view.setAlternatingRowColors(True)

        self.add_folder_button = QPushButton("Add &Folder…", self)
        self.add_file_button = QPushButton("Add &File…", self)
        self.remove_button = QPushButton("&Remove", self)
        self.up_button = QPushButton("Move &Up", self)
        self.down_button = QPushButton("Move &Down", self)
        self.add_folder_button.clicked.connect(self._choose_folder)
        self.add_file_button.clicked.connect(self._choose_file)
        self.remove_button.clicked.connect(self.remove_selected)
        self.up_button.clicked.connect(lambda: self.move_selected(-1))
        self.down_button.clicked.connect(lambda: self.move_selected(1))
        buttons = QVBoxLayout()
        for b in (
            self.add_folder_button,
            self.add_file_button,
            self.remove_button,
            self.up_button,
            self.down_button,
        ):
            buttons.addWidget(b)
        buttons.addStretch(1)

        paths_box = QGroupBox("Symbol paths, searched in this order", self)
        paths_layout = QGridLayout(paths_box)
        hint = QLabel(
            "Folders laid out as a Breakpad symbol store (<i>name/DEBUGID/name.sym</i>) or single "
            "<i>.sym</i> files. You can also drop folders and .sym files on the main window.",
            paths_box,
        )
        hint.setWordWrap(True)
        paths_layout.addWidget(hint, 0, 0, 1, 2)
        paths_layout.addWidget(self.paths_view, 1, 0)
        paths_layout.addLayout(buttons, 1, 1)
        if session_only_paths:
            extra = QLabel(
                "Also searched in this session (from the command line): "
                + ", ".join(str(p) for p in session_only_paths),
                paths_box,
            )
            extra.setWordWrap(True)
            extra.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            paths_layout.addWidget(extra, 2, 0, 1, 2)

        cache_box = QGroupBox("Symbol index cache", self)
        self.cache_enabled = QCheckBox(
            "Keep an index of each symbol file so it opens fast next time", cache_box
        )
        self.cache_enabled.setChecked(preferences.cache_enabled)
        self.cache_dir = QLineEdit(str(preferences.cache_dir) if preferences.cache_dir else "", cache_box)
        self.cache_dir.setObjectName("cacheDirectory")
        self.cache_dir.setPlaceholderText(f"default: {default_cache_directory()}")
        self.cache_dir.setClearButtonEnabled(True)
        browse = QPushButton("&Browse…", cache_box)
        browse.clicked.connect(self._choose_cache_dir)
        self.cache_enabled.toggled.connect(self.cache_dir.setEnabled)
        self.cache_enabled.toggled.connect(browse.setEnabled)
        self.cache_dir.setEnabled(preferences.cache_enabled)
        browse.setEnabled(preferences.cache_enabled)
        row = QHBoxLayout()
        row.addWidget(QLabel("Folder:", cache_box))
        row.addWidget(self.cache_dir, 1)
        row.addWidget(browse)
        cache_layout = QVBoxLayout(cache_box)
        cache_layout.addWidget(self.cache_enabled)
        cache_layout.addLayout(row)

        servers_box = self._build_servers(preferences)

        box = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(paths_box, 1)
        layout.addWidget(servers_box, 1)
        layout.addWidget(cache_box)
        layout.addWidget(box)
        self.paths_view.selectionModel().currentChanged.connect(self._update_buttons)
        self.paths_model.rowsInserted.connect(self._update_buttons)
        self.paths_model.rowsRemoved.connect(self._update_buttons)
        self._update_buttons()

    def _build_servers(self, preferences: SymbolPreferences) -> QGroupBox:
        box = QGroupBox("Symbol servers, asked in this order for what the paths lack", self)
        self._tokens = {s.url: s.token for s in preferences.servers}
        self.servers_model = QStringListModel([s.url for s in preferences.servers], self)
        self.servers_view = QListView(box)
        self.servers_view.setObjectName("symbolServers")
        self.servers_view.setModel(self.servers_model)
        self.servers_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.servers_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.server_url = QLineEdit(box)
        self.server_url.setObjectName("serverUrl")
        self.server_url.setPlaceholderText(
            "https://symbols.example.com/  (BASE/<debug file>/<DEBUG ID>/<name>.sym)"
        )
        self.server_url.returnPressed.connect(self.add_server_from_field)
        self.add_server_button = QPushButton("Add &Server", box)
        self.add_server_button.clicked.connect(self.add_server_from_field)
        self.remove_server_button = QPushButton("Remove", box)
        self.remove_server_button.clicked.connect(self.remove_selected_server)
        self.server_up_button = QPushButton("Up", box)
        self.server_down_button = QPushButton("Down", box)
        self.server_up_button.clicked.connect(lambda: self.move_selected_server(-1))
        self.server_down_button.clicked.connect(lambda: self.move_selected_server(1))
        self.server_error = QLabel(box)
        self.server_error.setObjectName("serverError")
        self.server_error.setWordWrap(True)
        self.server_token = QLineEdit(box)
        self.server_token.setObjectName("serverToken")
        self.server_token.setEchoMode(QLineEdit.EchoMode.Password)  # shown masked, kept in the settings
        self.server_token.setClearButtonEnabled(True)
        self.server_token.textEdited.connect(self._token_edited)
        self.offline = QCheckBox("Work offline: download nothing, use only symbols downloaded before", box)
        self.offline.setObjectName("symbolsOffline")
        self.offline.setChecked(preferences.offline)
        self.download_timeout = QDoubleSpinBox(box)
        self.download_timeout.setObjectName("downloadTimeout")
        self.download_timeout.setRange(1, 86400)
        self.download_timeout.setDecimals(0)
        self.download_timeout.setSuffix(" s")
        self.download_timeout.setValue(preferences.download_timeout)

        grid = QGridLayout(box)
        grid.addWidget(self.servers_view, 0, 0, 4, 2)
        grid.addWidget(self.remove_server_button, 0, 2)
        grid.addWidget(self.server_up_button, 1, 2)
        grid.addWidget(self.server_down_button, 2, 2)
        grid.addWidget(self.server_url, 4, 0, 1, 2)
        grid.addWidget(self.add_server_button, 4, 2)
        grid.addWidget(self.server_error, 5, 0, 1, 3)
        grid.addWidget(QLabel("Token of the selected server:", box), 6, 0)
        grid.addWidget(self.server_token, 6, 1, 1, 2)
        timeout_row = QHBoxLayout()
        timeout_row.addWidget(QLabel("Longest download:", box))
        timeout_row.addWidget(self.download_timeout)
        timeout_row.addStretch(1)
        grid.addWidget(self.offline, 7, 0, 1, 3)
        grid.addLayout(timeout_row, 8, 0, 1, 3)
        self.servers_view.selectionModel().currentChanged.connect(self._server_selected)
        self.servers_model.rowsInserted.connect(self._server_selected)
        self.servers_model.rowsRemoved.connect(self._server_selected)
        self._server_selected()
        return box

    # ---- the result ----

    def preferences(self) -> SymbolPreferences:
        text = self.cache_dir.text().strip()
        return SymbolPreferences(
            paths=tuple(Path(p) for p in self.paths_model.stringList() if p),
            cache_enabled=self.cache_enabled.isChecked(),
            cache_dir=Path(text).expanduser() if text else None,
            servers=tuple(ServerEntry(u, self._tokens.get(u, "")) for u in self.servers_model.stringList()),
            offline=self.offline.isChecked(),
            download_timeout=self.download_timeout.value(),
        )

    # ---- servers ----

    @Slot()
    def add_server_from_field(self) -> bool:
        """Add the URL typed in the field; False (and the reason shown) when it is not usable."""
        url = self.server_url.text().strip()
        problem = url_problem(url) if url else "type a server URL first"
        if problem is None and url in self.servers_model.stringList():
            problem = "that server is in the list already"
        if problem is not None:
            self.server_error.setText(problem)
            return False
        self.server_error.clear()
        urls = [*self.servers_model.stringList(), url]
        self.servers_model.setStringList(urls)
        self.server_url.clear()
        self._select_server(len(urls) - 1)
        return True

    @Slot()
    def remove_selected_server(self) -> None:
        row = self.servers_view.currentIndex().row()
        if row >= 0:
            self._tokens.pop(self.servers_model.stringList()[row], None)
            self.servers_model.removeRows(row, 1)
            self._select_server(min(row, self.servers_model.rowCount() - 1))

    def move_selected_server(self, step: int) -> None:
        target = _move_row(self.servers_model, self.servers_view.currentIndex().row(), step)
        if target is not None:
            self._select_server(target)

    def _select_server(self, row: int) -> None:
        if row >= 0:
            self.servers_view.selectionModel().setCurrentIndex(
                self.servers_model.index(row), QItemSelectionModel.SelectionFlag.ClearAndSelect
            )
        self._server_selected()

    @Slot()
    def _server_selected(self, *_: object) -> None:
        row = self.servers_view.currentIndex().row()
        urls = self.servers_model.stringList()
        selected = urls[row] if 0 <= row < len(urls) else None
        self.server_token.setEnabled(selected is not None)
        self.server_token.setText(self._tokens.get(selected, "") if selected else "")
        self.server_token.setPlaceholderText(
            f"optional; else ${token_variable(selected)}" if selected else "select a server"
        )
        self.remove_server_button.setEnabled(selected is not None)
        self.server_up_button.setEnabled(row > 0)
        self.server_down_button.setEnabled(0 <= row < len(urls) - 1)

    @Slot(str)
    def _token_edited(self, text: str) -> None:
        row = self.servers_view.currentIndex().row()
        urls = self.servers_model.stringList()
        if 0 <= row < len(urls):
            self._tokens[urls[row]] = text.strip()

    # ---- editing ----

    def add_paths(self, paths: Iterable[Path]) -> None:
        current = self.paths_model.stringList()
        for p in paths:
            text = str(Path(p).expanduser().absolute())
            if text not in current:
                current.append(text)
        self.paths_model.setStringList(current)
        self._select(len(current) - 1)

    @Slot()
    def remove_selected(self) -> None:
        row = self.paths_view.currentIndex().row()
        if row >= 0:
            self.paths_model.removeRows(row, 1)
            self._select(min(row, self.paths_model.rowCount() - 1))

    def move_selected(self, step: int) -> None:
        target = _move_row(self.paths_model, self.paths_view.currentIndex().row(), step)
        if target is not None:
            self._select(target)

    def _select(self, row: int) -> None:
        if row < 0:
            self._update_buttons()
            return
        self.paths_view.selectionModel().setCurrentIndex(
            self.paths_model.index(row), QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        self._update_buttons()

    @Slot()
    def _update_buttons(self, *_: object) -> None:
        row = self.paths_view.currentIndex().row()
        count = self.paths_model.rowCount()
        self.remove_button.setEnabled(row >= 0)
        self.up_button.setEnabled(row > 0)
        self.down_button.setEnabled(0 <= row < count - 1)

    @Slot()
    def _choose_folder(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Add a symbol folder")
        if folder:
            self.add_paths([Path(folder)])

    @Slot()
    def _choose_file(self) -> None:
        files, _ = QFileDialog.getOpenFileNames(
            self, "Add symbol files", "", "Breakpad symbols (*.sym);;All files (*)"
        )
        self.add_paths(Path(f) for f in files)

    @Slot()
    def _choose_cache_dir(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Symbol index cache folder", self.cache_dir.text())
        if folder:
            self.cache_dir.setText(folder)
