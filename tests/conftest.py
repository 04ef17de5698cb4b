"""Shared fixtures and strategies."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

from versapub import datasets
from versapub.data.table import EncodedTable
from versapub.privacy.rules import Rule

# ``make test`` runs the property tests derandomized (the same examples on every run: it never
# flakes); ``make test-slow`` sets VERSAPUB_HYPOTHESIS=explore for random exploration.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", print_blob=True)
settings.load_profile(os.environ.get("VERSAPUB_HYPOTHESIS", "ci"))


@pytest.fixture
def running_example() -> EncodedTable:
    return datasets.running_example()


@st.composite
def rule_sets(draw: st.DrawFn, max_attrs: int = 8, max_rules: int = 8) -> tuple[list[str], list[Rule]]:
    """Random attribute names and rules over them (not necessarily irreducible)."""
    m = draw(st.integers(2, max_attrs))
    attrs = [f"a{i}" for i in range(m)]
    n_rules = draw(st.integers(1, max_rules))
    rules = []
    for _ in range(n_rules):
        rhs = draw(st.sampled_from(attrs))
        others = [a for a in attrs if a != rhs]
        lhs = draw(st.lists(st.sampled_from(others), min_size=1, max_size=len(others), unique=True))
        rules.append(Rule(tuple(lhs), rhs))
    return attrs, rules


def random_table(rng: np.random.Generator, n: int, cards: dict[str, int], skew: float = 1.0) -> EncodedTable:
    """A random text table with Zipf-skewed columns (skew 0: uniform)."""
    data = {}
    for name, card in cards.items():
        w = 1.0 / np.arange(1, card + 1) ** skew
        codes = rng.choice(card, size=n, p=w / w.sum())
        data[name] = [f"{name}_{c}" for c in codes]
    return EncodedTable.from_columns(data)


@pytest.fixture(scope="module")
def demo_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo release (`versapub demo`), once per test module."""
    from click.testing import CliRunner

    from versapub.cli.main import cli

    out = tmp_path_factory.mktemp("demo") / "rel"
    r = CliRunner().invoke(cli, ["demo", "--out", str(out)])
    assert r.exit_code == 0, r.stderr
    return out


def seal(directory: Path) -> None:
    """Record the digests of a hand-made or hand-edited release's files in its manifest, as an
    honest producer (or a careful forger) would: the other checks must then stand on their own."""
    import json

    from versapub.io.release_writer import digests
    from versapub.verify.files.digests import listed_files

    m = json.loads((directory / "manifest.json").read_text(encoding="utf-8"))
    m["digests"] = digests(directory, listed_files(directory, m))
    (directory / "manifest.json").write_text(json.dumps(m), encoding="utf-8")


def silent_long_step(started: Any) -> Callable[..., None]:
    """A stand-in for ``versapub.workflow.run`` whose one step reports nothing for up to 30 s
    (pure Python: only Cancel's interrupt stops it); ``started`` (a ``threading.Event``) is
    set once it runs, the state a cancel test waits on."""

    def run(*args: Any, progress: Callable[[str, int, int], None], **kw: Any) -> None:
        progress("a long step", 0, 0)
        started.set()
        end = time.perf_counter() + 30
        while time.perf_counter() < end:  # no progress report: only an interrupt stops it
            sum(range(1000))
        raise AssertionError("ran to its end: Cancel did not stop it")

    return run
