"""A second launch hands its dump to the running app: the file opens there and the launch exits 0."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from inspector.app import AppWindows
from inspector.gui import single_instance
from inspector.gui.single_instance import (
    Forwarded,
    InstanceServer,
    OpenRequest,
    claim_or_forward,
    forward,
    server_name,
)
from inspector.resources import sample_dump
from tests.conftest import REPO
from tests.gui.support import ANALYSIS_TIMEOUT_MS

STARTUP_TIMEOUT_S = 60


@pytest.fixture
def runtime_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private XDG_RUNTIME_DIR with a short path (a Unix socket path has at most 107 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="ci-run-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def dumps(tmp_path: Path) -> dict[str, Path]:
    found = {}
    for name in ("a", "b", "c"):
        found[name] = tmp_path / f"{name}.dmp"
        shutil.copy(sample_dump(), found[name])
    return found


def launch(dump: Path, settings: Path, *extra: str) -> subprocess.Popen[str]:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.Popen(
        [sys.executable, "-m", "inspector", str(dump), "--settings", str(settings), *extra],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until(condition: object, timeout_s: float = STARTUP_TIMEOUT_S, what: str = "") -> None:
    assert callable(condition)
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what or condition}")
        time.sleep(0.05)


def stop(process: subprocess.Popen[str]) -> str:
    """End an app that is still running (as a logout would) and return what it logged."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    return err


def recent_files(settings: Path) -> str:
    return settings.read_text() if settings.exists() else ""


# ---- end to end: two processes, as a file manager starts them ----


def test_a_second_launch_opens_its_dump_in_the_running_app(
    runtime_dir: Path, dumps: dict[str, Path], settings_file: Path
) -> None:
    first = launch(dumps["a"], settings_file, "-v")
    try:
        socket_path = Path(str(server_name(settings_file)))
        wait_until(lambda: socket_path.exists() or first.poll() is not None, what="the first app to listen")
        assert first.poll() is None, first.communicate()[1]

        second = launch(dumps["b"], settings_file)
        _, err = second.communicate(timeout=STARTUP_TIMEOUT_S)
        assert second.returncode == 0, err
        # the running app read B: it is now in its recent files (File › Open Recent)
        wait_until(lambda: str(dumps["b"]) in recent_files(settings_file), what="b.dmp to be opened")
        assert first.poll() is None
    finally:
        log = stop(first)
    assert f"opened {dumps['b']} in a new window" in log


def test_launches_at_the_same_time_agree_on_one_app(
    runtime_dir: Path, dumps: dict[str, Path], settings_file: Path
) -> None:
    """Opening three dumps at once in a file manager starts three processes together."""
    processes = [launch(path, settings_file) for path in dumps.values()]
    try:
        wait_until(
            lambda: sum(p.poll() is not None for p in processes) == 2, what="two launches to hand over"
        )
        assert [p.returncode for p in processes if p.poll() is not None] == [0, 0]
        wait_until(
            lambda: all(str(path) in recent_files(settings_file) for path in dumps.values()),
            what="all three dumps to be opened",
        )
    finally:
        for process in processes:
            stop(process)


def test_other_settings_files_are_other_apps(tmp_path: Path, settings_file: Path) -> None:
    """A `--settings` run (tests, scripts) never hands its file to the user's app, nor takes theirs."""
    other = tmp_path / "other.ini"
    assert server_name(settings_file) != server_name(other)
    assert server_name(settings_file) != server_name(None)
    assert server_name(settings_file) == server_name(Path(os.path.relpath(settings_file)))


# ---- the protocol, in this process ----


def test_requests_carry_absolute_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    request = OpenRequest.from_arguments(Path("crash.dmp"), [Path("syms"), Path("/abs/app.sym")])
    assert request == OpenRequest(tmp_path / "crash.dmp", (tmp_path / "syms", Path("/abs/app.sym")))
    assert OpenRequest.decode(request.encode().rstrip(b"\n")) == request
    assert OpenRequest.decode(OpenRequest(None).encode()) == OpenRequest(None)


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b"GET / HTTP/1.0",
        b"[]",
        b'{"protocol": "other/1", "dump": null}',
        b'{"protocol": "crash-inspector/1", "dump": 3}',
    ],
)
def test_anything_else_on_the_socket_is_refused(line: bytes) -> None:
    with pytest.raises(ValueError):
        OpenRequest.decode(line)


