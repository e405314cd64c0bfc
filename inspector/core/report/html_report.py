"""A self-contained HTML report of a processed dump: one file to attach to a bug, no external assets.

It says what the human report says, laid out for reading in a browser: the damage first when
the dump is damaged (`inspector.core.process.damage`), the crash and the system, the crash
analysis, every thread's frames (numbered as the human report numbers them, inline frames in
their place) with the top frame's registers, the modules with their symbol status, and the
problems. Styles are inline (light and dark, following the reader's setting); there is no
script. Every text from the dump or the symbols is escaped.
"""

from __future__ import annotations

import datetime
from html import escape
from pathlib import PurePath

from inspector import __version__
from inspector.core.minidump import basename
from inspector.core.process import ProcessState
from inspector.core.process.damage import dump_damage
from inspector.core.report.analysis_text import human_lines, shown_analysis
from inspector.core.report.frame_text import frame_label, register_lines
from inspector.core.types import format_address
from inspector.core.unwind import INLINE_DESCRIPTION, CallStackInfo, StackFrame

_STYLE = """
:root { color-scheme: light dark; --fg: #1d1d1f; --bg: #ffffff; --muted: #6e6e73; --line: #d2d2d7;
  --crash: #c62828; --ok: #2e7d32; --band: #f5f5f7; --warn-bg: #fdecea; }
@media (prefers-color-scheme: dark) { :root { --fg: #e8e8ed; --bg: #1c1c1e; --muted: #a1a1a6;
  --line: #3a3a3c; --crash: #ff6b6b; --ok: #66bb6a; --band: #2c2c2e; --warn-bg: #3b1f1f; } }
body { font: 14px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg);
  margin: 1.5em auto; max-width: 80em; padding: 0 1em; }
h1 { font-size: 1.5em; margin: 0 0 .2em; } h1.crash { color: var(--crash); }
h2 { font-size: 1.15em; margin: 1.6em 0 .4em; border-bottom: 1px solid var(--line); }
.muted { color: var(--muted); } .ok { color: var(--ok); } .bad { color: var(--crash); }
.damage { border: 1px solid var(--crash); background: var(--warn-bg); padding: .5em .8em;
  border-radius: 4px; margin: .8em 0; } .damage b { color: var(--crash); }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .15em .6em; vertical-align: top; }
th { border-bottom: 1px solid var(--line); font-weight: 600; }
tbody tr:nth-child(even) { background: var(--band); }
table.facts th { border: 0; width: 10em; color: var(--muted); font-weight: normal; }
code, pre, td.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  font-size: .93em; }
td.fn { word-break: break-all; } td.num { text-align: right; width: 3em; }
pre { background: var(--band); padding: .5em .8em; overflow-x: auto; }
details > summary { cursor: pointer; font-weight: 600; margin: .6em 0 .3em; }
tr.inline td { color: var(--muted); }
footer { margin-top: 2em; color: var(--muted); font-size: .9em; }
"""


