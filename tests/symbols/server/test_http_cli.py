"""`stackwalk --symbols-url …`: flags, cache layout, the token from the environment, lazy HTTP import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspector import cli
from tests.symbols.server.http_server import RENDER_FARM, REPO, SAMPLE_DUMP, SYMBOL_TREES, SymbolHttpServer


def _walk(capsys: pytest.CaptureFixture[str], *args: str, paths: tuple[Path, ...] = ()) -> dict[str, object]:
    assert cli.main(["stackwalk", "--json", *args, str(SAMPLE_DUMP), *map(str, paths)]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_symbols_url_and_cache_layout(
    tmp_path: Path, server: SymbolHttpServer, capsys: pytest.CaptureFixture[str]
) -> None:
    local = _walk(capsys, "--no-symbols-cache", paths=(SYMBOL_TREES[0],))
    cache = tmp_path / "cache"
    remote = _walk(capsys, "--symbols-url", server.url, "--symbols-cache", str(cache))
    assert [t["frames"] for t in remote["threads"]] == [t["frames"] for t in local["threads"]]  # type: ignore[index]
    assert (cache / "symbols" / RENDER_FARM).is_file()
    assert list((cache / "index").glob("*.symidx")), "indexes go to DIR/index"
    requests = len(server.requests)
    offline = _walk(capsys, "--symbols-url", server.url, "--symbols-cache", str(cache), "--offline")
    assert len(server.requests) == requests, "--offline asks nothing"
    assert offline["modules"] == remote["modules"]
    by_name = {m["filename"]: m for m in offline["modules"]}  # type: ignore[attr-defined]
    assert by_name["render_farm"]["symbol_url"].startswith(server.url)


def test_no_symbols_cache_keeps_nothing(
    tmp_path: Path, server: SymbolHttpServer, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = _walk(capsys, "--symbols-url", server.url, "--no-symbols-cache")
    assert {m["filename"]: m["loaded_symbols"] for m in doc["modules"]}["render_farm"]  # type: ignore[attr-defined]
    leftovers = list(Path(tempfile_dir()).glob("crash-inspector-symbols-*"))
    assert leftovers == [], leftovers


def tempfile_dir() -> str:
    import tempfile

    return tempfile.gettempdir()


def test_the_token_comes_from_the_servers_variable(
    tmp_path: Path,
    server: SymbolHttpServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(f"CRASH_INSPECTOR_TOKEN_127_0_0_1_{server.port}", "env-token")
    _walk(capsys, "--symbols-url", server.url, "--symbols-cache", str(tmp_path))
    assert server.requests
    assert all(r.headers.get("Authorization") == "Bearer env-token" for r in server.requests)


def test_a_download_timeout_is_reported_in_the_modules(
    tmp_path: Path, server: SymbolHttpServer, capsys: pytest.CaptureFixture[str]
) -> None:
    server.behaviour.stall = 2.0
    args = [
        "--symbols-url",
        server.url,
        "--symbols-cache",
        str(tmp_path),
        "--symbols-download-timeout",
        "0.3",
    ]
    doc = _walk(capsys, *args)
    render_farm = {m["filename"]: m for m in doc["modules"]}["render_farm"]  # type: ignore[attr-defined]
    assert render_farm["missing_symbols"] is True and render_farm["symbol_url"] is None


@pytest.mark.parametrize(
    "url",
    ["ftp://example.com/symbols", "symbols.example.com"],
)
def test_a_url_that_cannot_be_used_is_a_problem_and_the_walk_goes_on(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """minidump-stackwalk ignores such a server; we do too, and say so in the report."""
    doc = _walk(capsys, "--symbols-url", url, "--symbols-cache", str(tmp_path), paths=(SYMBOL_TREES[0],))
    problems = [p["message"] for p in doc["inspector_problems"]]  # type: ignore[union-attr]
    assert len(problems) == 1 and url in problems[0], problems
    assert {m["filename"]: m["loaded_symbols"] for m in doc["modules"]}["render_farm"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "args",
    [
        ["--symbols-download-timeout", "0"],
        ["--symbols-download-timeout", "soon"],
        ["--symbols-max-download", "-1"],
    ],
)
def test_usage_errors(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["stackwalk", *args, str(SAMPLE_DUMP)]) == 2
    assert "error:" in capsys.readouterr().err


def test_the_http_client_is_imported_only_with_a_server(tmp_path: Path, server: SymbolHttpServer) -> None:
    program = (
        "import sys\n"
        "from inspector import cli\n"
        "code = cli.main(['stackwalk', '--json', *sys.argv[1:]])\n"
        "print(code, 'urllib3' in sys.modules, file=sys.stderr)\n"
    )

    def run(*args: str) -> str:
        argv = [sys.executable, "-c", program, str(SAMPLE_DUMP), *args]
        done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120, check=True)
        return done.stderr.strip().splitlines()[-1]

    cache = str(tmp_path / "c")
    assert run("--symbols-cache", cache, "--symbols-path", str(SYMBOL_TREES[0])) == "0 False"
    assert run("--symbols-cache", cache, "--offline", "--symbols-url", server.url) == "0 False"
    assert run("--symbols-cache", cache, "--symbols-url", server.url) == "0 True"
