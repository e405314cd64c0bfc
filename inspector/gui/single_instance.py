"""One running app per user and settings file: a second launch hands its dump to the first and exits.

A file manager starts `crash-inspector FILE` for every double-clicked dump (one
process per file, several at once when several files are opened together). The
first process listens on a local socket; a later one connects, sends the dump and
its `--symbols` as one JSON line, waits for the reply `opened`, and exits 0 while
the running app opens the dump in a new window.

The socket is per user (in `$XDG_RUNTIME_DIR`, else in a 0700 folder of ours in
the temp folder; a user-only named pipe on Windows) and per settings file, so
`--settings FILE` runs (tests, scripts) never reach the user's app.
When the running app does not answer in time, the new process opens its own
window rather than lose the file.
"""

from __future__ import annotations

import enum
import getpass
import hashlib
import json
import logging
import os
import stat
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot
from PySide6.QtNetwork import QAbstractSocket, QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

PROTOCOL = "crash-inspector/1"
REPLY_OPENED = b"opened\n"
CONNECT_TIMEOUT_MS = 1000
#: The running app answers from its event loop; while it is still starting (building its first
#: window) that can take a few seconds on a slow machine.
REPLY_TIMEOUT_MS = 15_000
#: How long a racing second process waits for the winner of `listen` to accept connections.
CLAIM_ATTEMPTS = 5
CLAIM_RETRY_S = 0.2
MAX_REQUEST_BYTES = 1 << 20


@dataclass(frozen=True)
class OpenRequest:
    """What a launch asks for: a dump (None: the bundled sample) and session symbol paths."""

    dump: Path | None
    symbols: tuple[Path, ...] = ()

    @classmethod
    def from_arguments(cls, dump: Path | None, symbols: list[Path]) -> OpenRequest:
        # Relative paths mean the launching process's folder, which the running app does not share.
        return cls(
            dump.absolute() if dump is not None else None,
            tuple(p.absolute() for p in symbols),
        )

    def encode(self) -> bytes:
        message = {
            "protocol": PROTOCOL,
            "dump": None if self.dump is None else str(self.dump),
            "symbols": [str(p) for p in self.symbols],
        }
        return json.dumps(message).encode("utf-8") + b"\n"

    @classmethod
    def decode(cls, line: bytes) -> OpenRequest:
        """Parse one request line; raises ValueError for anything else."""
        message = json.loads(line.decode("utf-8"))
        if not isinstance(message, dict) or message.get("protocol") != PROTOCOL:
            raise ValueError("not a Crash Inspector open request")
        dump, symbols = message.get("dump"), message.get("symbols", [])
        if not (dump is None or isinstance(dump, str)) or not (
            isinstance(symbols, list) and all(isinstance(s, str) for s in symbols)
        ):
            raise ValueError("malformed open request")
        return cls(None if dump is None else Path(dump), tuple(Path(s) for s in symbols))


