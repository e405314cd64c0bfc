"""The Crash Set view: a folder of dumps triaged on the worker thread, grouped by signature in an item
model (biggest group first, dumps under their group), a bar per group, double-click opens a dump."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPointF, QUrl
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from inspector.core.triage import CrashTriage
from inspector.gui.crash_set_window import CHART_GROUPS, CrashSetWindow
from inspector.gui.file_drop import plan_drop
from inspector.gui.main_window import MainWindow
from inspector.gui.models.crash_set_model import CrashSetModel, DumpPathRole
from inspector.gui.settings import Settings
from inspector.gui.theme import Theme
from inspector.resources import sample_dump, sample_symbols
from tests.gui.conftest import MessageBoxes, make_window
from tests.gui.support import wait_analysis_over
from tests.gui.test_main_window import drop

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "crashes"
CRASHES = ("fp_less_deep", "lib_callback", "libc_abort", "multithread", "cxx_terminate")
SET_TIMEOUT_MS = 60_000


def _crash(dump: str, signature: str, *, readable: bool = True) -> CrashTriage:
    return CrashTriage(dump, signature, "SIGSEGV", "0x0", 0, (f"{signature} frame",), (), (), readable)


@pytest.fixture
def model() -> CrashSetModel:
    return CrashSetModel(Theme.for_scheme(False))


def _rows(model: QAbstractItemModel, parent: QModelIndex | None = None) -> list[str]:
    parent = parent or QModelIndex()
    return [str(model.index(r, 0, parent).data()) for r in range(model.rowCount(parent))]


def test_groups_are_biggest_first_and_dumps_in_the_order_found(
    model: CrashSetModel, check_model: Callable[[QAbstractItemModel], None]
) -> None:
    check_model(model)  # Qt's model tester watches every change below
    model.reset("/set")
    model.add_crashes([(3, _crash("/set/d", "beta")), (0, _crash("/set/a", "alpha"))])
    assert _rows(model) == ["alpha", "beta"]  # one dump each: by signature
    model.add_crashes([(2, _crash("/set/c", "beta")), (5, _crash("/set/f", "gamma"))])
    assert _rows(model) == ["beta", "alpha", "gamma"]  # beta grew past alpha
    beta = model.index(0, 0)
    assert _rows(model, beta) == ["c", "d"]  # in the order found, relative to the folder
    assert model.index(0, CrashSetModel.COUNT).data() == 2
    assert model.index(0, 0, beta).data(DumpPathRole) == "/set/c"
    assert model.rowCount(model.index(0, 0, beta)) == 0  # dumps have no children
    assert [g.signature for g in model.groups()] == ["beta", "alpha", "gamma"]


def test_a_group_moving_up_keeps_its_expansion_and_selection(qtbot: QtBot, model: CrashSetModel) -> None:
    from PySide6.QtWidgets import QTreeView

    view = QTreeView()
    qtbot.addWidget(view)
    view.setModel(model)
    model.add_crashes([(0, _crash("/a", "alpha")), (1, _crash("/b", "beta"))])
    beta = model.index(1, 0)
    view.expand(beta)
    view.setCurrentIndex(model.index(0, 0, beta))
    model.add_crashes([(2, _crash("/c", "beta")), (3, _crash("/d", "beta"))])
    assert _rows(model) == ["beta", "alpha"]
    assert view.isExpanded(model.index(0, 0)) and not view.isExpanded(model.index(1, 0))
    assert view.currentIndex().data(DumpPathRole) == "/b"  # the same dump is still selected


def test_unreadable_dumps_say_why(model: CrashSetModel) -> None:
    bad = CrashTriage("/x.dmp", "unreadable dump (X)", problems=("not a minidump",), readable=False)
    model.add_crashes([(0, bad)])
    dump = model.index(0, 0, model.index(0, 0))
    assert dump.siblingAtColumn(CrashSetModel.CRASH).data() == "cannot be read"
    assert dump.siblingAtColumn(CrashSetModel.FRAMES).data() == "not a minidump"


def _folder(tmp_path: Path, copies_of_sample: int = 2) -> Path:
    """Our own crashes, copies of the sample, and a file named .dmp that is not a dump."""
    root = tmp_path / "crashes"
    root.mkdir()
    for name in CRASHES:
        shutil.copyfile(FIXTURES / name / f"{name}.dmp", root / f"{name}.dmp")
    for i in range(copies_of_sample):
        os.link(sample_dump(), root / f"sample-{i:03}")
    (root / "broken.dmp").write_text("not a dump")
    return root


def _symbols_window(qtbot: QtBot, settings: Settings, *, with_symbols: bool = True) -> MainWindow:
    paths = (sample_symbols(), *(FIXTURES / n / "symbols" for n in CRASHES), FIXTURES / "system-symbols")
    return make_window(qtbot, settings, session_symbol_paths=paths if with_symbols else ())


def _wait_done(qtbot: QtBot, crash_set: CrashSetWindow) -> None:
    qtbot.waitUntil(lambda: crash_set.state != "running", timeout=SET_TIMEOUT_MS)
    assert crash_set.state == "done", crash_set.status.text()


def test_open_folder_triages_it_and_double_click_opens_a_dump(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    window = _symbols_window(qtbot, settings)
    folder = _folder(tmp_path)
    assert window.crash_sets.open_folder_action in window.menuBar().actions()[0].menu().actions()
    crash_set = window.crash_sets.open([folder])
    _wait_done(qtbot, crash_set)
    model = crash_set.model
    assert model.done == 8 and crash_set.found == 8
    groups = model.groups()
    assert (groups[0].signature, groups[0].count) == ("store_pixel", 2)
    assert {g.signature for g in groups} == {
        "store_pixel",
        "parse_primary",
        "discounted_unit_price",
        "post_transaction",
        "stack_crate",
        "std::rethrow_exception",
        "unreadable dump (NotAMinidump)",
    }
    assert crash_set.chart.signatures == [g.signature for g in groups][:CHART_GROUPS]
    assert crash_set.chart.counts[0] == 2
    assert "8 of 8 dumps triaged · 7 signatures · 1 could not be read" in crash_set.status.text()
    # double-click a dump: it opens in the inspector view of the main window
    group = model.index(model.group_row("discounted_unit_price") or 0, 0)
    crash_set.tree.expand(group)
    dump = model.index(0, 0, group)
    assert dump.data() == "lib_callback.dmp"
    wait_analysis_over(qtbot, window.session, lambda: crash_set.tree.doubleClicked.emit(dump))
    document = window.session.document
    assert document is not None and document.path == folder / "lib_callback.dmp"


def test_clicking_a_bar_selects_its_group(qtbot: QtBot, settings: Settings, tmp_path: Path) -> None:
    window = _symbols_window(qtbot, settings)
    crash_set = window.crash_sets.open([_folder(tmp_path)])
    _wait_done(qtbot, crash_set)
    crash_set.chart.group_clicked.emit(crash_set.chart.signatures[2])
    assert crash_set.tree.currentIndex().data() == crash_set.chart.signatures[2]
    # through the plot: a click on the top bar, in the view's coordinates
    chart = crash_set.chart
    view = chart.plot.getPlotItem().vb
    crash_set.show()
    qtbot.waitExposed(crash_set)
    scene_point = view.mapViewToScene(QPointF(0.5, 0))
    clicked: list[str] = []
    chart.group_clicked.connect(clicked.append)

    class Click:
        def scenePos(self) -> QPointF:
            return scene_point

    chart._on_clicked(Click())
    assert clicked == [chart.signatures[0]]


def test_adding_symbols_triages_the_set_again(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    window = _symbols_window(qtbot, settings, with_symbols=False)
    folder = tmp_path / "one"
    folder.mkdir()
    shutil.copyfile(sample_dump(), folder / "sample.dmp")
    crash_set = window.crash_sets.open([folder])
    _wait_done(qtbot, crash_set)
    assert [g.signature for g in crash_set.model.groups()] == ["render_farm"]  # no symbols: the module
    window.add_symbol_paths([sample_symbols()], reanalyze=False)
    qtbot.waitUntil(lambda: crash_set.state == "running" or crash_set.model.done == 0, timeout=5000)
    _wait_done(qtbot, crash_set)
    assert [g.signature for g in crash_set.model.groups()] == ["store_pixel"]


def test_a_dropped_folder_of_dumps_opens_a_crash_set(
    qtbot: QtBot, settings: Settings, message_boxes: MessageBoxes, tmp_path: Path
) -> None:
    folder = _folder(tmp_path)
    plan = plan_drop([QUrl.fromLocalFile(str(folder)), QUrl.fromLocalFile(str(sample_symbols()))])
    assert plan.dump_folders == (folder,) and plan.symbol_paths == (sample_symbols(),)
    assert "Triage the dumps in crashes" in plan.describe()
    window = _symbols_window(qtbot, settings)
    drop(window, [folder])
    assert len(window.crash_sets.windows) == 1
    crash_set = window.crash_sets.windows[0]
    _wait_done(qtbot, crash_set)
    assert crash_set.model.done == 8
    assert window.settings.symbol_paths == []  # not taken for a symbol folder
    crash_set.close()
    assert window.crash_sets.windows == []


@pytest.mark.slow
def test_a_large_set_runs_in_worker_processes_and_can_be_cancelled(
    qtbot: QtBot, settings: Settings, tmp_path: Path
) -> None:
    window = _symbols_window(qtbot, settings)
    folder = _folder(tmp_path, copies_of_sample=40)  # 46 dumps: more than IN_PROCESS_AT_MOST
    crash_set = window.crash_sets.open([folder])
    _wait_done(qtbot, crash_set)
    assert crash_set.model.done == 46
    assert crash_set.model.groups()[0].count == 40
    # again, and Cancel while it runs: the window stays usable and says so
    crash_set.start()
    qtbot.waitUntil(lambda: crash_set.found > 0, timeout=SET_TIMEOUT_MS)
    crash_set.cancel_button.click()
    qtbot.waitUntil(lambda: crash_set.state != "running", timeout=SET_TIMEOUT_MS)
    assert crash_set.state == "cancelled" and crash_set.again_button.isEnabled()
    assert "cancelled" in crash_set.status.text()
    QApplication.processEvents()
