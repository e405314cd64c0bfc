"""The one-folder bundle (`make dist`): its CLI and GUI work with nothing from this Python.

The bundle is built (or, when it is newer than every input, reused) by the same
`make dist` a user runs; each check then runs the bundled executable with an
environment that has no Python of ours in it, from a folder outside the checkout.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from inspector.resources import APP_ID
from tests.conftest import REPO

pytestmark = pytest.mark.slow

SAMPLE = REPO / "resources" / "examples"
BUILD_TIMEOUT_S = 1800


@pytest.fixture(scope="module")
def bundle() -> Path:
    if not sys.platform.startswith("linux"):
        pytest.skip("only the Linux bundle is built here (the spec also covers macOS and Windows)")
    missing = [tool for tool in ("make", "objdump", "objcopy") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (PyInstaller needs binutils on Linux)")
    started = time.monotonic()
    built = subprocess.run(
        ["make", "--no-print-directory", "dist"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    print(f"make dist: {time.monotonic() - started:.0f} s")
    executable = REPO / "dist" / "crash-inspector" / "crash-inspector"
    assert executable.is_file()
    return executable


@pytest.fixture
def clean_env(tmp_path: Path) -> dict[str, str]:
    """No virtualenv, no PYTHONPATH, a fresh home: only what any desktop session has."""
    home = tmp_path / "home"
    home.mkdir()
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_RUNTIME_DIR": str(home),
    }


def run_bundle(
    bundle: Path, env: dict[str, str], cwd: Path, *args: str, timeout: int = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bundle), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout, check=False
    )


def run_python(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector", *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_bundled_stackwalk_gives_the_same_frames(
    bundle: Path, clean_env: dict[str, str], tmp_path: Path
) -> None:
    args = ["stackwalk", "--json", "--no-symbols-cache", str(SAMPLE / "sample.dmp"), str(SAMPLE / "symbols")]
    ours = run_bundle(bundle, clean_env, tmp_path, *args)
    assert ours.returncode == 0, ours.stderr
    reference = run_python(*args)
    assert reference.returncode == 0, reference.stderr
    bundled, expected = json.loads(ours.stdout), json.loads(reference.stdout)
    frames = [t["frames"] for t in bundled["threads"]]
    assert frames == [t["frames"] for t in expected["threads"]]
    assert sum(map(len, frames)) > len(frames)  # the walk went past the context frames
    assert bundled == expected


def test_bundled_stackwalk_reads_symbols_from_binaries(
    bundle: Path, clean_env: dict[str, str], tmp_path: Path
) -> None:
    """symbolic's Rust library is in the bundle: a build folder gives the same frames as from source."""
    case = Path(__file__).resolve().parent / "fixtures" / "crashes" / "libc_abort"
    args = ["stackwalk", "--json", "--no-local-modules", "--no-symbols-cache"]
    args += [str(case / "libc_abort.dmp"), str(case / "binaries")]
    ours = run_bundle(bundle, clean_env, tmp_path, *args)
    assert ours.returncode == 0, ours.stderr
    reference = run_python(*args)
    assert reference.returncode == 0, reference.stderr
    bundled, expected = json.loads(ours.stdout), json.loads(reference.stdout)
    assert [t["frames"] for t in bundled["threads"]] == [t["frames"] for t in expected["threads"]]
    ledger = next(m for m in bundled["modules"] if m["filename"] == "ledger")
    assert ledger.get("loaded_symbols"), bundled["inspector_problems"]


def test_bundled_dump_and_bad_input(bundle: Path, clean_env: dict[str, str], tmp_path: Path) -> None:
    ours = run_bundle(bundle, clean_env, tmp_path, "dump", str(SAMPLE / "sample.dmp"))
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == run_python("dump", str(SAMPLE / "sample.dmp")).stdout

    bad = tmp_path / "bad.dmp"
    bad.write_bytes(b"not a minidump at all")
    out = run_bundle(bundle, clean_env, tmp_path, "stackwalk", str(bad))
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "not a minidump" in out.stderr and "Traceback" not in out.stderr


def test_bundled_triage_gives_the_same_signatures(
    bundle: Path, clean_env: dict[str, str], tmp_path: Path
) -> None:
    """siggen's rule lists are package data: the bundle must carry them (and worker processes must start)."""
    args = ["triage", "--workers", "2", "--json", "-", "--symbols", str(SAMPLE / "symbols")]
    args += [
        "--symbols-cache",
        str(tmp_path / "cache"),
        str(SAMPLE / "sample.dmp"),
        str(SAMPLE / "sample.dmp"),
    ]
    ours = run_bundle(bundle, clean_env, tmp_path, *args)
    assert ours.returncode == 0, ours.stderr
    assert json.loads(ours.stdout) == json.loads(run_python(*args).stdout)
    assert [g["signature"] for g in json.loads(ours.stdout)["groups"]] == ["store_pixel"]


def test_bundled_stackwalk_loads_no_qt_and_nothing_outside_the_bundle(
    bundle: Path, clean_env: dict[str, str], tmp_path: Path
) -> None:
    """Every shared object the dynamic loader opens is listed by LD_DEBUG: no Qt, and no other Python."""
    env = {**clean_env, "LD_DEBUG": "files", "LD_DEBUG_OUTPUT": str(tmp_path / "ld")}
    out = run_bundle(bundle, env, tmp_path, "stackwalk", "--no-symbols-cache", str(SAMPLE / "sample.dmp"))
    assert out.returncode == 0, out.stderr
    log = "".join(p.read_text() for p in tmp_path.glob("ld.*"))
    loaded = {line.split("file=")[1].split()[0] for line in log.splitlines() if " file=" in line}
    assert loaded, "LD_DEBUG reported nothing"
    assert not [name for name in loaded if "Qt6" in name or "PySide6" in name or "libicu" in name]
    python_files = [
        name
        for name in loaded
        if "python" in name.lower() or name.endswith(".cpython-311-x86_64-linux-gnu.so")
    ]
    assert python_files and all(name.startswith(str(bundle.parent)) for name in python_files), python_files


def test_bundled_gui_takes_a_screenshot(bundle: Path, clean_env: dict[str, str], tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    settings = tmp_path / "settings.ini"
    settings.write_text("[symbols]\ncache_enabled=false\n")
    out = run_bundle(bundle, clean_env, tmp_path, "--screenshot", str(shot), "--settings", str(settings))
    assert out.returncode == 0, out.stderr
    image = QImage(str(shot))
    assert image.width() >= 1280 and image.height() >= 800


def test_bundled_install_desktop_points_at_the_bundle(
    bundle: Path, clean_env: dict[str, str], tmp_path: Path
) -> None:
    env = {**clean_env, "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    out = run_bundle(bundle, env, tmp_path, "--install-desktop")
    assert out.returncode == 0, out.stderr
    entry = (tmp_path / "data" / "applications" / f"{APP_ID}.desktop").read_text()
    assert f"Exec={bundle.resolve()} %f" in entry.splitlines()
    assert (tmp_path / "data" / "icons" / "hicolor" / "256x256" / "apps" / f"{APP_ID}.png").is_file()
    if shutil.which("update-mime-database"):  # the system tool works when started from the bundle
        assert "refreshing the MIME database: done" in out.stdout

    out = run_bundle(bundle, env, tmp_path, "--uninstall-desktop")
    assert out.returncode == 0, out.stderr
    assert not list((tmp_path / "data").rglob(f"{APP_ID}*"))
