"""The `triage` command's outputs: JSON (the documented shape other tools read), CSV, self-contained HTML.

JSON: `{"crashes": [{"dump", "signature", "crash_reason", "crash_address",
"crashing_thread", "top_frames", "modules_missing_symbols", "problems"}, ...],
"groups": [{"signature", "count", "dumps"}, ...]}`, crashes in the order found, groups
biggest first. CSV: one row per dump with the same fields (lists joined) and the size of
the dump's group. HTML: one file with nothing to fetch (inline CSS and SVG, no script):
the groups with their counts, a bar chart of the biggest, and each crash's top frames.
"""

from __future__ import annotations

import csv
import io
import json
from html import escape

from inspector.core.triage.crash_set import CrashSet, SignatureGroup

#: Groups drawn in the HTML report's bar chart.
CHART_GROUPS = 20

CSV_COLUMNS = (
    "dump",
    "signature",
    "group_size",
    "crash_reason",
    "crash_address",
    "crashing_thread",
    "top_frames",
    "modules_missing_symbols",
    "problems",
)


def render_triage_json(crashes: CrashSet) -> str:
    return json.dumps(crashes.to_json(), indent=2, ensure_ascii=False) + "\n"


def render_triage_csv(crashes: CrashSet) -> str:
    """One row per dump, in the order found; top frames joined with ` | ` (as Socorro's
    proto-signature), modules and problems with `; `."""
    sizes = {group.signature: group.count for group in crashes.groups()}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for crash in crashes:
        writer.writerow(
            (
                crash.dump,
                crash.signature,
                sizes[crash.signature],
                crash.crash_reason,
                crash.crash_address,
                "" if crash.crashing_thread is None else crash.crashing_thread,
                " | ".join(crash.top_frames),
                "; ".join(crash.modules_missing_symbols),
                "; ".join(crash.problems),
            )
        )
    return out.getvalue()


_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; vertical-align: top; padding: 4px 8px; border-bottom: 1px solid #ddd; }
th { background: #f3f3f3; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
code, .frames { font-family: ui-monospace, monospace; font-size: 12.5px; }
.frames { margin: 0; padding-left: 2.2em; } .missing { color: #a33; } .problem { color: #a60; }
details { margin: 0.4em 0; } summary { cursor: pointer; }
.crash { margin: 0.6em 0 0.6em 1.2em; padding-left: 0.8em; border-left: 3px solid #ccd; }
svg text { font: 12px ui-monospace, monospace; }
"""


def render_triage_html(crashes: CrashSet, *, title: str = "Crash triage") -> str:
    groups = crashes.groups()
    total = crashes.done
    unreadable = sum(1 for crash in crashes if not crash.readable)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        f"<p>{total} dumps, {len(groups)} signatures"
        + (f", {unreadable} dumps could not be read" if unreadable else "")
        + ". Signatures are Socorro's (siggen), made from each dump's walked stacks.</p>",
    ]
    if groups:
        parts.append(f"<h2>The biggest groups</h2>{_chart(groups[:CHART_GROUPS], total)}")
        parts.append(_group_table(groups, total))
        parts.append("<h2>Crashes by group</h2>")
        parts.extend(_group_details(number, group) for number, group in enumerate(groups, 1))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def _chart(groups: list[SignatureGroup], total: int) -> str:
    """A horizontal bar per group (inline SVG): its count, its signature beside the bar."""
    row, bar_width, label_width = 22, 360, 60
    biggest = max(group.count for group in groups)
    height = row * len(groups) + 4
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="100%" height="{height}" '
        f'viewBox="0 0 1100 {height}" role="img" aria-label="dumps per signature">'
    ]
    for i, group in enumerate(groups):
        y = i * row + 2
        width = max(1.0, bar_width * group.count / biggest)
        share = 100 * group.count / total if total else 0
        signature = escape(group.signature)
        label = escape(_shorten(group.signature, 90))
        out.append(
            f"<g><title>{signature}: {group.count} dumps ({share:.1f} %)</title>"
            f'<text x="{label_width - 6}" y="{y + 15}" text-anchor="end">{group.count}</text>'
            f'<rect x="{label_width}" y="{y + 3}" width="{width:.1f}" height="{row - 6}" fill="#4a7bd0"/>'
            f'<text x="{label_width + bar_width + 10}" y="{y + 15}">{label}</text>'
            "</g>"
        )
    out.append("</svg>")
    return "".join(out)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _group_table(groups: list[SignatureGroup], total: int) -> str:
    rows = [
        "<h2>Groups</h2><table><thead><tr><th>#</th><th>dumps</th><th>share</th><th>signature</th>"
        "<th>top frames (first crash)</th><th>modules missing symbols</th></tr></thead><tbody>"
    ]
    for number, group in enumerate(groups, 1):
        share = 100 * group.count / total if total else 0
        rows.append(
            f'<tr><td class="n"><a href="#g{number}">{number}</a></td><td class="n">{group.count}</td>'
            f'<td class="n">{share:.1f} %</td><td><code>{escape(group.signature)}</code></td>'
            f"<td>{_frames(group.top_frames[:5])}</td>"
            f'<td class="missing">{escape(", ".join(group.modules_missing_symbols))}</td></tr>'
        )
    rows.append("</tbody></table>")
    return "".join(rows)


def _frames(frames: tuple[str, ...]) -> str:
    if not frames:
        return "<em>no frames</em>"
    return '<ol class="frames" start="0">' + "".join(f"<li>{escape(f)}</li>" for f in frames) + "</ol>"


def _group_details(number: int, group: SignatureGroup) -> str:
    out = [
        f'<details id="g{number}"><summary>{number}. <code>{escape(group.signature)}</code> '
        f"— {group.count} dump{'s' if group.count != 1 else ''}</summary>"
    ]
    for crash in group.crashes:
        crash_line = escape(crash.crash_reason or "no exception recorded")
        if crash.crash_address:
            crash_line += f" at <code>{escape(crash.crash_address)}</code>"
        if crash.crashing_thread is not None:
            crash_line += f", thread {crash.crashing_thread}"
        out.append(f'<div class="crash"><div><code>{escape(crash.dump)}</code></div><div>{crash_line}</div>')
        out.append(_frames(crash.top_frames))
        if crash.modules_missing_symbols:
            missing = escape(", ".join(crash.modules_missing_symbols))
            out.append(f'<div class="missing">no symbols: {missing}</div>')
        out.extend(f'<div class="problem">{escape(problem)}</div>' for problem in crash.problems)
        out.append("</div>")
    out.append("</details>")
    return "".join(out)
