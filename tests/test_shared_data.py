"""Tests that need ../shared skip in a fresh clone and fail in CI (`.ci/run`) when it is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

#: One test that needs the corpus (through `corpus_dir`) and one per-case test (`case_params`).
NEEDS_CORPUS = [
    "tests/golden/test_fidelity.py::test_corpus_cases_are_listed",
    "tests/golden/test_fidelity.py::test_case_matches_rust_minidump",
]


def _run_without_shared(tmp_path: Path, *, required: bool) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["CRASH_INSPECTOR_SHARED"] = str(tmp_path / "no-shared-here")
    env.pop("CRASH_INSPECTOR_REQUIRE_CORPUS", None)
    if required:
        env["CRASH_INSPECTOR_REQUIRE_CORPUS"] = "1"
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rsf", *NEEDS_CORPUS]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=False)


def test_a_fresh_clone_skips_with_a_message(tmp_path: Path) -> None:
    done = _run_without_shared(tmp_path, required=False)
    assert done.returncode == 0, done.stdout
    assert "2 skipped" in done.stdout and "no test corpus at" in done.stdout


def test_ci_fails_when_the_corpus_is_missing(tmp_path: Path) -> None:
    done = _run_without_shared(tmp_path, required=True)
    assert done.returncode == 1, done.stdout
    assert "2 failed" in done.stdout or "2 error" in done.stdout, done.stdout
    assert "CRASH_INSPECTOR_REQUIRE_CORPUS is set" in done.stdout


def test_ci_script_requires_the_corpus_and_runs_make_test() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "export CRASH_INSPECTOR_REQUIRE_CORPUS=1" in script
    assert script.rstrip().endswith("make test")
