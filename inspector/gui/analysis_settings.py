"""The settings that shape an analysis, and how they reach the session.

Symbol paths (the saved ones, then this session's from the command line), the symbol index
cache folder, the symbol servers, and the walk's policy and switches: `AnalysisSettings`
reads them from `Settings`, hands them to the `Session` (`push`), saves what the user adds or
changes in Preferences, and says when the open dump has to be walked again. No widgets: the
main window shows its messages and opens the dialogs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from inspector.gui.preferences_dialog import SymbolPreferences
from inspector.gui.session import Session
from inspector.gui.settings import Settings
from inspector.gui.source_roots import load_source_roots, save_source_roots


@dataclass(frozen=True, slots=True)
class Pushed:
    """What a push changed in the session: the symbol paths, the servers or the walk's options."""

    paths: bool
    servers: bool
    walk: bool = False
    #: "Use module files on this machine" changed
    local_modules: bool = False


class AnalysisSettings:
    def __init__(
        self, settings: Settings, session: Session, session_symbol_paths: Sequence[Path] = ()
    ) -> None:
        self.settings = settings
        self.session = session
        #: symbol paths used in this session only (from the command line); searched after the saved ones
        self.session_symbol_paths = tuple(Path(p) for p in session_symbol_paths)
        #: called after each push that changed something (the crash sets triage again)
        self.listeners: list[Callable[[Pushed], None]] = []

    def effective_symbol_paths(self) -> list[Path]:
        """The saved symbol paths, then this session's (command line), each once."""
        paths: list[Path] = []
        for p in [*self.settings.symbol_paths, *self.session_symbol_paths]:
            if p not in paths:
                paths.append(p)
        return paths

    def push(self, *, reanalyze: bool = False) -> Pushed:
        """Give the session every setting an analysis uses: the paths (saved, then this session's), the
        index cache folder, the servers and the walk's options. With `reanalyze`, changed paths re-run
        the analysis of the open dump (the caller decides for the rest)."""
        s, session = self.settings, self.session
        session.cache_dir = s.effective_cache_dir()
        servers = s.symbol_server_options()
        servers_changed = servers != session.symbol_servers
        session.symbol_servers = servers
        walk = s.walk_options
        walk_changed = walk != session.walk_options
        session.walk_options = walk
        local_modules_changed = s.local_modules != session.local_modules
        session.local_modules = s.local_modules
        session.set_source_roots(load_source_roots(s.store))
        paths_changed = session.set_symbol_paths(self.effective_symbol_paths(), reanalyze=reanalyze)
        pushed = Pushed(paths_changed, servers_changed, walk_changed, local_modules_changed)
        if paths_changed or servers_changed or walk_changed or local_modules_changed:
            for listener in self.listeners:
                listener(pushed)
        return pushed

    def add_session_symbol_paths(self, paths: Iterable[Path]) -> None:
        """Also search `paths`, for this session only (not saved); the next analysis uses them."""
        self.session_symbol_paths = (*self.session_symbol_paths, *(Path(p) for p in paths))
        self.push()

    def add_symbol_paths(
        self, paths: Iterable[Path], *, reanalyze: bool = True
    ) -> tuple[list[Path], str | None]:
        """Save these symbol paths (folders or .sym files) and (by default) re-run the analysis;
        returns those added and a sentence for the status bar."""
        given = list(paths)
        added = self.settings.add_symbol_paths(given)
        self.settings.sync()
        if added:
            names = ", ".join(str(p) for p in added)
            again = reanalyze and self.session.document is not None
            self.push(reanalyze=reanalyze)
            return added, f"Added symbol path {names}" + ("; analysing again" if again else "")
        if given:
            names = ", ".join(str(p) for p in given)
            return added, f"{names} {'is' if len(given) == 1 else 'are'} already a symbol path"
        return added, None

    def preferences(self) -> SymbolPreferences:
        """What the Preferences dialog starts from."""
        s = self.settings
        return SymbolPreferences(
            tuple(s.symbol_paths),
            s.symbol_cache_enabled,
            s.symbol_cache_dir,
            tuple(s.symbol_servers),
            s.symbols_offline,
            s.download_timeout,
            s.walk_options,
            load_source_roots(s.store),
            s.local_modules,
            tuple(s.debuginfod_urls()),
        )

    def session_only_paths(self) -> list[Path]:
        """This session's symbol paths that are not saved ones (the dialog lists them apart)."""
        return [p for p in self.session_symbol_paths if p not in self.settings.symbol_paths]

    def apply(self, prefs: SymbolPreferences) -> str | None:
        """Save the dialog's result and walk the open dump again if it changes the analysis; a sentence
        for the status bar when it does."""
        s = self.settings
        s.symbol_paths = list(prefs.paths)
        s.symbol_cache_enabled = prefs.cache_enabled
        s.symbol_cache_dir = prefs.cache_dir
        s.symbol_servers = prefs.servers
        s.symbols_offline = prefs.offline
        s.download_timeout = prefs.download_timeout
        s.walk_options = prefs.walk
        s.local_modules = prefs.local_modules
        if list(prefs.debuginfod_urls) != s.debuginfod_urls():  # else keep following DEBUGINFOD_URLS
            s.set_debuginfod_urls(prefs.debuginfod_urls)
        save_source_roots(s.store, prefs.source_roots)
        s.sync()
        pushed = self.push(reanalyze=True)
        if pushed.paths:
            return "Symbol paths changed; analysing again"
        if pushed.servers and self.session.reanalyze() is not None:
            return "Symbol servers changed; analysing again"
        if pushed.walk and self.session.reanalyze() is not None:
            return "Stack walk options changed; walking again"
        if pushed.local_modules and self.session.reanalyze() is not None:
            used = "used" if prefs.local_modules else "not used"
            return f"Module files on this machine {used}; walking again"
        return None
