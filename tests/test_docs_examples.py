"""Every example in ``docs/`` runs as it is written, as the README's do (tests/test_readme.py):
each page's shell blocks in bash and its Python blocks in one interpreter per page, in
document order, from a copy of ``examples/`` (``src`` and ``benchmarks`` linked). A block
preceded by ``<!-- docs-test: skip (why) -->`` names what runs it instead (an experiment that
takes hours: ``tests/test_experiments.py`` builds its page from small runs); one preceded by
``<!-- docs-test: slow (why) -->`` runs in the slow suite (``make test-slow``) only."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(
    r"(?:<!-- docs-test: (?P<mark>skip|slow) \((?P<why>[^)]*)\) -->\n)?```(?P<lang>sh|python)\n(?P<code>.*?)```", re.S
)
PAGES = sorted(p for p in (ROOT / "docs").glob("*.md") if BLOCK.search(p.read_text(encoding="utf-8")))


def test_every_page_with_examples_is_found() -> None:
    names = {p.name for p in PAGES}
    assert {"dp.md", "risk.md", "input.md", "using.md", "checking.md", "generalization.md", "treatments.md"} <= names
    for p in PAGES:  # a skipped block says what runs it instead
        for m in BLOCK.finditer(p.read_text(encoding="utf-8")):
            assert m["mark"] is None or m["why"].strip(), (p.name, m["code"][:80])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_page_runs(page: Path, tmp_path: Path) -> None:
    _run(page, tmp_path, slow=False)


SLOW_PAGES = [p for p in PAGES if any(m["mark"] == "slow" for m in BLOCK.finditer(p.read_text(encoding="utf-8")))]


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW_PAGES, ids=lambda p: p.name)
def test_the_page_runs_with_its_slow_blocks(page: Path, tmp_path: Path) -> None:
    _run(page, tmp_path, slow=True)


def _run(page: Path, tmp_path: Path, slow: bool) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    for name in ("src", "benchmarks"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    namespace: dict[str, object] = {}
    text = page.read_text(encoding="utf-8")
    for m in BLOCK.finditer(text):
        if m["mark"] == "skip" or (m["mark"] == "slow" and not slow):
            continue
        line = text[: m.start("code")].count("\n")
        if m["lang"] == "sh":
            r = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", m["code"]], cwd=tmp_path, env=env, capture_output=True, text=True
            )
            assert r.returncode == 0, f"{page.name} line {line}:\n{m['code']}\n--- stderr:\n{r.stderr[-3000:]}"
        else:
            here = Path.cwd()
            os.chdir(tmp_path)
            try:
                exec(compile(m["code"], f"{page.name}:{line}", "exec"), namespace)  # the page's own code
            finally:
                os.chdir(here)
