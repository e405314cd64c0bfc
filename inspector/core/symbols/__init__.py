"""Breakpad `.sym` symbol files: parser, lazy index with an on-disk cache, supplier, postfix evaluator.

Depends only on `inspector.core.{types,errors,cancel}` (never on the minidump
reader, never on Qt), and does not import numpy: only the cold index builder
(`index_build`) does, when a file has no valid cached index.

Public API (the stackwalker's entry point is `Symbolizer`):

* `Symbolizer(supplier, cancel=)` — per-process state; `lookup`, `find_cfi`,
  `find_stack_win`, `has_symbol_at`, `status`, `statuses`, `progress`
  (see `symbolizer`).
* `SymbolSupplier(paths, cache=, code_id_fallback=)` — finds a module's file
  in symbol-store directories or single `.sym` files; `locate`, `load`,
  `problems` (see `supplier`). `KeptSymbolSupplier`: the same, keeping each module's
  file open across dumps (batch triage).
* `ServerSymbolSupplier(paths, SymbolServerOptions(servers=(SymbolServer(url, token),
  …), cache_dir=…))` — a `SymbolSupplier` that goes on to a download cache and symbol
  servers; `prefetch(modules)` downloads in parallel ahead of the walk;
  `download_statuses` (see `server_supplier`, `http_fetch`, `download_cache`; urllib3 is
  imported only when a download is about to happen).
* `identity` — `match(module, candidate)`: the one rule deciding that a `.sym` file, PE,
  ELF or PDB is a module's (debug id, else code file + code id; `MatchedBy`,
  `ObjectIdentity`, `SymbolMatch`); `StoreIndex` indexes a directory's `.sym` files by
  their MODULE / INFO CODE_ID lines for modules without a debug id (see `store_index`).
* `IndexCache(directory)` / `IndexCache.default()` — where indexes are kept
  (`platformdirs.user_cache_dir("crash-inspector")/symbol-index`); `None`
  directory = no cache.
* `SymbolFile.open(path, cache=)` — one file; `find_function`, `find_public`,
  `find_line`, `find_inlines`, `symbolize`, `has_symbol_at`, `find_cfi`,
  `find_stack_win`, `damage`, `check_all` (see `symbol_file`).
* `postfix` — `evaluate_cfi`, `evaluate_win`, `win_variables`,
  `parse_cfi_rules`, `compose_cfi_rules` with step-by-step traces.
* `records` — the frozen value types all of these return.
"""

from __future__ import annotations

from inspector.core.lazy import lazy_names