def render_html(state: ProcessState, *, title: str | None = None) -> str:
    """The report as one HTML document (a string)."""
    name = title or (PurePath(state.path).name if state.path else "minidump")
    width = state.pointer_width
    damage = dump_damage(state)
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(name)} — Crash Inspector report</title>",
        f"<style>{_STYLE}</style></head><body>",
    ]
    headline, crashed = _headline(state, damage.headline())
    out.append(f'<h1 class="{"crash" if crashed else ""}">{escape(headline)}</h1>')
    out.append(f'<div class="muted">{escape(name)} · {state.dump_size:,} bytes{_written(state)}</div>')
    if damage.damaged:
        first, *rest = damage.sentences()
        out.append(
            f'<div class="damage"><b>⚠ {escape(first)}</b> {escape(" ".join([*rest, damage.count_text()]))}'
            "</div>"
        )
    _facts(state, out)
    if state.crash is not None:
        analysis = shown_analysis(state.analysis, all_cpus=True)
        lines = human_lines(
            analysis, format_address(state.crash.address, width), lambda v: format_address(v, width)
        )
        if lines:
            out.append("<h2>Crash analysis</h2>")
            out.append(f"<pre>{escape(chr(10).join(lines))}</pre>")
    out.append("<h2>Threads</h2>")
    for index in _thread_order(state):
        _thread(state, index, out)
    _modules(state, out)
    _problems(state, out)
    out.append(f"<footer>Crash Inspector {escape(__version__)}</footer>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _headline(state: ProcessState, hidden_by_damage: str | None) -> tuple[str, bool]:
    crash = state.crash
    if crash is not None:
        reason = crash.reason or "Crash (no reason recorded)"
        return f"{reason} at {format_address(crash.address, state.pointer_width)}", True
    if hidden_by_damage is not None:
        return hidden_by_damage, True
    return "No exception recorded: the dump was written on request", False


def _written(state: ProcessState) -> str:
    if not state.dump_time:
        return ""
    when = datetime.datetime.fromtimestamp(state.dump_time, tz=datetime.UTC)
    return f" · written {when:%Y-%m-%d %H:%M:%S} UTC"


def _facts(state: ProcessState, out: list[str]) -> None:
    system = state.system
    rows: list[tuple[str, str]] = []
    crashing = state.crashing_thread
    if crashing is not None:
        status = "" if state.crashed else " (requested the dump)"
        rows.append(
            (
                "Crashing thread",
                f"{crashing.thread_index} {crashing.thread_name or ''} · tid {crashing.thread_id}{status}",
            )
        )
    os_text = f"{system.os_name} {system.os_version or ''}".strip()
    rows.append(("OS", os_text))
    cpu = " · ".join(p for p in (system.cpu_arch, system.cpu_info, f"{system.cpu_count} CPUs") if p)
    rows.append(("CPU", cpu))
    if state.process_id is not None:
        rows.append(("Process", f"pid {state.process_id}"))
    if state.process_uptime is not None:
        rows.append(("Uptime", f"{state.process_uptime} s when the dump was written"))
    if state.assertion:
        rows.append(("Assertion", state.assertion))
    rows.append(("Symbols", _symbols_fact(state)))
    out.append('<table class="facts">')
    out.extend(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
    out.append("</table>")


def _symbols_fact(state: ProcessState) -> str:
    with_frames = {f.module_index for t in state.threads for f in t.frames if f.module_index is not None}
    lacking = sorted(
        state.modules[i].module.filename
        for i in with_frames
        if not state.symbols_searched or state.modules[i].symbols.missing
    )
    if not state.symbols_searched:
        return f"no symbol paths were given: {len(lacking)} modules with frames have no symbols"
    if lacking:
        return f"{len(lacking)} of {len(with_frames)} modules with frames lack symbols: {', '.join(lacking)}"
    return f"all {len(with_frames)} modules with frames have symbols"


def _thread_order(state: ProcessState) -> list[int]:
    """The crashing (or requesting) thread first, then the others in dump order, as the human report."""
    first = state.requesting_thread
    rest = [
        i
        for i, stack in enumerate(state.threads)
        if i != first and stack.info is not CallStackInfo.DUMP_THREAD_SKIPPED
    ]
    return ([first] if first is not None else []) + rest


def _thread(state: ProcessState, index: int, out: list[str]) -> None:
    stack = state.threads[index]
    crashed = index == state.requesting_thread
    status = (" (crashed)" if state.crashed else " (requested the dump)") if crashed else ""
    count = len(stack.frames)
    label = f"Thread {index} {stack.thread_name or ''}{status} · tid {stack.thread_id} · {count} frames"
    out.append(f'<details{" open" if crashed else ""} id="thread-{index}">')
    out.append(f'<summary class="{"bad" if crashed else ""}">{escape(label)}</summary>')
    if not stack.frames:
        out.append('<p class="muted">no frames</p>')
    else:
        out.append(
            "<table><thead><tr><th>#</th><th>Function</th><th>Module</th><th>Source</th><th>Found by</th>"
        )
        out.append("</tr></thead><tbody>")
        number = 0
        for frame in stack.frames:
            number = _frame_rows(frame, number, out)
        out.append("</tbody></table>")
        registers = register_lines(stack.frames[0].context)
        if registers:
            out.append(f"<pre>{escape(chr(10).join(line.strip() for line in registers))}</pre>")
    if stack.termination is not None:
        out.append(f'<p class="muted">Walk stopped: {escape(stack.termination.message)}</p>')
    out.append("</details>")


def _frame_rows(frame: StackFrame, number: int, out: list[str]) -> int:
    """The frame's rows, its inline frames first (numbered as the human report), and the next number."""
    module = basename(frame.module.code_file) if frame.module is not None else ""
    for inline in frame.inlines:
        source = f"{basename(inline.file)}:{inline.line}" if inline.file and inline.line is not None else ""
        out.append(_row(number, inline.function, module, source, INLINE_DESCRIPTION, inline=True))
        number += 1
    if frame.function_name is not None:
        offset = frame.function_offset
        function = frame.function_name + (f" + {offset:#x}" if offset else "")
    else:
        function = frame_label(frame)
    source = ""
    if frame.source_file is not None and frame.source_line is not None:
        source = f"{basename(frame.source_file)}:{frame.source_line}"
    out.append(_row(number, function, module, source, frame.trust.description, inline=False))
    return number + 1


def _row(number: int, function: str, module: str, source: str, found_by: str, *, inline: bool) -> str:
    return (
        f'<tr{" class=inline" if inline else ""}><td class="num">{number}</td>'
        f'<td class="mono fn">{escape(function)}</td><td>{escape(module)}</td>'
        f"<td>{escape(source)}</td><td>{escape(found_by)}</td></tr>"
    )


def _modules(state: ProcessState, out: list[str]) -> None:
    out.append(f"<h2>Modules ({len(state.modules)})</h2>")
    if not state.modules:
        out.append('<p class="muted">no modules listed in the dump</p>')
        return
    out.append("<table><thead><tr><th>Base</th><th>End</th><th>Name</th><th>Version</th><th>Debug ID</th>")
    out.append("<th>Symbols</th></tr></thead><tbody>")
    width = state.pointer_width
    for entry in state.modules:
        module = entry.module
        symbols = entry.symbols
        status = (
            symbols.status_text if symbols.requested else ("not needed" if state.symbols_searched else "none")
        )
        css = "ok" if symbols.loaded else "bad" if symbols.missing else "muted"
        out.append(
            f'<tr><td class="mono">{format_address(module.base, width)}</td>'
            f'<td class="mono">{format_address(module.base + module.size, width)}</td>'
            f"<td>{escape(module.filename)}</td><td>{escape(module.version or '')}</td>"
            f'<td class="mono">{escape(module.debug_id)}</td><td class="{css}">{escape(status)}</td></tr>'
        )
    out.append("</tbody></table>")


def _problems(state: ProcessState, out: list[str]) -> None:
    out.append(f"<h2>Problems ({len(state.problems)})</h2>")
    if not state.problems:
        out.append('<p class="muted">none found in the dump or its symbol files</p>')
        return
    out.append(
        "<table><thead><tr><th>Source</th><th>Code</th><th>Where</th><th>Message</th></tr></thead><tbody>"
    )
    for problem in state.problems:
        where = problem.where or ""
        if problem.offset is not None:
            where = f"{where} at {problem.offset:#x}".strip()
        out.append(
            f"<tr><td>{escape(problem.source)}</td><td>{escape(problem.code)}</td>"
            f"<td>{escape(where)}</td><td>{escape(problem.message)}</td></tr>"
        )
    out.append("</tbody></table>")
