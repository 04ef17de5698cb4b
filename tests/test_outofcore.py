"""The out-of-core KL term of an Anatomy table (model/outofcore.anatomy_term) against a
brute-force sum in Python, in both join orders."""

from __future__ import annotations

import math
from collections import Counter

import duckdb
import numpy as np
import pandas as pd
import pytest

from versapub.model.outofcore import anatomy_term


def _brute(data: pd.DataFrame, qit: pd.DataFrame, st: pd.DataFrame) -> tuple[float, int]:
    """``Σ_(q,s) c(q,s) log Σ_g c(q,g) c(g,s) / |g|`` over the data's pairs, and the pairs
    with no group (probability 0), by dictionaries."""
    size = st.groupby("group_id")["count"].sum().to_dict()
    cqg = {((r.a, r.b), r.group_id): r.count for r in qit.itertuples()}
    cgs = {(r.group_id, r.s): r.count for r in st.itertuples()}
    pairs = Counter(zip(zip(data.a, data.b, strict=True), data.s, strict=True))
    total, zero = 0.0, 0
    for (q, s), c in pairs.items():
        w = sum(n * cgs.get((g, s), 0) / size[g] for (qq, g), n in cqg.items() if qq == q)
        if w == 0:
            zero += 1
        else:
            total += c * math.log(w)
    return total, zero


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize(("order", "chunks"), [("pairs", None), ("groups", None), (None, None), ("pairs", 3),
                                               ("groups", 4)])  # fmt: skip
def test_anatomy_term_matches_brute_force(seed: int, order: str | None, chunks: int | None) -> None:
    rng = np.random.default_rng(seed)
    n, n_groups = int(rng.integers(20, 80)), int(rng.integers(2, 8))
    data = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.integers(0, 4, n), "s": rng.integers(0, 5, n)})
    group = rng.integers(0, n_groups, n)
    # The release: the QIT and ST of these groups, from all records but (for some seeds)
    # a few, so that some of the data's pairs have no group (model probability 0).
    keep = np.ones(n, dtype=bool) if seed % 2 == 0 else rng.random(n) > 0.1
    rel = data.assign(group_id=group)[keep]
    qit = rel.groupby(["a", "b", "group_id"]).size().rename("count").reset_index()
    st = rel.groupby(["group_id", "s"]).size().rename("count").reset_index()
    con = duckdb.connect()
    con.register("original_codes", data)
    con.register("qit", qit)
    con.register("st", st)
    got, zero = anatomy_term(con, "qit", "st", '"a", "b"', '"s"', order=order, chunks=chunks)
    want, want_zero = _brute(data, qit, st)
    assert zero == want_zero
    if got is None:
        assert want == 0.0 and want_zero == len(set(zip(data.a, data.b, data.s, strict=True)))
    else:
        assert got == pytest.approx(want, rel=1e-9, abs=1e-9)
