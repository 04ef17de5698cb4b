"""Every example of the README runs as it is written (issue 29): its shell blocks in bash and
its Python blocks in one interpreter, in document order, from a copy of the repository's
root (``examples/`` copied, the embedded datasets read where they are), as a new user would
after ``make demo``. A block preceded by ``<!-- readme-test: slow (why) -->`` runs in the
slow suite only; ``<!-- readme-test: skip (why) -->`` names what runs it instead."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(
    r"(?:<!-- readme-test: (?P<mark>skip|slow) \((?P<why>[^)]*)\) -->\n)?```(?P<lang>\w*)\n(?P<code>.*?)```", re.S
)


@dataclass(frozen=True)
class Block:
    line: int
    lang: str
    code: str
    mark: str | None
    why: str | None


def blocks() -> list[Block]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [
        Block(text[: m.start("code")].count("\n"), m["lang"], m["code"], m["mark"], m["why"])
        for m in BLOCK.finditer(text)
    ]


def test_every_block_is_run_or_says_what_runs_it() -> None:
    found = blocks()
    assert len(found) >= 10  # the first screen: each family's reference page in docs/ runs its own
    assert all(b.lang in ("sh", "python", "toml") for b in found), [b.lang for b in found]
    skipped = [b for b in found if b.mark == "skip"]
    assert len(skipped) <= 2 and all(b.why for b in skipped)  # make demo/test, pip install


def _sandbox(tmp: Path) -> Path:
    shutil.copytree(ROOT / "examples", tmp / "examples")
    for name in ("src", "benchmarks"):
        (tmp / name).symlink_to(ROOT / name)
    (tmp / "docs").mkdir()
    return tmp


def _run(tmp: Path, slow: bool) -> list[int]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    namespace: dict[str, object] = {}
    ran = []
    for b in blocks():
        if b.mark == "skip" or (b.mark == "slow" and not slow):
            continue
        if b.lang == "sh":
            r = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", b.code], cwd=tmp, env=env, capture_output=True, text=True
            )
            assert r.returncode == 0, f"README line {b.line}:\n{b.code}\n--- stderr:\n{r.stderr[-3000:]}"
        elif b.lang == "python":
            here = Path.cwd()
            os.chdir(tmp)
            try:
                exec(compile(b.code, f"README.md:{b.line}", "exec"), namespace)  # the README's own code
            finally:
                os.chdir(here)
        else:
            tomllib.loads(b.code)
        ran.append(b.line)
    return ran


def test_the_readme_runs(tmp_path: Path) -> None:
    ran = _run(_sandbox(tmp_path), slow=False)
    assert len(ran) >= 9
    assert (tmp_path / "release" / "manifest.json").is_file() and (tmp_path / "synthetic.csv").is_file()


def test_the_readme_is_a_first_screen() -> None:
    """Issue 70: the README keeps what a newcomer reads first (at most 300 lines); each
    family's reference is a page in ``docs/`` whose examples run as the README's do, and every
    page the README links to exists."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count("\n") <= 300
    links = re.findall(r"\]\(((?:docs|src)/[^)#]+)\)", text)
    assert len(links) >= 15 and all((ROOT / link).is_file() for link in links), links
