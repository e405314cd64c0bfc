"""The headless start-up cannot silently grow back: count what `stackwalk --json` imports.

Scripts and crash servers run one `stackwalk` process per dump, so importing is most of what each
one costs (bench/bench_startup.py has the times). Milliseconds are flaky on a shared machine;
the number of modules a process loads is not. The run is the bundled sample crash (a real Crashpad
minidump of a Linux amd64 crash, with its symbols) with a warm symbol index cache, the way a crash
server sees its second dump of a build.

When a change really needs more modules on this path, raise the baseline in the same commit and
say why in its message; when one removes some, lower it so that the gain is kept.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from inspector import cli

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "resources" / "examples" / "sample.dmp"
SYMBOLS = REPO / "resources" / "examples" / "symbols"

#: Our own modules (`inspector.*`) a warm `stackwalk --json` of the sample loads (74 with
#: `inspector.core.memo`, which keeps `functools` and `collections` out of importing the engine;
#: 76 with `inspector.core.collector`, the cycle collector's pause around a walk, and
#: `inspector.core.analysis.iced`, which loads iced-x86 without its package's `__init__`).
OUR_MODULES = 76
#: Other top-level modules and packages it loads beyond a bare interpreter (stdlib and installed).
OTHER_TOP_LEVEL = 14

_CHILD = """
import contextlib, gc, io, json, runpy, sys
before = set(sys.modules)
sys.argv = ["inspector", "stackwalk", "--json", sys.argv[1], sys.argv[2]]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        runpy.run_module("inspector", run_name="__main__")
    except SystemExit as stop:
        code = stop.code
new = sorted(set(sys.modules) - before)
json.dump({"code": code, "json": out.getvalue(), "new": new, "gc": gc.isenabled()}, sys.stderr)
"""


def _run(cache_home: Path) -> dict[str, Any]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home)}
    # the first run fills the symbol index cache (and may import numpy to build it)
    for _ in range(2):
        run = subprocess.run(
            [sys.executable, "-c", _CHILD, str(SAMPLE), str(SYMBOLS)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            cwd=REPO,
        )
    report: dict[str, Any] = json.loads(run.stderr)
    assert report["code"] in (0, None)
    assert json.loads(report["json"])["crash_info"]["type"] == "SIGSEGV / SEGV_MAPERR"
    return report


def _loaded(cache_home: Path) -> tuple[list[str], list[str]]:
    report = _run(cache_home)
    ours = [m for m in report["new"] if m == "inspector" or m.startswith("inspector.")]
    others = sorted({m.split(".")[0] for m in report["new"] if m not in ours} - {"inspector"})
    return ours, others


def test_stackwalk_json_imports_no_more_modules_than_the_baseline(tmp_path: Path) -> None:
    ours, others = _loaded(tmp_path / "cache")
    assert len(ours) <= OUR_MODULES, (
        f"stackwalk --json now loads {len(ours)} of our modules (baseline {OUR_MODULES}): "
        f"import what only some dumps need inside the function that needs it. Loaded: {ours}"
    )
    assert len(others) <= OTHER_TOP_LEVEL, (
        f"stackwalk --json now loads {len(others)} other top-level modules (baseline {OTHER_TOP_LEVEL}). "
        f"Loaded: {others}"
    )


def test_stackwalk_json_on_a_warm_cache_loads_neither_numpy_nor_qt_nor_logging_nor_the_explanation(
    tmp_path: Path,
) -> None:
    ours, others = _loaded(tmp_path / "cache")
    assert not {"numpy", "PySide6", "shiboken6", "pyqtgraph"} & set(others)
    # a run that logs nothing never imports logging; the cache folder is found without platformdirs;
    # argparse is told the terminal width (it imports shutil, with bz2 and lzma, to ask); `typing` is
    # for type checkers only (`TYPE_CHECKING = False`, inspector.core.lazy)
    assert not {"logging", "platformdirs", "shutil", "tempfile", "typing"} & set(others)
    # paths are strings (`inspector.core.types.path_text`), locks come from `_thread`, and the
    # cancel token makes its Event only when something waits (issue 18: 16 M and 4 M instructions)
    assert not {"pathlib", "threading", "weakref", "urllib", "ipaddress"} & set(others)
    # built lazily for --trace and the GUI, never for the JSON
    assert not [m for m in ours if m.startswith(("inspector.core.explain", "inspector.gui"))]


def test_importing_the_engine_loads_no_standard_module_that_only_some_runs_need() -> None:
    # What a host application or a script importing the engine pays before it opens a dump: the
    # formats (`json`, with `re`, `enum`, `functools`, `collections`: ~8 ms, a third of the
    # engine's import) are imported by the code that reads or writes them (issue 18)
    child = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from inspector.core.process import process\n"
        "from inspector.core.report.json_report import render_json\n"
        "print(' '.join(sorted(set(sys.modules) - before)))\n"
    )
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True, cwd=REPO)
    loaded = set(run.stdout.split())
    assert not {"json", "re", "enum", "functools", "collections", "typing", "importlib"} & loaded, sorted(
        m for m in loaded if not m.startswith("inspector")
    )


def test_the_stackwalk_program_runs_without_the_cycle_collector_but_a_caller_keeps_it(tmp_path: Path) -> None:
    # the process of its own: nearly all it builds lives until it exits (inspector.cli)
    assert _run(tmp_path / "cache")["gc"] is False
    # called in-process (a test, a host application), the caller's collector is left alone
    out = tmp_path / "out.json"
    code = cli.main(
        ["stackwalk", "--json", "--output-file", str(out), "--no-symbols-cache", str(SAMPLE), str(SYMBOLS)]
    )
    assert code == 0 and json.loads(out.read_text())["crash_info"]["type"] == "SIGSEGV / SEGV_MAPERR"
    assert gc.isenabled()
