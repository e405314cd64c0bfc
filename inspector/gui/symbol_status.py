"""How the Modules pane words a module's symbols: the core's `ModuleSymbolSummary`, read for people.

The core says what became of a lookup (loaded, damaged, not found, ...) and of a download.
What the pane adds depends on the analysis: a module whose symbols were never looked up is
`pending` while the walk runs, `not needed` once it has ended, `not loaded` if it was
stopped, and `missing` when no symbol paths or servers were given at all.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from inspector.core.process import ModuleSymbolSummary, SymbolState
from inspector.core.symbols import DownloadState, DownloadStatus, MatchedBy, SymbolMatch
from inspector.gui.document import AnalysisStatus, Document


class _Shown(enum.Enum):
    PENDING = "pending"
    LOADED = "loaded"
    DAMAGED = "damaged"
    MISSING = "missing"
    NO_IDENTIFIER = "no identifier"
    UNREADABLE = "unreadable"
    NOT_LOADED = "not loaded"
    NOT_NEEDED = "not needed"


_LOOKED_UP = {
    SymbolState.LOADED: _Shown.LOADED,
    SymbolState.DAMAGED: _Shown.DAMAGED,
    SymbolState.MISSING: _Shown.MISSING,
    SymbolState.NO_IDENTIFIER: _Shown.NO_IDENTIFIER,
    SymbolState.UNREADABLE: _Shown.UNREADABLE,
}
_LACKING = frozenset({_Shown.MISSING, _Shown.NO_IDENTIFIER, _Shown.UNREADABLE})
#: downloads that end without a file: the Symbols column says why rather than just "missing"
_DOWNLOAD_FAILURES = frozenset(
    {DownloadState.NOT_ON_SERVER, DownloadState.FAILED, DownloadState.OFFLINE, DownloadState.CANCELLED}
)
_NOT_LOOKED_UP = {
    _Shown.NOT_NEEDED: "No frame is in this module, so the stackwalker did not look its symbols up.",
    _Shown.NOT_LOADED: "The analysis stopped before this module's symbols were looked for.",
}


class SymbolTone(enum.Enum):
    """How the status reads: its meaning (the theme picks the colour)."""

    GOOD = "good"
    WARNING = "warning"
    BAD = "bad"
    MUTED = "muted"


@dataclass(frozen=True, slots=True)
class SymbolStatusText:
    """The Symbols column of one module: its text, a tooltip, its tone, whether symbols are lacking,
    and the Matched by column (`debug id`, `code id`, `not matched` or '')."""

    text: str
    details: str
    tone: SymbolTone
    lacking: bool
    matched: str = ""


def symbol_status(summary: ModuleSymbolSummary, document: Document) -> SymbolStatusText:
    shown, download = _shown(summary, document)
    text = _text(shown, summary, download)
    tone = (
        SymbolTone.GOOD
        if shown is _Shown.LOADED
        else SymbolTone.WARNING
        if shown is _Shown.DAMAGED
        else SymbolTone.BAD
        if shown in _LACKING
        else SymbolTone.MUTED
    )
    lacking = shown in _LACKING
    matched = summary.match.by.value if summary.match is not None else "not matched" if lacking else ""
    return SymbolStatusText(text, _details(shown, summary, download), tone, lacking, matched)


def _shown(summary: ModuleSymbolSummary, document: Document) -> tuple[_Shown, DownloadStatus | None]:
    download = summary.download
    if summary.requested:
        return _LOOKED_UP[summary.state], download
    if not document.state.symbols_searched:
        return _Shown.MISSING, None
    status = document.status
    if status is AnalysisStatus.RUNNING:
        return _Shown.PENDING, download
    if status is AnalysisStatus.FINISHED:
        return _Shown.NOT_NEEDED, download
    # stopped: a prefetch that had ended still says what came of it; one still running was stopped
    return _Shown.NOT_LOADED, download if download is not None and download.state.settled else None


def _plain(shown: _Shown, summary: ModuleSymbolSummary) -> str:
    if shown is _Shown.DAMAGED:
        lines = summary.damage.total if summary.damage is not None else 0
        return f"damaged ({lines} {'line' if lines == 1 else 'lines'})"
    if shown is _Shown.UNREADABLE and summary.error:
        return f"unreadable: {summary.error}"
    if shown is _Shown.LOADED and summary.objects and summary.source:
        return f"loaded: {summary.source}"  # made from binaries / debug files, not a .sym
    return shown.value


def _text(shown: _Shown, summary: ModuleSymbolSummary, download: DownloadStatus | None) -> str:
    """`loaded`, `missing`, `damaged (3 lines)`, `unreadable: …`, and with servers `queued for
    download`, `downloading (40 %)`, `loaded, downloaded from URL`, `loaded from the download cache`,
    `not on server`, `failed: …`, `not needed, …`."""
    if download is None:
        return _plain(shown, summary)
    if shown is _Shown.PENDING or not download.state.settled:
        return download.text
    if shown in (_Shown.NOT_NEEDED, _Shown.NOT_LOADED):
        return f"{shown.value}, {_short_download_text(download)}"
    if download.state in _DOWNLOAD_FAILURES and shown is _Shown.MISSING:
        return download.text
    if shown in (_Shown.LOADED, _Shown.DAMAGED):
        if download.state is DownloadState.DOWNLOADED:
            return f"{_plain(shown, summary)}, {_short_download_text(download)}"
        if download.state is DownloadState.CACHED:
            return f"{_plain(shown, summary)} from the download cache"
    return _plain(shown, summary)


def _details(shown: _Shown, summary: ModuleSymbolSummary, download: DownloadStatus | None) -> str:
    """A few lines for a tooltip: where the file is, or everywhere it was looked for."""
    lines: list[str] = []
    tried = summary.tried
    if shown in (_Shown.LOADED, _Shown.DAMAGED) and summary.path is not None:
        lines.append(f"Loaded from {summary.path}")
        if summary.found_by:
            lines.append(f"(found by {summary.found_by})")
        if summary.match is not None:
            lines.append(_match_text(summary.match))
        if summary.objects:
            lines.append(f"Symbols: {summary.source or 'from binaries and debug files'}, made from:")
            lines.extend(f"  {p}" for p in summary.objects)
        if summary.cfi_sources:
            lines.append(f"CFI from: {', '.join(summary.cfi_sources)}")
        # a local file's `INFO URL` line is not a download: name a URL only for the servers' files
        if summary.symbol_url and download is not None:
            lines.append(f"Downloaded from {summary.symbol_url}")
        if summary.damage is not None and summary.damage.damaged:
            lines.append(summary.damage.summary())
    elif shown in _NOT_LOOKED_UP and download is not None:
        lines.append(_NOT_LOOKED_UP[shown])
        lines.append("A register or stack word points into it, so it was fetched ahead of the walk:")
        lines.append(f"  {download.text}")
        lines.extend(_requests(download))
    elif download is not None and shown in (_Shown.PENDING, _Shown.MISSING):
        lines.append(download.text[:1].upper() + download.text[1:])
        lines.extend(_requests(download))
        if shown is _Shown.MISSING and tried:
            lines.append("Paths tried:")
            lines.extend(f"  {p}" for p in tried if "://" not in p)
    elif shown is _Shown.MISSING:
        lines.append("No symbol file found. Paths tried:" if tried else "No symbol paths are set.")
        lines.extend(f"  {p}" for p in tried)
    if shown is _Shown.MISSING and summary.help:
        lines.append(f"What would help: {summary.help}")
    elif shown is _Shown.NO_IDENTIFIER:
        lines.append("The module record has no debug id and no code id to look symbols up by.")
    elif shown is _Shown.UNREADABLE:
        lines.append(f"{summary.path}: {summary.error or 'cannot be read'}")
    elif shown in _NOT_LOOKED_UP:
        lines.append(_NOT_LOOKED_UP[shown])
    else:
        lines.append(f"Symbols {shown.value}")
    return "\n".join(lines)


def _match_text(match: SymbolMatch) -> str:
    """One tooltip line: how the file was matched, and by what identity."""
    file = match.file
    if match.by is MatchedBy.CODE_ID:
        return f"Matched by code file and code id ({file.code_file} {file.code_id}): no debug id in the dump"
    return f"Matched by debug id ({file.debug_file} {file.debug_id})"


def _requests(download: DownloadStatus) -> list[str]:
    if not download.attempts:
        return []
    return [
        "Requests:",
        *(f"  {a.url}: {a.outcome}{f' ({a.reason})' if a.reason else ''}" for a in download.attempts),
    ]


def _short_download_text(download: DownloadStatus) -> str:
    """`downloaded from URL` without the URL's query: it repeats the module's code file and id
    (the tooltip has the whole URL)."""
    if download.state is DownloadState.DOWNLOADED and download.url:
        return f"downloaded from {download.url.partition('?')[0]}"
    return download.text


def symbol_file_text(summary: ModuleSymbolSummary) -> str:
    """The Symbol file column: the file used, or where it was looked for."""
    if summary.path is not None:
        return summary.path
    if summary.state is SymbolState.MISSING and summary.tried:
        more = f" (and {len(summary.tried) - 1} more)" if len(summary.tried) > 1 else ""
        return f"tried {summary.tried[0]}{more}"
    return ""
