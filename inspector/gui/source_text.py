"""What the Source pane reads off the GUI thread: a source file found on this machine, around a line (no Qt).

`find_source(recorded, roots)` tries the path the symbol file records (as it is, relative paths
from the working folder), then each source-root mapping of Preferences (`/build/src` →
`~/src/project` replaces that prefix; a relative recorded path is also tried under each
mapping's local folder) and says which paths it tried. `read_excerpt` reads at most
`CONTEXT` lines each side of the line (streaming: lines after the excerpt are never read, and
no more than `MAX_BYTES` of a huge file are scanned) and highlights them with Pygments (the
excerpt is lexed on its own: a construct opened above it, such as a block comment, may be
coloured as code).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass

#: Lines shown each side of the frame's line.
CONTEXT = 200
#: Most bytes scanned to reach the line (a generated file of gigabytes is not read whole).
MAX_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class Span:
    """A highlighted run of a line: column, length, colour (`#rrggbb` or ""), bold, italic."""

    column: int
    length: int
    color: str
    bold: bool = False
    italic: bool = False


@dataclass(frozen=True, slots=True)
class SourceExcerpt:
    recorded: str
    line: int
    path: str | None  # the file read; None when none was found (see `tried`, `message`)
    tried: tuple[str, ...]
    first_line: int = 1  # the number of `lines[0]`
    lines: tuple[str, ...] = ()
    spans: tuple[tuple[Span, ...], ...] = ()
    message: str | None = None


def _expand(path: str) -> str:
    return os.path.expanduser(path)


def find_source(
    recorded: str, roots: Sequence[tuple[str, str]], cwd: str | None = None
) -> tuple[str | None, list[str]]:
    """(the file found, every path tried in order)."""
    tried: list[str] = []
    base = cwd if cwd is not None else os.getcwd()
    candidates = [recorded if os.path.isabs(recorded) else os.path.join(base, recorded)]
    normal = recorded.replace("\\", "/")
    for recorded_prefix, local in roots:
        prefix = recorded_prefix.replace("\\", "/").rstrip("/")
        if prefix and (normal == prefix or normal.startswith(prefix + "/")):
            candidates.append(os.path.join(_expand(local), normal[len(prefix) :].lstrip("/")))
        elif not os.path.isabs(recorded) and not (len(normal) > 1 and normal[1] == ":"):
            candidates.append(os.path.join(_expand(local), normal))
    for candidate in dict.fromkeys(candidates):
        tried.append(candidate)
        if os.path.isfile(candidate):
            return candidate, tried
    return None, tried


def read_excerpt(
    recorded: str, line: int, roots: Sequence[tuple[str, str]], *, dark: bool = False, cwd: str | None = None
) -> SourceExcerpt:
    path, tried = find_source(recorded, roots, cwd)
    if path is None:
        return SourceExcerpt(recorded, line, None, tuple(tried), message="not found on this machine")
    first = max(1, line - CONTEXT)
    last = line + CONTEXT
    lines: list[str] = []
    scanned = 0
    try:
        with open(path, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                scanned += len(raw)
                if number >= first:
                    lines.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
                if number >= last:
                    break
                if scanned > MAX_BYTES and number < first:
                    return SourceExcerpt(
                        recorded, line, path, tuple(tried),
                        message=f"line {line} is beyond the first {MAX_BYTES >> 20} MB of the file",
                    )  # fmt: skip
    except OSError as exc:
        return SourceExcerpt(
            recorded, line, path, tuple(tried), message=f"cannot be read: {exc.strerror or exc}"
        )
    if first + len(lines) - 1 < line:
        count = first + len(lines) - 1
        return SourceExcerpt(
            recorded, line, path, tuple(tried),
            message=f"has {count} lines, not {line}: another version of the file?",
        )  # fmt: skip
    return SourceExcerpt(
        recorded, line, path, tuple(tried), first, tuple(lines), _highlight(path, lines, dark)
    )


def _highlight(path: str, lines: list[str], dark: bool) -> tuple[tuple[Span, ...], ...]:
    """Pygments' tokens of the excerpt as spans per line, coloured by a light or dark Pygments style."""
    from pygments.lexers import get_lexer_for_filename
    from pygments.styles import get_style_by_name
    from pygments.util import ClassNotFound

    try:
        lexer = get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return tuple(() for _ in lines)
    style = get_style_by_name("monokai" if dark else "default")
    out: list[list[Span]] = [[]]
    column = 0
    for token, text in lexer.get_tokens("\n".join(lines)):
        look = style.style_for_token(token)
        color = f"#{look['color']}" if look["color"] else ""
        for i, part in enumerate(text.split("\n")):
            if i:
                out.append([])
                column = 0
            if part.strip() and (color or look["bold"] or look["italic"]):
                out[-1].append(Span(column, len(part), color, bool(look["bold"]), bool(look["italic"])))
            column += len(part)
    while len(out) < len(lines):
        out.append([])
    return tuple(tuple(spans) for spans in out[: len(lines)])
