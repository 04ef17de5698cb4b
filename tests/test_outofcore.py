"""The out-of-core KL term of an Anatomy table (model/outofcore.anatomy_term) against a
brute-force sum in Python, in both join orders; the memory shares of the DuckDB
connections that read large releases (data/sql.connect), side by side in ``check``."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
import pytest

import versapub.verify.check as check
from versapub.data.sql import connect, machine_memory, memory_share
from versapub.model.outofcore import anatomy_term

TABLE2 = Path(__file__).parent / "fixtures" / "table2"


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
@pytest.mark.parametrize(
    ("order", "chunks"), [("pairs", None), ("groups", None), (None, None), ("pairs", 3), ("groups", 4)]
)
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


def _setting(con: duckdb.DuckDBPyConnection, name: str) -> str:
    row = con.execute(f"SELECT current_setting('{name}')").fetchone()
    assert row is not None
    return str(row[0])


def test_connect_holds_its_share_and_removes_its_spill_directory() -> None:
    with connect(0.5) as half:
        want = _setting(half, "memory_limit")
    with memory_share(0.5), connect() as con:
        assert _setting(con, "memory_limit") == want
        assert _setting(con, "enable_progress_bar").lower() == "false"
        spill = Path(_setting(con, "temp_directory"))
        assert spill.is_dir()
        assert con.execute("SELECT sum(i) FROM range(1000000) t(i)").fetchone() == (499999500000,)
    assert not spill.exists()
    with connect(1e-9) as tiny:  # never below 1 GB
        assert _setting(tiny, "memory_limit") in ("1.0 GiB", "1024.0 MiB", "1 GiB")
    with pytest.raises(ValueError, match="memory share"), memory_share(1.5):
        pass


def test_checks_side_by_side_each_hold_their_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_check`` runs its checks in threads; a connection opened inside a check holds
    that check's share of the memory (at 10^8 records, uncapped connections side by side
    held 22 GB), and the shares together stay below the machine's memory."""
    assert sum(check.MEMORY_SHARES.values()) < 1
    seen: dict[str, tuple[str, Path]] = {}

    def probe(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with connect() as con:
                seen[name] = (_setting(con, "memory_limit"), Path(_setting(con, "temp_directory")))
            return real(*args, **kwargs)

        return wrapped

    for name, fn in (
        ("verify", "verify_release"),
        ("attacks", "run_attacks"),
        ("posterior", "group_bounds"),
        ("identity", "identity_check"),
    ):
        monkeypatch.setattr(check, fn, probe(name, getattr(check, fn)))
    rep = check.run_check(TABLE2)
    assert set(seen) == {"verify", "attacks", "posterior", "identity"}, rep.verification.explain()
    for name, (limit, spill) in seen.items():
        with connect(check.MEMORY_SHARES[name]) as con:
            assert limit == _setting(con, "memory_limit"), name
        assert not spill.exists()
    if machine_memory() * check.MEMORY_SHARES["identity"] > 1.5 * 2**30:  # above the 1 GB floor: distinct
        assert seen["verify"][0] != seen["identity"][0]
