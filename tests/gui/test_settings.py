"""Settings: typed values survive a round trip through an INI file."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from inspector.core.symbols import default_cache_directory
from inspector.core.unwind import WalkOptions, WalkPolicy
from inspector.gui.settings import MAX_RECENT_FILES, Settings


def reopen(settings: Settings) -> Settings:
    settings.sync()
    return Settings(QSettings(settings.store.fileName(), QSettings.Format.IniFormat))


def test_symbol_paths_round_trip_in_order_without_duplicates(settings: Settings, tmp_path: Path) -> None:
    assert settings.symbol_paths == []
    one = tmp_path / "symbols"
    settings.symbol_paths = [one]  # a one-element list (INI files are known to mangle those)
    assert reopen(settings).symbol_paths == [one]
    two = tmp_path / "more symbols, with a comma"
    added = settings.add_symbol_paths([two, one, two])
    assert added == [two]
    assert reopen(settings).symbol_paths == [one, two]
    assert settings.add_symbol_paths([one]) == []
    settings.symbol_paths = []
    assert reopen(settings).symbol_paths == []


def test_recent_files_are_most_recent_first_unique_and_bounded(settings: Settings, tmp_path: Path) -> None:
    files = [tmp_path / f"crash{i}.dmp" for i in range(MAX_RECENT_FILES + 3)]
    for f in files:
        settings.add_recent_file(f)
    settings.add_recent_file(files[-5])
    recent = reopen(settings).recent_files
    assert len(recent) == MAX_RECENT_FILES
    assert recent[0] == files[-5]
    assert recent[1] == files[-1]
    assert len(set(recent)) == len(recent)
    settings.clear_recent_files()
    assert reopen(settings).recent_files == []


def test_symbol_cache_choice(settings: Settings, tmp_path: Path) -> None:
    assert settings.effective_cache_dir() is None  # the fixture turns the cache off
    settings.symbol_cache_enabled = True
    assert settings.effective_cache_dir() == default_cache_directory()
    settings.symbol_cache_dir = tmp_path / "index"
    again = reopen(settings)
    assert again.symbol_cache_enabled
    assert again.effective_cache_dir() == tmp_path / "index"
    again.symbol_cache_dir = None
    assert again.effective_cache_dir() == default_cache_directory()


def test_window_layout_and_memory_options(settings: Settings) -> None:
    assert settings.window_geometry is None and settings.window_state is None
    settings.window_geometry = QByteArray(b"geometry")
    settings.window_state = QByteArray(b"state")
    settings.words_per_row = 2
    again = reopen(settings)
    assert again.window_geometry == QByteArray(b"geometry")
    assert again.window_state == QByteArray(b"state")
    assert again.words_per_row == 2
    again.store.setValue("memory/words_per_row", "seven")
    assert again.words_per_row == 1


def test_damaged_values_read_as_defaults(tmp_path: Path) -> None:
    ini = tmp_path / "odd.ini"
    ini.write_text('[symbols]\npaths="{not json"\ncache_enabled=no\n[files]\nrecent=42\n')
    settings = Settings(QSettings(str(ini), QSettings.Format.IniFormat))
    assert settings.symbol_paths == []
    assert settings.recent_files == []
    assert settings.symbol_cache_enabled is False


def test_the_walk_policy_and_switches_round_trip(settings: Settings, tmp_path: Path) -> None:
    assert settings.walk_options == WalkOptions()  # rust-minidump 0.25's walk, as the command line
    chosen = WalkOptions(policy=WalkPolicy.BREAKPAD, extended_scan_after_cfi=True, arm64_lr_recovery=False)
    settings.walk_options = chosen
    assert reopen(settings).walk_options == chosen
    ini = tmp_path / "odd.ini"
    ini.write_text("[walk]\npolicy=gdb\narm64_lr_recovery=false\n")
    odd = Settings(QSettings(str(ini), QSettings.Format.IniFormat))
    assert odd.walk_options == WalkOptions(arm64_lr_recovery=False)  # an unknown policy reads as the default
