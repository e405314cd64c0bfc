"""The command line on damaged inputs, in real subprocesses with a time limit each.

A sample of the generator's variants (every seed-less one — empty files, files that are not
dumps, a directory, a missing path — and one of each seed and family) goes through
`stackwalk --json`, `stackwalk --human` and `dump`. Each must exit 0 or 1 within
`CLI_SECONDS`, never print a traceback, print exactly one `crash-inspector: error:` line (and
nothing on stdout) when it exits 1, and, when it exits 0, list the same problems the library
found (the JSON's `inspector_problems`, the human report's closing list). One variant of each
family also goes through `stackwalk --json --symbols-url` with a server that refuses every
connection: the failed downloads change neither the exit code nor the report.

The subprocesses share a bytecode cache in a temporary directory (`PYTHONPYCACHEPREFIX`), so
each start costs a tenth of a second instead of recompiling the package.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.robustness.conftest import Outcomes, collected_dump_variants
from tests.robustness.damage import DumpVariant
from tests.robustness.harness import run_library

REPO = Path(__file__).resolve().parents[2]
#: Longest one command may take (interpreter start included, on a loaded 2-core machine).
CLI_SECONDS = 20.0


def _sample(variants: list[DumpVariant]) -> list[DumpVariant]:
    chosen = [v for v in variants if v.seed is None]
    groups: dict[tuple[str, str], list[DumpVariant]] = {}
    for v in variants:
        if v.seed is not None:
            groups.setdefault((v.seed.name, v.family), []).append(v)
    for (seed, family), members in groups.items():
        chosen.append(members[zlib.crc32(f"{seed}/{family}".encode()) % len(members)])
    return chosen


SAMPLE = _sample(collected_dump_variants())
COMMANDS = {
    "json": ["stackwalk", "--json"],
    "human": ["stackwalk", "--human"],
    "dump": ["dump"],
}


@dataclass(frozen=True)
class Run:
    returncode: int | None  # None: killed after CLI_SECONDS
    stdout: str
    stderr: str


@pytest.fixture(scope="module")
def cli_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path_factory.mktemp("pycache"))
    env["QT_QPA_PLATFORM"] = "offscreen"
    yield env


def _run(args: list[str], env: dict[str, str]) -> Run:
    try:
        done = subprocess.run(
            [sys.executable, "-m", "inspector", *args],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=CLI_SECONDS,
            cwd=REPO,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        return Run(None, str(exc.stdout or ""), str(exc.stderr or ""))
    return Run(done.returncode, done.stdout, done.stderr)


@pytest.fixture(scope="module")
def runs(cli_env: dict[str, str], outcomes: Outcomes) -> dict[tuple[str, str], Run]:
    """Every (variant, command) of the sample, two at a time."""
    cache = outcomes.directory.parent / "cli-symbol-cache"
    jobs = {}
    for variant in SAMPLE:
        path = variant.materialize(outcomes.directory)
        symbols = [str(p) for p in variant.seed.symbol_paths] if variant.seed is not None else []
        for name, command in COMMANDS.items():
            extra = ["--symbols-cache", str(cache)] if command[0] == "stackwalk" else []
            symbol_args = symbols if command[0] == "stackwalk" else []
            jobs[(variant.name, name)] = [*command, *extra, str(path), *symbol_args]
    _run(["dump", str(outcomes.directory)], cli_env)  # fill the bytecode cache once
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {key: pool.submit(_run, args, cli_env) for key, args in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("variant", SAMPLE, ids=[v.name for v in SAMPLE])
def test_cli_exits_0_or_1_without_traceback_in_time(
    variant: DumpVariant, command: str, runs: dict[tuple[str, str], Run], outcomes: Outcomes
) -> None:
    run = runs[(variant.name, command)]
    assert run.returncode is not None, f"still running after {CLI_SECONDS} s"
    assert "Traceback" not in run.stderr + run.stdout
    assert run.returncode in (0, 1), run.stderr
    if run.returncode == 1:
        assert run.stdout == ""
        lines = run.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("crash-inspector: error: "), run.stderr
        assert "internal error" not in lines[0]
        return
    outcome = outcomes.of(variant)
    if command == "dump":
        assert run.stdout.startswith("MDRawHeader")
        return
    assert not outcome.refused, "the library refused what the command line accepted"
    if command == "json":
        document = json.loads(run.stdout)
        assert [p["message"] for p in document["inspector_problems"]] == outcome.problems
        assert document["thread_count"] == len(outcome.threads)
    else:
        for message in outcome.problems:
            assert message in run.stdout
        assert ("Problems found in the inputs" in run.stdout) == bool(outcome.problems)


def test_cli_refuses_exactly_what_the_library_refuses(
    runs: dict[tuple[str, str], Run], outcomes: Outcomes
) -> None:
    for variant in SAMPLE:
        outcome = outcomes.of(variant)
        run = runs[(variant.name, "json")]
        assert (run.returncode == 1) == outcome.refused, variant.name


# ---- with a symbol server that does not answer ----------------------------------------------------


def _one_per_family(variants: list[DumpVariant]) -> list[DumpVariant]:
    groups: dict[str, list[DumpVariant]] = {}
    for v in variants:
        groups.setdefault(v.family, []).append(v)
    return [members[zlib.crc32(family.encode()) % len(members)] for family, members in sorted(groups.items())]


#: One variant of each family (the refused kinds among them): downloads are tried for each.
SERVER_SAMPLE = _one_per_family(SAMPLE)


@pytest.fixture(scope="module")
def dead_server_url() -> Iterator[str]:
    """A local port that is bound but never listens: every connection is refused at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"