def _private_directory() -> Path | None:
    """A folder only this user can enter: `$XDG_RUNTIME_DIR`, else our own 0700 folder in the temp dir."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and Path(runtime).is_dir():
        return Path(runtime)
    folder = Path(tempfile.gettempdir()) / f"crash-inspector-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return None
    # Someone else's folder (or a symlink) under that name must not receive our socket.
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return folder


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # a uid without a name (some containers)
        return str(os.getuid()) if hasattr(os, "getuid") else "user"


def server_name(settings_file: Path | None) -> str | None:
    """The socket for this user and settings file; None when no private place for it exists."""
    scope = str(settings_file.resolve()) if settings_file is not None else "user settings"
    digest = hashlib.sha256(f"{_user()}\0{scope}".encode()).hexdigest()[:16]
    name = f"crash-inspector-{digest}"
    if sys.platform == "win32":
        return name  # a named pipe, restricted to the user by UserAccessOption
    # The socket is bound in place (no socket options): Qt then reports a name in use instead of
    # silently replacing it, which is what lets two launches at once agree on one winner.
    folder = _private_directory()
    return str(folder / name) if folder is not None else None


class Forwarded(enum.Enum):
    OPENED = "the running app opened it"
    NO_SERVER = "no app is running"
    #: the socket exists but nobody listens: left by an app that was killed
    STALE = "a dead app's socket"
    NO_REPLY = "the running app did not answer"


def forward(name: str, request: OpenRequest, *, reply_timeout_ms: int = REPLY_TIMEOUT_MS) -> Forwarded:
    """Hand `request` to the app listening on `name`, blocking until it answers or times out."""
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        refused = socket.error() == QLocalSocket.LocalSocketError.ConnectionRefusedError
        return Forwarded.STALE if refused else Forwarded.NO_SERVER
    try:
        socket.write(request.encode())
        if not socket.waitForBytesWritten(CONNECT_TIMEOUT_MS):
            return Forwarded.NO_REPLY
        deadline = time.monotonic() + reply_timeout_ms / 1000
        while not socket.canReadLine():
            remaining = int((deadline - time.monotonic()) * 1000)
            if remaining <= 0 or not socket.waitForReadyRead(remaining):
                return Forwarded.NO_REPLY
        return Forwarded.OPENED if bytes(socket.readLine().data()) == REPLY_OPENED else Forwarded.NO_REPLY
    finally:
        socket.abort()


class InstanceServer(QObject):
    """Listens for later launches; emits `open_requested(OpenRequest)` for each, then replies."""

    open_requested = Signal(object)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server = QLocalServer(self)
        if sys.platform == "win32":
            self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        self._pending: dict[QLocalSocket, bytearray] = {}

    def listen(self, *, replace_stale: bool = False) -> bool:
        if replace_stale:
            # A socket file left by an app that died: nobody answers on it, so take it over.
            QLocalServer.removeServer(self.name)
        return self._server.listen(self.name)

    @property
    def address_in_use(self) -> bool:
        return self._server.serverError() == QAbstractSocket.SocketError.AddressInUseError

    @property
    def error_string(self) -> str:
        return self._server.errorString()

    def close(self) -> None:
        self._server.close()

    @Slot()
    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self._pending[socket] = bytearray()
            socket.readyRead.connect(lambda s=socket: self._read(s))
            socket.disconnected.connect(lambda s=socket: self._forget(s))

    def _read(self, socket: QLocalSocket) -> None:
        buffer = self._pending.get(socket)
        if buffer is None:
            return
        buffer += bytes(socket.readAll().data())
        if b"\n" not in buffer:
            if len(buffer) > MAX_REQUEST_BYTES:
                log.warning("ignoring an oversized request on %s", self.name)
                socket.abort()
            return
        line = bytes(buffer[: buffer.index(b"\n")])
        self._pending.pop(socket, None)
        try:
            request = OpenRequest.decode(line)
        except ValueError as exc:  # another program on our socket name, or a future protocol
            log.warning("ignoring a request on %s: %s", self.name, exc)
            socket.disconnectFromServer()
            return
        log.info("asked to open %s", request.dump or "the sample crash")
        self.open_requested.emit(request)  # direct connection: the window exists when this returns
        socket.write(REPLY_OPENED)
        socket.flush()
        socket.disconnectFromServer()

    def _forget(self, socket: QLocalSocket) -> None:
        self._pending.pop(socket, None)
        socket.deleteLater()


def claim_or_forward(name: str, request: OpenRequest) -> InstanceServer | None:
    """Forward `request` to a running app (None: it opened the file), or become that app.

    The returned server may not be listening (another app holds the name but does not answer):
    this process then simply runs on its own.
    """
    server = InstanceServer(name)
    for _ in range(CLAIM_ATTEMPTS):
        outcome = forward(name, request, reply_timeout_ms=REPLY_TIMEOUT_MS)
        if outcome is Forwarded.OPENED:
            server.deleteLater()
            return None
        if outcome is Forwarded.NO_REPLY:
            log.warning("the running Crash Inspector did not answer; opening a window of our own")
            return server
        if server.listen(replace_stale=outcome is Forwarded.STALE):
            return server
        if not server.address_in_use:
            log.warning("cannot listen for other launches on %s: %s", name, server.error_string)
            return server
        # Another launch won the race and is about to accept connections.
        time.sleep(CLAIM_RETRY_S)
    if not server.listen(replace_stale=True):
        log.warning("cannot listen for other launches on %s: %s", name, server.error_string)
    return server
