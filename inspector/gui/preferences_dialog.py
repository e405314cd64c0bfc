"""Preferences: symbol paths (folders and single `.sym` files, in search order), the module files on
this machine, the symbol index cache; symbol servers (URLs in order, a bearer token each, shown masked;
offline; download timeout) and debuginfod servers; the stack walk (whose rules to follow —
rust-minidump's or Breakpad's — and rust-minidump's switches); source folders. One tab each, so the
dialog fits a 1366×768 screen."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QItemSelectionModel, QObject, QStringListModel, Qt, Signal, Slot
from PySide6.QtWidgets import (
    QAbstractItemView,
    QButtonGroup,
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
    QRadioButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from inspector.core.symbols import default_cache_directory, token_variable
from inspector.core.symbols.http_fetch import url_problem
from inspector.core.unwind import WalkOptions, WalkPolicy
from inspector.gui.settings import DEFAULT_DOWNLOAD_TIMEOUT, ServerEntry, absolute_path
from inspector.gui.source_roots import SourceRoots, SourceRootsBox


class _OrderedList(QObject):
    """A list of strings tried in order (symbol paths, servers): its view and Remove / Up / Down buttons."""

    #: the selected row or the rows changed
    changed = Signal()
    #: an item was removed (Remove)
    removed = Signal(str)

    def __init__(self, items: Sequence[str], parent: QWidget, name: str, labels: Sequence[str]) -> None:
        super().__init__(parent)
        self.model = QStringListModel(list(items), self)
        self.view = QListView(parent)
        self.view.setObjectName(name)
        self.view.setModel(self.model)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.remove_button, self.up_button, self.down_button = (QPushButton(text, parent) for text in labels)
        self.remove_button.clicked.connect(self.remove_selected)
        self.up_button.clicked.connect(lambda: self.move_selected(-1))
        self.down_button.clicked.connect(lambda: self.move_selected(1))
        self.view.selectionModel().currentChanged.connect(self._update)
        self.model.rowsInserted.connect(self._update)
        self.model.rowsRemoved.connect(self._update)
        self._update()

    @property
    def row(self) -> int:
        return self.view.currentIndex().row()

    @property
    def selected(self) -> str | None:
        items, row = self.model.stringList(), self.row
        return items[row] if 0 <= row < len(items) else None

    def append(self, items: Iterable[str]) -> bool:
        """Add those not listed yet, at the end, and select the last row; whether any was added."""
        current = self.model.stringList()
        new = [i for i in dict.fromkeys(items) if i not in current]
        if new:
            self.model.setStringList([*current, *new])
        self.select(self.model.rowCount() - 1)
        return bool(new)

    @Slot()
    def remove_selected(self) -> str | None:
        """Remove the selected row (selecting its neighbour); the item removed."""
        item, row = self.selected, self.row
        if item is not None:
            self.model.removeRows(row, 1)
            self.removed.emit(item)
            self.select(min(row, self.model.rowCount() - 1))
        return item

    def move_selected(self, step: int) -> None:
        """Swap the selected row with the row `step` away, if there is one."""
        items, row = self.model.stringList(), self.row
        target = row + step
        if row < 0 or not 0 <= target < len(items):
            return
        items[row], items[target] = items[target], items[row]
        self.model.setStringList(items)
        self.select(target)

    def select(self, row: int) -> None:
        if row >= 0:
            self.view.selectionModel().setCurrentIndex(
                self.model.index(row), QItemSelectionModel.SelectionFlag.ClearAndSelect
            )
        self._update()

    @Slot()
    def _update(self, *_: object) -> None:
        row, count = self.row, self.model.rowCount()
        self.remove_button.setEnabled(0 <= row < count)
        self.up_button.setEnabled(0 < row < count)
        self.down_button.setEnabled(0 <= row < count - 1)
        self.changed.emit()


def _add_typed_url(field: QLineEdit, servers: _OrderedList, error: QLabel, what: str) -> bool:
    """Append the URL typed in `field` to `servers`; False (and the reason in `error`) when it is not
    usable or already listed."""
    url = field.text().strip()
    problem = url_problem(url) if url else f"type {what} first"
    if problem is None and url in servers.model.stringList():
        problem = "that server is in the list already"
    if problem is not None:
        error.setText(problem)
        return False
    error.clear()
    servers.append([url])
    field.clear()
    return True


@dataclass(frozen=True, slots=True)
class SymbolPreferences:
    """What the dialog edits: the symbol settings, and the walk's policy and switches (`walk`)."""

    paths: tuple[Path, ...]
    cache_enabled: bool = True
    #: None: the default folder (`default_cache_directory()`)
    cache_dir: Path | None = None
    servers: tuple[ServerEntry, ...] = ()
    offline: bool = False
    download_timeout: float = DEFAULT_DOWNLOAD_TIMEOUT
    walk: WalkOptions = field(default_factory=WalkOptions)
    #: the Source pane's (recorded folder, folder on this machine) mappings
    source_roots: SourceRoots = ()
    #: use the modules' own files on this machine when their identity matches (`Session.local_modules`)
    local_modules: bool = True
    #: debuginfod servers, asked in this order after the symbol servers
    debuginfod_urls: tuple[str, ...] = ()


