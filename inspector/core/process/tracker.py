"""The symbolizer's and the downloads' states, turned into `SymbolsLoaded` and `Progress` events."""

from __future__ import annotations

from inspector.core.process.events import ProcessEvent, Progress, SymbolsLoaded
from inspector.core.process.state import NOT_REQUESTED, ModuleSymbolSummary, ProcessState
from inspector.core.record import replace
from inspector.core.symbols import DownloadState, DownloadStatus, Symbolizer, module_key

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from inspector.core.symbols.server_supplier import ServerSymbolSupplier


class SymbolTracker:
    """Turns the symbolizer's and the downloads' states into `SymbolsLoaded` / `Progress` events."""

    def __init__(
        self,
        state: ProcessState,
        symbolizer: Symbolizer | None,
        supplier: ServerSymbolSupplier | None,
        *,
        searched: bool = True,
    ) -> None:
        self.symbolizer = symbolizer
        self.supplier = supplier
        #: symbol paths or servers were given; without them only what loaded counts as requested
        self.searched = searched
        self.key_of = {entry.index: module_key(entry.module) for entry in state.modules}
        self.key_to_index: dict[tuple[str, str, str, str], list[int]] = {}
        for index, key in self.key_of.items():
            self.key_to_index.setdefault(key, []).append(index)
        self.requested: dict[int, ModuleSymbolSummary] = {}
        self.shown: dict[int, ModuleSymbolSummary] = {}
        self.downloads: dict[tuple[str, str, str, str], DownloadStatus] = {}
        self.seen_loaded = 0
        self.seen_downloads = -1
        self.threads_walked = 0
        self.threads_total = len(state.threads)

    def summary(self, index: int) -> ModuleSymbolSummary:
        """The module's final summary: what the walk asked for, with its latest download."""
        return self.shown.get(index, NOT_REQUESTED)

    def changes(self) -> tuple[ProcessEvent, ...]:
        """Events for what changed since the last call (asked after every frame: at once when nothing did)."""
        symbolizer, supplier = self.symbolizer, self.supplier
        if (symbolizer is None or symbolizer.loads_finished == self.seen_loaded) and (
            supplier is None or supplier.download_version == self.seen_downloads
        ):
            return ()
        events: list[ProcessEvent] = []  # SymbolsLoaded and Progress
        changed: set[int] = set()
        if symbolizer is not None:
            loaded = symbolizer.loads_finished
            if loaded != self.seen_loaded:
                self.seen_loaded = loaded
                for key, symbols in symbolizer.statuses().items():
                    for index in self.key_to_index.get(key, ()):
                        if index not in self.requested:
                            summary = ModuleSymbolSummary.of(symbols)
                            if not self.searched and not summary.loaded:
                                continue  # only this machine's files were looked at: not "missing"
                            self.requested[index] = summary
                            changed.add(index)
        if self.supplier is not None and self.supplier.download_version != self.seen_downloads:
            version, statuses = self.supplier.download_statuses()
            if version != self.seen_downloads:
                self.seen_downloads = version
                for key, status in statuses.items():
                    if self.downloads.get(key) != status:
                        self.downloads[key] = status
                        changed.update(self.key_to_index.get(key, ()))
                for key in self.downloads.keys() - statuses.keys():  # dropped prefetches
                    del self.downloads[key]
                    changed.update(self.key_to_index.get(key, ()))
        for index in sorted(changed):
            summary = self.requested.get(index, NOT_REQUESTED)
            download = self.downloads.get(self.key_of[index])
            if download is not None and (summary.download is None or not summary.requested):
                summary = replace(summary, download=download)
            if self.shown.get(index) != summary:
                self.shown[index] = summary
                events.append(SymbolsLoaded(index, summary))
        if changed and self.supplier is not None:
            events.append(self.progress())
        return tuple(events)

    def thread_walked(self) -> Progress:
        """A thread's walk is over: the progress event that says so."""
        self.threads_walked += 1
        return self.progress()

    def progress(self) -> Progress:
        requested = loaded = 0
        if self.symbolizer is not None:
            p = self.symbolizer.progress
            requested, loaded = p.requested, p.loaded
        active = done = failed = 0
        for status in self.downloads.values():
            if not status.state.settled:
                active += 1
            elif status.state in (DownloadState.DOWNLOADED, DownloadState.NOT_ON_SERVER):
                done += 1
            elif status.state is DownloadState.FAILED:
                done += 1
                failed += 1
        return Progress(requested, loaded, self.threads_walked, self.threads_total, active, done, failed)
