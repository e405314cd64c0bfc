"""What to process a dump with: symbol paths, the index cache, symbol servers, the walk's options."""

from __future__ import annotations

import os

from inspector.core.record import Record, field
from inspector.core.symbols import IndexCache
from inspector.core.unwind import WalkOptions, WalkPolicy

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:
    from inspector.core.analysis import CodeBytesProvider
    from inspector.core.symbols.server_supplier import SymbolServerOptions


class ProcessOptions(Record):
    """What to process a dump with.

    `symbols_cache`: the index cache directory (None: the user cache directory);
    `use_symbols_cache=False` keeps no cache. `code_id_fallback`: also look symbols up by
    code id for modules that have a debug id (rust-minidump does that only with a symbol
    server, so it is off by default; modules without a debug id are always looked up by code id).
    `symbol_servers`: servers to download missing symbol files from, into a download
    cache searched after the symbol paths (None or no servers and no cache: none).
    `microdump_policy`: the walk policy for microdumps, which only Breakpad reads (None:
    `walk.policy`, as for minidumps).
    """

    symbol_paths: tuple[str | os.PathLike[str], ...] = ()
    symbols_cache: str | os.PathLike[str] | None = None
    use_symbols_cache: bool = True
    code_id_fallback: bool = False
    walk: WalkOptions = field(default_factory=WalkOptions)
    symbol_servers: SymbolServerOptions | None = None
    #: where the crash analysis reads code the dump lacks (None: module files at their recorded
    #: path or by name in the symbol paths, identity checked; () reads none)
    code_providers: tuple[CodeBytesProvider, ...] | None = None
    microdump_policy: WalkPolicy | None = WalkPolicy.BREAKPAD
    #: use the modules' own files on this machine (and /usr/lib/debug) when their identity matches
    local_modules: bool = True

    @property
    def uses_servers(self) -> bool:
        return self.symbol_servers is not None and self.symbol_servers.enabled

    def index_cache(self) -> IndexCache:
        if not self.use_symbols_cache:
            return IndexCache(None)
        if self.symbols_cache is not None:
            return IndexCache(self.symbols_cache)
        return IndexCache.default()