#: The switches offered under "rust-minidump's later changes", with what each does.
_SWITCHES = (
    (
        "extended_scan_after_cfi",
        "Scan 160 words, not 40, after a frame found by CFI (rust-minidump PR #1087)",
    ),
    (
        "windows_frame_pointer_probe",
        "Windows x64: look for the frame record up to 240 bytes above rbp (rust-minidump 0.26)",
    ),
    (
        "arm64_lr_recovery",
        "arm64: recover lr from the caller's frame record for function-entry CFI (rust-minidump PR #1155)",
    ),
)


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
        self.resize(720, 560)

        self._paths = _OrderedList(
            [str(p) for p in preferences.paths], self, "symbolPaths", ("&Remove", "Move &Up", "Move &Down")
        )
        self.paths_model, self.paths_view = self._paths.model, self._paths.view
        self.paths_view.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.paths_view.setAlternatingRowColors(True)

        self.add_folder_button = QPushButton("Add &Folder…", self)
        self.add_file_button = QPushButton("Add &File…", self)
        self.remove_button = self._paths.remove_button
        self.up_button = self._paths.up_button
        self.down_button = self._paths.down_button
        self.add_folder_button.clicked.connect(self._choose_folder)
        self.add_file_button.clicked.connect(self._choose_file)
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

        self.local_modules = QCheckBox("Use module files on this machine", self)
        self.local_modules.setObjectName("localModules")
        self.local_modules.setChecked(preferences.local_modules)
        self.local_modules.setToolTip(
            "A module's own file at the path the dump recorded (or in the system's library folders), "
            "and its debug file in /usr/lib/debug/.build-id, when the build id matches the dump's; "
            "asked after the symbol paths and servers"
        )

        servers_box = self._build_servers(preferences)
        debuginfod_box = self._build_debuginfod(preferences.debuginfod_urls)
        walk_box = self._build_walk(preferences.walk)
        self.source_roots = SourceRootsBox(preferences.source_roots, self)

        box = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        box.accepted.connect(self.accept)
        box.rejected.connect(self.reject)

        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("preferencesTabs")
        symbols_tab = QWidget(self.tabs)
        symbols_layout = QVBoxLayout(symbols_tab)
        symbols_layout.addWidget(paths_box, 1)
        symbols_layout.addWidget(self.local_modules)
        symbols_layout.addWidget(cache_box)
        servers_tab = QWidget(self.tabs)
        servers_layout = QVBoxLayout(servers_tab)
        servers_layout.addWidget(servers_box, 2)
        servers_layout.addWidget(debuginfod_box, 1)
        walk_tab = QWidget(self.tabs)
        walk_layout = QVBoxLayout(walk_tab)
        walk_layout.addWidget(walk_box)
        walk_layout.addStretch(1)
        self.tabs.addTab(symbols_tab, "&Symbols")
        self.tabs.addTab(servers_tab, "Se&rvers")
        self.tabs.addTab(walk_tab, "Stack &walk")
        self.tabs.addTab(self.source_roots, "S&ources")

        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(box)

    def _build_servers(self, preferences: SymbolPreferences) -> QGroupBox:
        box = QGroupBox("Symbol servers, asked in this order for what the paths lack", self)
        self._tokens = {s.url: s.token for s in preferences.servers}
        self._servers = _OrderedList(
            [s.url for s in preferences.servers], box, "symbolServers", ("Remove", "Up", "Down")
        )
        self.servers_model, self.servers_view = self._servers.model, self._servers.view
        self.server_url = QLineEdit(box)
        self.server_url.setObjectName("serverUrl")
        self.server_url.setPlaceholderText(
            "https://symbols.example.com/  (BASE/<debug file>/<DEBUG ID>/<name>.sym)"
        )
        self.server_url.returnPressed.connect(self.add_server_from_field)
        self.add_server_button = QPushButton("Add &Server", box)
        self.add_server_button.clicked.connect(self.add_server_from_field)
        self.remove_server_button = self._servers.remove_button
        self.server_up_button = self._servers.up_button
        self.server_down_button = self._servers.down_button
        self._servers.removed.connect(lambda url: self._tokens.pop(url, None))
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
        self._servers.changed.connect(self._server_selected)
        self._server_selected()
        return box

    def _build_debuginfod(self, urls: Sequence[str]) -> QGroupBox:
        box = QGroupBox("debuginfod servers: binaries and debug files by build id", self)
        self._debuginfod = _OrderedList(urls, box, "debuginfodUrls", ("Remove", "Up", "Down"))
        self.debuginfod_model = self._debuginfod.model
        self.debuginfod_url = QLineEdit(box)
        self.debuginfod_url.setObjectName("debuginfodUrl")
        self.debuginfod_url.setPlaceholderText("https://debuginfod.example.org/  (default: $DEBUGINFOD_URLS)")
        self.debuginfod_url.returnPressed.connect(self.add_debuginfod_from_field)
        add = QPushButton("Add", box)
        add.clicked.connect(self.add_debuginfod_from_field)
        self.debuginfod_error = QLabel(box)
        self.debuginfod_error.setWordWrap(True)
        grid = QGridLayout(box)
        grid.addWidget(self._debuginfod.view, 0, 0, 4, 2)
        grid.addWidget(self._debuginfod.remove_button, 0, 2)
        grid.addWidget(self._debuginfod.up_button, 1, 2)
        grid.addWidget(self._debuginfod.down_button, 2, 2)
        grid.addWidget(self.debuginfod_url, 4, 0, 1, 2)
        grid.addWidget(add, 4, 2)
        grid.addWidget(self.debuginfod_error, 5, 0, 1, 3)
        return box

    @Slot()
    def add_debuginfod_from_field(self) -> bool:
        """Add the debuginfod URL typed in the field; False (and the reason shown) when it is not usable."""
        field, error = self.debuginfod_url, self.debuginfod_error
        return _add_typed_url(field, self._debuginfod, error, "a debuginfod URL")

    def _build_walk(self, walk: WalkOptions) -> QGroupBox:
        box = QGroupBox("Stack walk", self)
        self.policy_rust_minidump = QRadioButton(
            "rust-minidump 0.25's rules (the frames of minidump-stackwalk and of the JSON report)", box
        )
        self.policy_rust_minidump.setObjectName("policyRustMinidump")
        self.policy_breakpad = QRadioButton(
            "Breakpad's rules (its extra scans and heuristics, its frame limits)", box
        )
        self.policy_breakpad.setObjectName("policyBreakpad")
        policies = QButtonGroup(box)
        policies.addButton(self.policy_rust_minidump)
        policies.addButton(self.policy_breakpad)
        self.policy_breakpad.setChecked(walk.policy is WalkPolicy.BREAKPAD)
        self.policy_rust_minidump.setChecked(walk.policy is WalkPolicy.RUST_MINIDUMP)
        later = QLabel("rust-minidump's changes after 0.25 (its rules only):", box)
        self.walk_switches: dict[str, QCheckBox] = {}
        for name, text in _SWITCHES:
            check = QCheckBox(text, box)
            check.setObjectName(name)
            check.setChecked(bool(getattr(walk, name)))
            self.walk_switches[name] = check
        self.unwind_with_rejected_symbols = QCheckBox(
            "Unwind with symbol files rust-minidump refuses too (their names are always used)", box
        )
        self.unwind_with_rejected_symbols.setObjectName("unwindWithRejectedSymbols")
        self.unwind_with_rejected_symbols.setChecked(walk.unwind_with_rejected_symbols)
        self.walk_switches["unwind_with_rejected_symbols"] = self.unwind_with_rejected_symbols
        layout = QVBoxLayout(box)
        layout.addWidget(self.policy_rust_minidump)
        layout.addWidget(self.policy_breakpad)
        layout.addWidget(later)
        for check in self.walk_switches.values():
            layout.addWidget(check)
        # Breakpad's rules have none of these switches: it always unwinds with every file
        self.policy_rust_minidump.toggled.connect(self._policy_changed)
        self._policy_changed(self.policy_rust_minidump.isChecked())
        return box

    @Slot(bool)
    def _policy_changed(self, rust_minidump: bool) -> None:
        for check in self.walk_switches.values():
            check.setEnabled(rust_minidump)

    # ---- the result ----

    def walk_options(self) -> WalkOptions:
        policy = WalkPolicy.BREAKPAD if self.policy_breakpad.isChecked() else WalkPolicy.RUST_MINIDUMP
        switches = {name: check.isChecked() for name, check in self.walk_switches.items()}
        return WalkOptions(policy=policy, **switches)

    def preferences(self) -> SymbolPreferences:
        text = self.cache_dir.text().strip()
        return SymbolPreferences(
            paths=tuple(Path(p) for p in self.paths_model.stringList() if p),
            cache_enabled=self.cache_enabled.isChecked(),
            cache_dir=Path(text).expanduser() if text else None,
            servers=tuple(ServerEntry(u, self._tokens.get(u, "")) for u in self.servers_model.stringList()),
            offline=self.offline.isChecked(),
            download_timeout=self.download_timeout.value(),
            walk=self.walk_options(),
            source_roots=self.source_roots.roots(),
            local_modules=self.local_modules.isChecked(),
            debuginfod_urls=tuple(self.debuginfod_model.stringList()),
        )

    # ---- servers ----

    @Slot()
    def add_server_from_field(self) -> bool:
        """Add the URL typed in the field; False (and the reason shown) when it is not usable."""
        return _add_typed_url(self.server_url, self._servers, self.server_error, "a server URL")

    @Slot()
    def remove_selected_server(self) -> None:
        self._servers.remove_selected()

    def move_selected_server(self, step: int) -> None:
        self._servers.move_selected(step)

    @Slot()
    def _server_selected(self) -> None:
        selected = self._servers.selected
        self.server_token.setEnabled(selected is not None)
        self.server_token.setText(self._tokens.get(selected, "") if selected else "")
        self.server_token.setPlaceholderText(
            f"optional; else ${token_variable(selected)}" if selected else "select a server"
        )

    @Slot(str)
    def _token_edited(self, text: str) -> None:
        selected = self._servers.selected
        if selected is not None:
            self._tokens[selected] = text.strip()

    # ---- editing ----

    def add_paths(self, paths: Iterable[Path]) -> None:
        self._paths.append(str(absolute_path(p)) for p in paths)

    @Slot()
    def remove_selected(self) -> None:
        self._paths.remove_selected()

    def move_selected(self, step: int) -> None:
        self._paths.move_selected(step)

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