# Each name is imported from its module on first use: importing one module of this package no
# longer imports all of them (start-up of a headless stackwalk; `inspector.core.lazy`). The
# symbol-server machinery (HTTP, hashing of negative answers, the download cache) is so never
# loaded by a stackwalk without servers.
__getattr__ = lazy_names(
    __name__,
    {
        "cache": (
            "IndexCache",
            "default_cache_directory",
            "default_download_directory",
        ),
        "download_cache": (
            "DownloadCache",
            "unsafe_component_reason",
        ),
        "errors": (
            "IndexCacheError",
            "SymbolFileUnreadable",
        ),
        "http_fetch": (
            "FetchPolicy",
            "SymbolServer",
            "token_from_environment",
            "token_variable",
        ),
        "identity": (
            "MatchedBy",
            "ObjectIdentity",
            "SymbolMatch",
            "match",
            "pe_code_id",
        ),
        "postfix": (
            "MemoryRead",
            "PostfixResult",
            "PostfixStep",
            "compose_cfi_rules",
            "evaluate_cfi",
            "evaluate_win",
            "parse_cfi_rules",
            "win_variables",
        ),
        "records": (
            "CfiLookup",
            "CfiRow",
            "DamagedLine",
            "DamageKind",
            "DamageReport",
            "DownloadState",
            "DownloadStatus",
            "FrameSymbol",
            "FunctionRecord",
            "InlineCall",
            "InlineFrameSymbol",
            "ModuleRecord",
            "PublicRecord",
            "RecordCounts",
            "ServerAttempt",
            "SourceLine",
            "StackWinRecord",
            "StackWinType",
            "SymbolInfo",
        ),
        "server_supplier": (
            "ServerSymbolSupplier",
            "SymbolServerOptions",
        ),
        "store_index": ("StoreIndex",),
        "supplier": (
            "KeptSymbolSupplier",
            "Located",
            "ModuleSymbols",
            "PathProblem",
            "SymbolStatus",
            "SymbolSupplier",
        ),
        "symbol_file": ("SymbolFile",),
        "symbolizer": (
            "ModuleKey",
            "Symbolizer",
            "SymbolProgress",
            "module_key",
        ),
    },
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (inspector.core.lazy)
if TYPE_CHECKING:  # the same names, for type checkers
    from inspector.core.symbols.cache import IndexCache, default_cache_directory, default_download_directory
    from inspector.core.symbols.download_cache import DownloadCache, unsafe_component_reason
    from inspector.core.symbols.errors import IndexCacheError, SymbolFileUnreadable
    from inspector.core.symbols.http_fetch import (
        FetchPolicy,
        SymbolServer,
        token_from_environment,
        token_variable,
    )
    from inspector.core.symbols.identity import MatchedBy, ObjectIdentity, SymbolMatch, match, pe_code_id
    from inspector.core.symbols.postfix import (
        MemoryRead,
        PostfixResult,
        PostfixStep,
        compose_cfi_rules,
        evaluate_cfi,
        evaluate_win,
        parse_cfi_rules,
        win_variables,
    )
    from inspector.core.symbols.records import (
        CfiLookup,
        CfiRow,
        DamagedLine,
        DamageKind,
        DamageReport,
        DownloadState,
        DownloadStatus,
        FrameSymbol,
        FunctionRecord,
        InlineCall,
        InlineFrameSymbol,
        ModuleRecord,
        PublicRecord,
        RecordCounts,
        ServerAttempt,
        SourceLine,
        StackWinRecord,
        StackWinType,
        SymbolInfo,
    )
    from inspector.core.symbols.server_supplier import ServerSymbolSupplier, SymbolServerOptions
    from inspector.core.symbols.store_index import StoreIndex
    from inspector.core.symbols.supplier import (
        KeptSymbolSupplier,
        Located,
        ModuleSymbols,
        PathProblem,
        SymbolStatus,
        SymbolSupplier,
    )
    from inspector.core.symbols.symbol_file import SymbolFile
    from inspector.core.symbols.symbolizer import ModuleKey, Symbolizer, SymbolProgress, module_key

__all__ = [
    "CfiLookup",
    "CfiRow",
    "DamageKind",
    "DamageReport",
    "DamagedLine",
    "DownloadCache",
    "DownloadState",
    "DownloadStatus",
    "FetchPolicy",
    "FrameSymbol",
    "FunctionRecord",
    "IndexCache",
    "IndexCacheError",
    "InlineCall",
    "InlineFrameSymbol",
    "KeptSymbolSupplier",
    "Located",
    "MatchedBy",
    "MemoryRead",
    "ModuleKey",
    "ModuleRecord",
    "ModuleSymbols",
    "ObjectIdentity",
    "PathProblem",
    "PostfixResult",
    "PostfixStep",
    "PublicRecord",
    "RecordCounts",
    "ServerAttempt",
    "ServerSymbolSupplier",
    "SourceLine",
    "StackWinRecord",
    "StackWinType",
    "StoreIndex",
    "SymbolFile",
    "SymbolFileUnreadable",
    "SymbolInfo",
    "SymbolMatch",
    "SymbolProgress",
    "SymbolServer",
    "SymbolServerOptions",
    "SymbolStatus",
    "SymbolSupplier",
    "Symbolizer",
    "compose_cfi_rules",
    "default_cache_directory",
    "default_download_directory",
    "evaluate_cfi",
    "evaluate_win",
    "match",
    "module_key",
    "parse_cfi_rules",
    "pe_code_id",
    "token_from_environment",
    "token_variable",
    "unsafe_component_reason",
    "win_variables",
]
