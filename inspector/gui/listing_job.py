"""What the Disassembly pane computes off the GUI thread: the listing and the names in it (no Qt).

`ListingMaker.make(request)` runs on the pane's background thread (`gui/background.py`): it
reads code bytes (the dump, else the module's file, found as the crash analysis finds it:
the recorded path or by name in the symbol paths, identity checked), decodes the window,
and names branch targets and functions from the `.sym` files the walk loaded (opened again
here through the index cache, kept open for the next listing of the same dump).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from inspector.core.analysis.from_dump import module_file_finder
from inspector.core.analysis.listing import Listing, disassemble_around
from inspector.core.minidump import CpuContext, MemoryView, ModuleList
from inspector.core.symbols import IndexCache, SymbolFile, SymbolFileUnreadable
from inspector.core.types import Cpu

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ListingRequest:
    """A snapshot of what a listing needs (frozen parts of the document, safe to hand to a thread)."""

    cpu: Cpu
    address: int
    context: CpuContext | None
    memory: MemoryView
    modules: ModuleList
    symbol_files: tuple[str | None, ...]  # by module index: the .sym file the walk loaded
    function_start: int | None
    thumb: bool = False


class ListingMaker:
    """Makes listings for one document; keeps module images and symbol files open between them."""

    def __init__(self, symbol_paths: tuple[Path, ...], cache_dir: Path | None) -> None:
        self._code = module_file_finder(symbol_paths)
        # the session's cache folder (None: the user turned the index cache off, as for the walk)
        self._cache = IndexCache(cache_dir)
        self._files: dict[str, SymbolFile | None] = {}

    def close(self) -> None:
        for f in self._files.values():
            if f is not None:
                f.close()
        self._files.clear()

    def _symbol_file(self, path: str) -> SymbolFile | None:
        if path not in self._files:
            try:
                self._files[path] = SymbolFile.open(path, cache=self._cache)
            except SymbolFileUnreadable as exc:
                log.info("no names for the disassembly from %s: %s", path, exc)
                self._files[path] = None
        return self._files[path]

    def name_of(self, request: ListingRequest, address: int) -> str | None:
        """`function + 0x10` (or `module + 0x1234` without symbols), None outside every module."""
        index = request.modules.index_at(address)
        if index is None:
            return None
        module = request.modules[index]
        rva = address - module.base
        path = request.symbol_files[index] if index < len(request.symbol_files) else None
        symbols = self._symbol_file(path) if path is not None else None
        if symbols is not None:
            function = symbols.find_function(rva)
            if function is not None:
                return f"{function.name} + {rva - function.address:#x}"
            public = symbols.find_public(rva)
            if public is not None:
                return f"{public.name} + {rva - public.address:#x}"
        return f"{module.filename} + {rva:#x}"

    def make(self, request: ListingRequest) -> Listing:
        module = request.modules.module_at(request.address)
        return disassemble_around(
            cpu=request.cpu,
            address=request.address,
            context=request.context,
            memory=request.memory,
            module=module,
            providers=(self._code,),
            function_start=request.function_start,
            symbolize=lambda address: self.name_of(request, address),
            thumb=request.thumb,
        )