@pytest.fixture(scope="module")
def server_runs(
    cli_env: dict[str, str],
    outcomes: Outcomes,
    dead_server_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Run]:
    """Each variant with the server and no symbol paths: every module a walk needs is asked for."""
    cache = tmp_path_factory.mktemp("download-cache")
    jobs = {}
    for variant in SERVER_SAMPLE:
        path = variant.materialize(outcomes.directory)
        server = ["--symbols-url", dead_server_url, "--symbols-cache", str(cache)]
        # failed downloads are logged as warnings, which the default level (error) leaves out
        jobs[variant.name] = ["stackwalk", "--json", "--verbose", "warn", *server, str(path)]
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {key: pool.submit(_run, args, cli_env) for key, args in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


@pytest.mark.parametrize("variant", SERVER_SAMPLE, ids=[v.name for v in SERVER_SAMPLE])
def test_cli_with_an_unreachable_symbol_server_on_a_damaged_dump(
    variant: DumpVariant, server_runs: dict[str, Run], outcomes: Outcomes
) -> None:
    """Failed downloads add nothing to the damage: the same refusal, or the same report as without symbols."""
    run = server_runs[variant.name]
    expected = run_library(variant.materialize(outcomes.directory), (), None)
    assert run.returncode is not None, f"still running after {CLI_SECONDS} s"
    assert "Traceback" not in run.stderr + run.stdout
    assert run.returncode == (1 if expected.refused else 0), run.stderr
    if run.returncode == 1:
        assert run.stdout == ""
        lines = run.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("crash-inspector: error: "), run.stderr
        return
    document = json.loads(run.stdout)
    assert [p["message"] for p in document["inspector_problems"]] == expected.problems
    walked = {t["thread_id"]: len(t["frames"]) for t in document["threads"]}
    assert walked == {tid: len(frames) for tid, frames in expected.threads.items()}


def test_the_unreachable_server_was_asked(server_runs: dict[str, Run]) -> None:
    """The sample does reach the downloads (the server refuses every connection)."""
    tried = [name for name, run in server_runs.items() if "connection error" in run.stderr]
    assert len(tried) >= 3, tried
