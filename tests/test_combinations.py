"""Every combination a steward asks for publishes or refuses (issue 63): random small tables
and random jobs over the whole option space (:mod:`tests.combinations`), each through the
command line in this process, and what every outcome must be — exit 0 or 6 with a release
that ``check`` and an independent re-reading of its files accept (and a query with a range,
an OR and a NOT answers), or exit 2 with one paragraph and nothing written; never exit 3, 70
or a traceback.

``make test`` runs a derandomized slice (the same draws every run, well under a minute);
``make test-slow`` runs the long sweep (``VERSAPUB_COMBINATIONS`` draws, default 5,000) with
random exploration. Counterexamples Hypothesis shrinks become the unit tests of
``tests/test_combination_cases.py``."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from .combinations import Draw, jobs, run_draw

#: Outcomes of the long sweep, for the summary it prints (exit codes and table kinds).
_SEEN: Counter[str] = Counter()


def _assert_ok(drawn: Draw, folder: Path) -> None:
    outcome = run_draw(drawn, folder)
    _SEEN[f"exit {outcome.code}"] += 1
    for kind in outcome.kind.split(","):
        if kind:
            _SEEN[f"kind {kind}"] += 1
    assert not outcome.problems, (
        f"{drawn.command()}\n{'; '.join(outcome.problems)}\n{outcome.stderr[-1500:]}\n{drawn!r}"
    )


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(drawn=jobs())
def test_every_drawn_job_publishes_or_refuses(drawn: Draw, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The derandomized slice ``make test`` runs (60 draws)."""
    _assert_ok(drawn, tmp_path_factory.mktemp("combo"))


def teardown_module() -> None:
    """Write the outcomes counted to ``VERSAPUB_COMBINATIONS_REPORT`` when it names a file
    (the figures ``docs/testing.md`` quotes come from there)."""
    target = os.environ.get("VERSAPUB_COMBINATIONS_REPORT")
    if target:
        Path(target).write_text("".join(f"{key}\t{n}\n" for key, n in sorted(_SEEN.items())))


SWEEP = int(os.environ.get("VERSAPUB_COMBINATIONS", "5000"))


@pytest.mark.slow
@settings(
    max_examples=SWEEP,
    deadline=None,
    derandomize=False,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(drawn=jobs())
def test_every_drawn_job_publishes_or_refuses_sweep(drawn: Draw, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The long sweep of ``make test-slow``: ``VERSAPUB_COMBINATIONS`` random draws (5,000 by
    default), counted by exit code and table kind in ``docs/testing.md``."""
    _assert_ok(drawn, tmp_path_factory.mktemp("combo"))
