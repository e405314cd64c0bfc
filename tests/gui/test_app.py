"""The GUI command line: `--screenshot` renders the window offscreen; bad arguments are usage errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from inspector.app import build_parser
from inspector.resources import sample_dump, sample_symbols
from tests.conftest import REPO


def run_app(*args: str, settings: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run(
        [sys.executable, "-m", "inspector", "--settings", str(settings), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
        check=False,
    )


def test_screenshot_of_the_sample_is_a_large_png(tmp_path: Path, settings_file: Path) -> None:
    shot = tmp_path / "shots" / "sample.png"
    out = run_app(
        str(sample_dump()),
        "--symbols",
        str(sample_symbols()),
        "--screenshot",
        str(shot),
        settings=settings_file,
    )
    assert out.returncode == 0, out.stderr
    image = QImage(str(shot))
    assert not image.isNull()
    assert (image.width(), image.height()) == (1440, 900)
    # a screenshot run leaves the saved layout and recent files alone
    assert "window" not in settings_file.read_text() and "recent" not in settings_file.read_text()


def test_screenshot_without_a_dump_shows_the_bundled_sample(tmp_path: Path, settings_file: Path) -> None:
    shot = tmp_path / "default.png"
    # a laptop's screen
    out = run_app("--screenshot", str(shot), "--screenshot-size", "1366x768", settings=settings_file)
    assert out.returncode == 0, out.stderr
    image = QImage(str(shot))
    assert (image.width(), image.height()) == (1366, 768)


def mean_lightness(image: QImage) -> float:
    """The average lightness (0-255) of a grid of the image's pixels."""
    values = [
        image.pixelColor(x, y).lightness()
        for x in range(0, image.width(), 23)
        for y in range(0, image.height(), 23)
    ]
    return sum(values) / len(values)


def test_the_dark_mode_choice_is_restored_at_start(tmp_path: Path, settings_file: Path) -> None:
    """View › Dark Mode saves `appearance/color_scheme`; the next start draws with it, unless
    `--color-scheme` says otherwise for that run."""
    settings_file.write_text(settings_file.read_text() + "[appearance]\ncolor_scheme=dark\n")
    dark, light = tmp_path / "dark.png", tmp_path / "light.png"
    out = run_app("--screenshot", str(dark), "--screenshot-size", "1024x640", settings=settings_file)
    assert out.returncode == 0, out.stderr
    out = run_app(
        "--screenshot",
        str(light),
        "--screenshot-size",
        "1024x640",
        "--color-scheme",
        "light",
        settings=settings_file,
    )
    assert out.returncode == 0, out.stderr
    assert mean_lightness(QImage(str(dark))) < 110
    assert mean_lightness(QImage(str(light))) > 160
    assert "color_scheme=dark" in settings_file.read_text()  # the one-run override is not saved


def test_screenshot_of_a_bad_dump_still_renders_but_fails(tmp_path: Path, settings_file: Path) -> None:
    bad = tmp_path / "bad.dmp"
    bad.write_text("not a minidump")
    shot = tmp_path / "bad.png"
    out = run_app(str(bad), "--screenshot", str(shot), settings=settings_file)
    assert out.returncode == 1
    assert "not a minidump" in out.stderr
    assert not QImage(str(shot)).isNull()


def test_usage_errors() -> None:
    parser = build_parser()
    options = parser.parse_args(
        ["crash.dmp", "--symbols", "a", "--symbols", "b.sym", "--screenshot-size", "1600x1000"]
    )
    assert options.dump == Path("crash.dmp")
    assert options.symbols == [Path("a"), Path("b.sym")]
    assert options.screenshot_size == (1600, 1000)
    assert parser.parse_args(["--screenshot-size", "1366x768"]).screenshot_size == (1366, 768)
    for bad in (["--screenshot-size", "640x480"], ["--screenshot-size", "big"], ["--color-scheme", "pink"]):
        with pytest.raises(SystemExit) as exit_:
            parser.parse_args(bad)
        assert exit_.value.code == 2