class ForwardingProcess:
    """`forward()` from another process, as a second launch does (it blocks, holding its GIL)."""

    def __init__(self, name: str, request: OpenRequest) -> None:
        code = (
            "import sys\n"
            "from pathlib import Path\n"
            "from inspector.gui.single_instance import OpenRequest, forward\n"
            "request = OpenRequest.decode(sys.argv[2].encode())\n"
            "print(forward(sys.argv[1], request, reply_timeout_ms=10000).name)\n"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, name, request.encode().decode().strip()],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
        )

    def result(self, qtbot: QtBot) -> str:
        qtbot.waitUntil(lambda: self.process.poll() is not None, timeout=30_000)
        out, _ = self.process.communicate()
        return out.strip()


def test_the_server_emits_the_request_then_answers(qtbot: QtBot, runtime_dir: Path) -> None:
    name = str(runtime_dir / "s")
    server = InstanceServer(name)
    assert server.listen()
    request = OpenRequest(Path("/crashes/b.dmp"), (Path("/symbols"),))
    try:
        with qtbot.waitSignal(server.open_requested, timeout=30_000) as signal_:
            client = ForwardingProcess(name, request)
        assert signal_.args == [request]
        assert client.result(qtbot) == Forwarded.OPENED.name
    finally:
        server.close()
    assert not Path(name).exists()  # a clean exit leaves no socket behind


def test_a_dead_apps_socket_is_taken_over(qtbot: QtBot, runtime_dir: Path) -> None:
    name = str(runtime_dir / "s")
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(name)
    dead.close()  # the file stays, nobody listens: what a killed app leaves
    assert forward(name, OpenRequest(None)) is Forwarded.STALE
    server = claim_or_forward(name, OpenRequest(None))
    try:
        assert server is not None
        with qtbot.waitSignal(server.open_requested, timeout=30_000):
            client = ForwardingProcess(name, OpenRequest(None))
        assert client.result(qtbot) == Forwarded.OPENED.name
    finally:
        assert server is not None
        server.close()


def test_an_app_that_does_not_answer_does_not_swallow_the_file(
    qtbot: QtBot, runtime_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = str(runtime_dir / "s")
    hung = socket.socket(socket.AF_UNIX)
    hung.bind(name)
    hung.listen(5)  # connections are queued by the kernel, never answered
    monkeypatch.setattr(single_instance, "REPLY_TIMEOUT_MS", 300)
    try:
        server = claim_or_forward(name, OpenRequest(Path("/crashes/b.dmp")))
        # this launch opens its own window (the server it returns does not listen: the name is taken)
        assert server is not None
        server.close()
    finally:
        hung.close()


def test_no_private_folder_means_no_single_instance(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    foreign = tmp_path / f"crash-inspector-{os.getuid()}"
    foreign.mkdir(mode=0o777)
    foreign.chmod(0o777)  # someone made it writable for all: our socket must not go there
    assert server_name(None) is None
    foreign.chmod(0o700)
    assert server_name(None) == str(foreign / Path(str(server_name(None))).name)


# ---- where a forwarded dump opens ----


def wait_shown(qtbot: QtBot, windows: AppWindows, dump: Path) -> None:
    def shown() -> bool:
        return any(
            w.session.document is not None and w.session.document.path == dump and not w.session.is_busy
            for w in windows.windows
        )

    qtbot.waitUntil(shown, timeout=ANALYSIS_TIMEOUT_MS)


def test_a_forwarded_dump_opens_in_a_new_window(
    qtbot: QtBot, windows: AppWindows, dumps: dict[str, Path]
) -> None:
    first = windows.create(dumps["a"], [])
    first.show()
    first.open_dump(dumps["a"])
    wait_shown(qtbot, windows, dumps["a"])

    windows.open_request(OpenRequest(dumps["b"], ()))
    wait_shown(qtbot, windows, dumps["b"])
    assert len(windows.windows) == 2
    second = windows.windows[1]
    assert second.isVisible() and second.windowTitle() == "b.dmp — Crash Inspector"
    assert first.windowTitle() == "a.dmp — Crash Inspector"  # A stays where it was

    second.close()  # later windows are deleted when closed, and forgotten
    qtbot.waitUntil(lambda: len(windows.windows) == 1)


def test_a_forwarded_dump_replaces_the_untouched_sample(
    qtbot: QtBot, windows: AppWindows, dumps: dict[str, Path]
) -> None:
    """Started without a file (the sample shows), then a .dmp double-clicked: it takes that window."""
    first = windows.create(None, [])
    first.show()
    first.open_dump(sample_dump())
    wait_shown(qtbot, windows, sample_dump())

    windows.open_request(OpenRequest(dumps["b"], ()))
    wait_shown(qtbot, windows, dumps["b"])
    assert windows.windows == [first] and first.windowTitle() == "b.dmp — Crash Inspector"

    windows.open_request(OpenRequest(dumps["c"], ()))  # no longer the sample: a window of its own
    wait_shown(qtbot, windows, dumps["c"])
    assert len(windows.windows) == 2
