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

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "resources" / "examples" / "sample.dmp"
SYMBOLS = REPO / "resources" / "examples" / "symbols"

#: Our own modules (`inspector.*`) a warm `stackwalk --json` of the sample loads.
OUR_MODULES = 73
#: Other top-level modules and packages it loads beyond a bare interpreter (stdlib and installed).
OTHER_TOP_LEVEL = 24

_CHILD = """
import contextlib, io, json, runpy, sys
before = set(sys.modules)
sys.argv = ["inspector", "stackwalk", "--json", sys.argv[1], sys.argv[2]]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        runpy.run_module("inspector", run_name="__main__")
    except SystemExit as stop:
        code = stop.code
new = sorted(set(sys.modules) - before)
json.dump({"code": code, "json": out.getvalue(), "new": new}, sys.stderr)
"""


def _loaded(cache_home: Path) -> tuple[list[str], list[str]]:
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
    report = json.loads(run.stderr)
    assert report["code"] in (0, None)
    assert json.loads(report["json"])["crash_info"]["type"] == "SIGSEGV / SEGV_MAPERR"
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
    # argparse is told the terminal width (it imports shutil, with bz2 and lzma, to ask)
    assert not {"logging", "platformdirs", "shutil", "tempfile"} & set(others)
    # built lazily for --trace and the GUI, never for the JSON
    assert not [m for m in ours if m.startswith(("inspector.core.explain", "inspector.gui"))]
