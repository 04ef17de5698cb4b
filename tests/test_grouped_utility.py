"""Issue 67: the utility step with distinct combinations, not rows, as the unit — the
workload's true answers from the input's distinct combinations, an Anatomy table's expected
counts from its (q, s) joint, its ranges from its distinct groups — equals the row-by-row
computation to 1e-9 on every release kind of the conformance catalog, and on an Anatomy
release shaped like the issue's 1.4M-record personnel file (many records, few combinations).
The grouped paths are forced on for the catalog's small tables (their thresholds set so that
every table takes them) and compared with the paths they replace."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import versapub
from versapub.data.table import EncodedTable
from versapub.model import utility_summary
from versapub.privacy.screens.roles import ColumnRoles

from .test_conformance import ANONYMIZED_KINDS, _a_release_of_kind


def _numbers(d: Any, path: str = "") -> dict[str, float]:
    """Every number of a utility summary, by its path (timings left out)."""
    out: dict[str, float] = {}
    if isinstance(d, dict):
        for k, v in d.items():
            if k != "seconds":
                out |= _numbers(v, f"{path}/{k}")
    elif isinstance(d, list):
        for i, v in enumerate(d):
            out |= _numbers(v, f"{path}[{i}]")
    elif isinstance(d, int | float) and not isinstance(d, bool):
        out[path] = float(d)
    return out


def _both(rel: versapub.Release, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, float], dict[str, float]]:
    """The utility summary with the grouped paths forced on, and with them off."""
    import versapub.data.table as table_mod
    import versapub.model.factors as factors

    with monkeypatch.context() as m:
        m.setattr(factors, "JOINT_COST", 10**9)
        m.setattr(table_mod, "GROUPED_SHARE", 10**9)
        m.setattr(factors.AnatomyFactor, "_joint_small", lambda self, plain: True)
        grouped = utility_summary(versapub.model_from_release(rel), rel.source)
    with monkeypatch.context() as m:
        m.setattr(factors, "JOINT_COST", -1)
        m.setattr(table_mod, "GROUPED_SHARE", -1)
        m.setattr(factors, "merged", lambda gr: gr)
        rows = utility_summary(versapub.model_from_release(rel), rel.source)
    return _numbers(grouped), _numbers(rows)


def _equal(a: dict[str, float], b: dict[str, float]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        if np.isfinite(a[k]) or np.isfinite(b[k]):
            assert a[k] == pytest.approx(b[k], rel=1e-9, abs=1e-9), k


@pytest.mark.parametrize("kind", ANONYMIZED_KINDS)
def test_grouped_utility_equals_row_by_row_on_every_kind(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rel, _ = _a_release_of_kind(kind)
    _equal(*_both(rel, monkeypatch))


def test_grouped_utility_on_many_records_of_few_combinations(monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's shape at 1 % of its size: 14,000 records of 7 categorical columns with
    few combinations, Anatomy at l = 2 (groups of two: the groups merge, the joint is small)."""
    rng = np.random.default_rng(67)
    n = 14_000
    cols = {c: rng.zipf(2.5, n).clip(max=k).astype(str) for c, k in zip("abcdef", (5, 2, 6, 2, 2, 6), strict=True)}
    cols["rank"] = ((rng.zipf(1.6, n) + 3 * (cols["a"] == "1")) % 12).astype(str)
    table = EncodedTable.from_columns(cols)
    rel = versapub.publish(table, ["a, b, c, d -> rank"], l=2, seed=3, columns=ColumnRoles(others="insensitive"))
    from versapub.model.factors import AnatomyFactor

    model = versapub.model_from_release(rel)
    f = next(f for f in model.factors if isinstance(f, AnatomyFactor))
    # the grouped paths are taken at their own thresholds on this shape
    assert f._groups().n_groups < len(f.size) and f._joint_for(()) is not None
    _equal(*_both(rel, monkeypatch))
