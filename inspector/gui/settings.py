"""Typed access to the persisted settings, over an injected `QSettings`.

`app.py` decides which `QSettings` (the user's, or an INI file given with
`--settings`; tests use an INI in a temporary directory); nothing else
creates one. Keys live here and nowhere else.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from inspector.core.symbols import (
    FetchPolicy,
    SymbolServer,
    SymbolServerOptions,
    default_cache_directory,
    default_download_directory,
    token_from_environment,
)
from inspector.core.unwind import WalkOptions, WalkPolicy

#: Bump when the docks change (added, removed, renamed), so an old saved layout is not restored.
STATE_VERSION = 3  # 2: Frames, Unwind and Stack Layout docks; 3: Disassembly and Source
MAX_RECENT_FILES = 10
WORDS_PER_ROW_CHOICES = (1, 2, 4)

_GEOMETRY = "window/geometry"
_STATE = "window/state"
_RECENT = "files/recent"
_LAST_DIRECTORY = "files/last_directory"
_SYMBOL_PATHS = "symbols/paths"
_CACHE_ENABLED = "symbols/cache_enabled"
_CACHE_DIR = "symbols/cache_dir"
_WORDS_PER_ROW = "memory/words_per_row"
_SERVERS = "symbols/servers"
_OFFLINE = "symbols/offline"
_DOWNLOAD_TIMEOUT = "symbols/download_timeout"
_LOCAL_MODULES = "symbols/local_modules"
_DEBUGINFOD = "symbols/debuginfod_urls"
DEFAULT_DOWNLOAD_TIMEOUT = 1000.0
_COLOR_SCHEME = "appearance/color_scheme"
#: what View › Dark Mode saved: "system" (follow the desktop), "light" or "dark"
COLOR_SCHEMES = ("system", "light", "dark")
_WALK_POLICY = "walk/policy"
#: the walk's switches (`WalkOptions` fields of the same names), each under `walk/<name>`
WALK_SWITCHES = (
    "extended_scan_after_cfi",
    "windows_frame_pointer_probe",
    "arm64_lr_recovery",
    "unwind_with_rejected_symbols",
)


@dataclass(frozen=True, slots=True)
class ServerEntry:
    """A symbol server as the settings keep it: URL and bearer token ('' = none; never in reprs)."""

    url: str
    token: str = field(default="", repr=False)


class Settings:
    def __init__(self, store: QSettings) -> None:
        self.store = store

    # ---- helpers: lists are stored as JSON text (the same on every backend and in INI files) ----

    def _paths(self, key: str) -> list[Path]:
        raw = self.store.value(key, "")
        if isinstance(raw, list):  # written by an older version or by hand as a list
            items: object = raw
        else:
            try:
                items = json.loads(str(raw)) if raw else []
            except ValueError:
                items = []
        if not isinstance(items, list):
            return []
        return [Path(p) for p in items if isinstance(p, str) and p]

    def _set_paths(self, key: str, paths: Iterable[Path]) -> None:
        self.store.setValue(key, json.dumps([str(p) for p in paths]))

    def _bytes(self, key: str) -> QByteArray | None:
        value = self.store.value(key)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def sync(self) -> None:
        self.store.sync()

    # ---- window layout ----

    @property
    def window_geometry(self) -> QByteArray | None:
        return self._bytes(_GEOMETRY)

    @window_geometry.setter
    def window_geometry(self, value: QByteArray) -> None:
        self.store.setValue(_GEOMETRY, value)

    @property
    def window_state(self) -> QByteArray | None:
        """The dock layout from `QMainWindow.saveState(STATE_VERSION)`."""
        return self._bytes(_STATE)

    @window_state.setter
    def window_state(self, value: QByteArray) -> None:
        self.store.setValue(_STATE, value)

    # ---- files ----

    @property
    def recent_files(self) -> list[Path]:
        return self._paths(_RECENT)[:MAX_RECENT_FILES]

    def add_recent_file(self, path: Path) -> None:
        """Put `path` first in the recent files (once), keeping at most `MAX_RECENT_FILES`."""
        path = absolute_path(path)
        files = [path, *(p for p in self.recent_files if p != path)]
        self._set_paths(_RECENT, files[:MAX_RECENT_FILES])

    def clear_recent_files(self) -> None:
        self._set_paths(_RECENT, [])

    @property
    def last_directory(self) -> Path | None:
        value = self.store.value(_LAST_DIRECTORY, "")
        return Path(str(value)) if value else None

    @last_directory.setter
    def last_directory(self, path: Path) -> None:
        self.store.setValue(_LAST_DIRECTORY, str(path))

    # ---- symbols ----

    @property
    def symbol_paths(self) -> list[Path]:
        """Symbol folders and single `.sym` files, searched in this order."""
        return self._paths(_SYMBOL_PATHS)

    @symbol_paths.setter
    def symbol_paths(self, paths: Iterable[Path]) -> None:
        unique: list[Path] = []
        for path in map(absolute_path, paths):
            if path not in unique:
                unique.append(path)
        self._set_paths(_SYMBOL_PATHS, unique)

    def add_symbol_paths(self, paths: Iterable[Path]) -> list[Path]:
        """Append paths not already present; returns those that were added."""
        current = self.symbol_paths
        added = [p for p in dict.fromkeys(absolute_path(p) for p in paths) if p not in current]
        if added:
            self.symbol_paths = [*current, *added]
        return added

    @property
    def symbol_cache_enabled(self) -> bool:
        return _bool(self.store.value(_CACHE_ENABLED, True))

    @symbol_cache_enabled.setter
    def symbol_cache_enabled(self, enabled: bool) -> None:
        self.store.setValue(_CACHE_ENABLED, bool(enabled))

    @property
    def symbol_cache_dir(self) -> Path | None:
        """The folder chosen for symbol indexes; None means the default (`default_cache_directory()`)."""
        value = self.store.value(_CACHE_DIR, "")
        return Path(str(value)) if value else None

    @symbol_cache_dir.setter
    def symbol_cache_dir(self, path: Path | None) -> None:
        self.store.setValue(_CACHE_DIR, "" if path is None else str(path))

    def effective_cache_dir(self) -> Path | None:
        """Where symbol indexes go, or None when caching is off."""
        if not self.symbol_cache_enabled:
            return None
        return self.symbol_cache_dir or default_cache_directory()

    # ---- symbol servers ----

    @property
    def symbol_servers(self) -> list[ServerEntry]:
        """Servers in the order they are asked; tokens are stored in the settings as typed."""
        raw = self.store.value(_SERVERS, "")
        try:
            items = json.loads(str(raw)) if raw else []
        except ValueError:
            return []
        out = []
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(item.get("url"), str) and item["url"].strip():
                token = item.get("token")
                out.append(ServerEntry(item["url"].strip(), token if isinstance(token, str) else ""))
        return out

    @symbol_servers.setter
    def symbol_servers(self, servers: Iterable[ServerEntry]) -> None:
        unique: dict[str, ServerEntry] = {}
        for server in servers:
            url = server.url.strip()
            if url and url not in unique:
                unique[url] = ServerEntry(url, server.token.strip())
        self.store.setValue(_SERVERS, json.dumps([{"url": s.url, "token": s.token} for s in unique.values()]))

    @property
    def symbols_offline(self) -> bool:
        return _bool(self.store.value(_OFFLINE, False))

    @symbols_offline.setter
    def symbols_offline(self, offline: bool) -> None:
        self.store.setValue(_OFFLINE, bool(offline))

    @property
    def download_timeout(self) -> float:
        try:
            value = float(str(self.store.value(_DOWNLOAD_TIMEOUT, DEFAULT_DOWNLOAD_TIMEOUT)))
        except ValueError:
            return DEFAULT_DOWNLOAD_TIMEOUT
        return value if 0 < value < 1e6 else DEFAULT_DOWNLOAD_TIMEOUT

    @download_timeout.setter
    def download_timeout(self, seconds: float) -> None:
        self.store.setValue(_DOWNLOAD_TIMEOUT, float(seconds))

    @property
    def local_modules(self) -> bool:
        """Use the modules' own files on this machine (and /usr/lib/debug) when their identity matches."""
        return _bool(self.store.value(_LOCAL_MODULES, True))

    @local_modules.setter
    def local_modules(self, enabled: bool) -> None:
        self.store.setValue(_LOCAL_MODULES, bool(enabled))

    def debuginfod_urls(self, environ: Mapping[str, str] = os.environ) -> list[str]:
        """debuginfod servers in the order they are asked; until the user edits the list, those of
        `DEBUGINFOD_URLS` (space-separated, as elfutils reads it)."""
        raw = self.store.value(_DEBUGINFOD)
        if raw is None:
            return list(dict.fromkeys(environ.get("DEBUGINFOD_URLS", "").split()))
        try:
            items = json.loads(str(raw)) if raw else []
        except ValueError:
            return []
        if not isinstance(items, list):
            return []
        return list(dict.fromkeys(u.strip() for u in items if isinstance(u, str) and u.strip()))

    def set_debuginfod_urls(self, urls: Iterable[str]) -> None:
        """Keep this list (an empty one too: it then no longer follows `DEBUGINFOD_URLS`)."""
        unique = dict.fromkeys(u.strip() for u in urls if u.strip())
        self.store.setValue(_DEBUGINFOD, json.dumps(list(unique)))

    def symbol_server_options(self, environ: Mapping[str, str] = os.environ) -> SymbolServerOptions | None:
        """What the analysis needs to use the servers (None when there are none and not offline).

        A server without a token in the settings uses `CRASH_INSPECTOR_TOKEN_<HOST>[_<PORT>]`.
        Downloads are kept in the user cache folder, or only for one run when caching is off.
        debuginfod servers are asked after the symbol servers, as `--debuginfod-url` does.
        """
        servers = self.symbol_servers
        offline = self.symbols_offline
        debuginfod = self.debuginfod_urls(environ)
        if not servers and not debuginfod and not offline:
            return None
        return SymbolServerOptions(
            servers=tuple(
                SymbolServer(s.url, s.token or token_from_environment(s.url, environ)) for s in servers
            ),
            debuginfod=tuple(SymbolServer(url, token_from_environment(url, environ)) for url in debuginfod),
            cache_dir=default_download_directory() if self.symbol_cache_enabled else None,
            offline=offline,
            fetch=FetchPolicy(total_timeout=self.download_timeout),
        )

    # ---- the walk ----

    @property
    def walk_options(self) -> WalkOptions:
        """The walk's policy and switches (the defaults: rust-minidump 0.25's walk, as `stackwalk`)."""
        defaults = WalkOptions()
        try:
            policy = WalkPolicy(str(self.store.value(_WALK_POLICY, defaults.policy.value)))
        except ValueError:
            policy = defaults.policy
        switches = {
            name: _bool(self.store.value(f"walk/{name}", getattr(defaults, name))) for name in WALK_SWITCHES
        }
        return WalkOptions(policy=policy, **switches)

    @walk_options.setter
    def walk_options(self, options: WalkOptions) -> None:
        self.store.setValue(_WALK_POLICY, options.policy.value)
        for name in WALK_SWITCHES:
            self.store.setValue(f"walk/{name}", bool(getattr(options, name)))

    # ---- appearance ----

    @property
    def color_scheme(self) -> str:
        value = str(self.store.value(_COLOR_SCHEME, "system"))
        return value if value in COLOR_SCHEMES else "system"

    @color_scheme.setter
    def color_scheme(self, value: str) -> None:
        self.store.setValue(_COLOR_SCHEME, value if value in COLOR_SCHEMES else "system")

    # ---- memory pane ----

    @property
    def words_per_row(self) -> int:
        try:
            value = int(str(self.store.value(_WORDS_PER_ROW, 1)))
        except ValueError:
            return 1
        return value if value in WORDS_PER_ROW_CHOICES else 1

    @words_per_row.setter
    def words_per_row(self, value: int) -> None:
        self.store.setValue(_WORDS_PER_ROW, int(value))


def absolute_path(path: Path) -> Path:
    """`path` with `~` expanded, made absolute (not resolved: links stay as the user named them)."""
    return Path(path).expanduser().absolute()


def _bool(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)
