"""``texas_like``: a SYNTHETIC stand-in for the Texas inpatient discharge data.

The real Texas PUDF cannot be redistributed (its data-use agreement forbids it), so
this generator produces a table with the 18 attribute names and domain sizes of
Table 5b of Jin et al. (KDD 2010) and a plausible dependence structure:

* ``county`` is skewed (Zipf-like); every ``pat_zip`` lies in one county; hospitals
  (``thcic``) lie in counties and patients mostly use a hospital of their county;
* ``race`` depends on the county; ``gender`` and ``pat_age`` depend on the major
  diagnostic category (MDC 14 pregnancy: female; MDC 15 newborns: age group 0);
* ``hcfa_drg`` is nested in ``hcfa_mdc``; ``apr_drg`` mostly follows ``hcfa_drg``;
  the principal diagnosis ``prn_diag`` and the procedure ``p_icd9`` are drawn from
  DRG-specific code sets; ``ad_diag`` (admitting) mostly maps from ``prn_diag``;
  secondary diagnoses ``diag1..3`` mix DRG-related codes and common comorbidities;
* ``rsk_mor`` (risk of mortality) rises with age; attending physicians (``and_md``)
  and surgeons (``surgeon``) are nested in hospitals.

Values are zero-padded code numbers (``gender`` is F/M).  Not every domain value
need occur in a small sample.  It is NOT real data and says nothing about Texas.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.csv as pacsv

from versapub.data.table import CODE_DTYPE, Column, EncodedTable

#: Table 5b of Jin et al.: attribute -> domain size.
TEXAS_LIKE_DOMAINS: dict[str, int] = {
    "thcic": 323,
    "gender": 2,
    "pat_zip": 1581,
    "county": 241,
    "pat_age": 22,
    "race": 5,
    "ad_diag": 3391,
    "prn_diag": 3488,
    "diag1": 3881,
    "diag2": 4193,
    "diag3": 4251,
    "p_icd9": 1708,
    "hcfa_mdc": 24,
    "hcfa_drg": 396,
    "apr_drg": 297,
    "rsk_mor": 6,
    "and_md": 15000,
    "surgeon": 17432,
}

#: Nine rules in the spirit of the Texas user manual (hospital+gender protects the zip
#: code and county; diagnoses protect the zip code; ...).  All feasible at l = 10.
TEXAS_LIKE_RULES: tuple[str, ...] = (
    "thcic, gender -> pat_zip",
    "thcic, gender -> county",
    "prn_diag -> pat_zip",
    "prn_diag, race -> county",
    "thcic, race -> pat_zip",
    "pat_age, gender, race -> prn_diag",
    "thcic, pat_age -> surgeon",
    "hcfa_drg, gender -> and_md",
    "pat_zip, pat_age -> diag1",
)

IntArray = npt.NDArray[np.int64]


def _zipf(rng: np.random.Generator, size: int, card: int, s: float) -> IntArray:
    w = 1.0 / np.arange(1, card + 1) ** s
    return rng.choice(card, size=size, p=w / w.sum()).astype(np.int64)


def _allocate(
    parent_weights: npt.NDArray[np.float64], n_children: int, rng: np.random.Generator
) -> tuple[IntArray, IntArray]:
    """Split ``n_children`` child codes into contiguous blocks per parent (sizes roughly
    proportional to the parent's weight, at least 1 when possible).  Returns (start, size)."""
    k = len(parent_weights)
    base = np.ones(k, dtype=np.int64) if n_children >= k else np.zeros(k, dtype=np.int64)
    rest = n_children - int(base.sum())
    p = parent_weights / parent_weights.sum()
    extra = rng.multinomial(rest, p) if rest > 0 else np.zeros(k, dtype=np.int64)
    size = base + extra
    start = np.concatenate([[0], np.cumsum(size)[:-1]]).astype(np.int64)
    return start, size.astype(np.int64)


def _nested(parent: IntArray, start: IntArray, size: IntArray, rng: np.random.Generator, skew: float) -> IntArray:
    """A child code inside the parent's block, skewed towards the block's first codes."""
    u = rng.random(len(parent)) ** skew
    sz = size[parent]
    off = np.minimum((u * sz).astype(np.int64), np.maximum(sz - 1, 0))
    return start[parent] + off


def _weights(card: int, s: float) -> npt.NDArray[np.float64]:
    return np.asarray(1.0 / np.arange(1, card + 1, dtype=np.float64) ** s, dtype=np.float64)


def texas_like_codes(n: int, seed: int = 0) -> dict[str, IntArray]:
    """Raw codes of every attribute (0-based, within Table 5b's domain sizes)."""
    if n <= 0:
        raise ValueError("n must be positive")
    rng = np.random.default_rng(seed)
    return _draw(n, rng, rng)


def texas_like_parts(n: int, part_rows: int, seed: int = 0) -> Iterator[dict[str, IntArray]]:
    """``n`` records of one texas_like-style population in parts of ``part_rows`` (the
    last may be shorter), one part in memory at a time: the population's structure (the
    nesting of zip codes in counties, of DRGs in MDCs, the code maps, the doctors of each
    hospital) is drawn once from ``seed``; each part's records from their own generator.
    (Not the same records as ``texas_like(n, seed)``, whose one generator interleaves
    structure and records.)"""
    if n <= 0 or part_rows <= 0:
        raise ValueError("n and part_rows must be positive")

    def structure() -> np.random.Generator:
        return np.random.default_rng([seed, 0])

    pilot = _draw(min(n, part_rows), structure(), np.random.default_rng([seed, 1, 0]))
    doctors = np.bincount(pilot["thcic"], minlength=TEXAS_LIKE_DOMAINS["thcic"]).astype(np.float64) + 0.5
    for i, start in enumerate(range(0, n, part_rows)):
        yield _draw(min(part_rows, n - start), structure(), np.random.default_rng([seed, 1, i]), doctors)


def _draw(
    n: int, st: np.random.Generator, rec: np.random.Generator, doctors: npt.NDArray[np.float64] | None = None
) -> dict[str, IntArray]:
    """The module docstring's model: ``st`` draws the population's structure, ``rec`` the
    records (the same generator for both: :func:`texas_like_codes`' draw order);
    ``doctors``: each hospital's weight when allocating doctors (default: its records + 1/2)."""
    d = TEXAS_LIKE_DOMAINS
    cw = _weights(d["county"], 0.75)
    county = rec.choice(d["county"], size=n, p=cw / cw.sum()).astype(np.int64)
    zs, zn = _allocate(cw, d["pat_zip"], st)
    pat_zip = _nested(county, zs, zn, rec, 1.6)
    hs, hn = _allocate(cw, d["thcic"], st)
    has_h = hn[county] > 0
    local = has_h & (rec.random(n) < 0.85)
    hospital_global = rec.choice(d["thcic"], size=n, p=_p(_weights(d["thcic"], 0.6))).astype(np.int64)
    thcic = np.where(local, _nested(county, hs, np.maximum(hn, 1), rec, 1.5), hospital_global)
    thcic = np.minimum(thcic, d["thcic"] - 1)

    mdc = _zipf(rec, n, d["hcfa_mdc"], 0.9)
    ds, dn = _allocate(_weights(d["hcfa_mdc"], 0.5), d["hcfa_drg"], st)
    drg = _nested(mdc, ds, dn, rec, 1.8)
    apr_map = st.integers(0, d["apr_drg"], size=d["hcfa_drg"])
    apr = np.where(rec.random(n) < 0.85, apr_map[drg], rec.integers(0, d["apr_drg"], size=n))

    ps, pn = _allocate(_weights(d["hcfa_drg"], 0.3), d["prn_diag"], st)
    prn = _nested(drg, ps, pn, rec, 1.7)
    ad_map = st.integers(0, d["ad_diag"], size=d["prn_diag"])
    ad = np.where(rec.random(n) < 0.6, ad_map[prn], _zipf(rec, n, d["ad_diag"], 0.7))
    secondary = {}
    for name in ("diag1", "diag2", "diag3"):
        m = st.integers(0, d[name], size=d["prn_diag"])
        secondary[name] = np.where(rec.random(n) < 0.4, m[prn], _zipf(rec, n, d[name], 0.8))
    qs, qn = _allocate(_weights(d["hcfa_drg"], 0.3), d["p_icd9"], st)
    proc = _nested(drg, qs, qn, rec, 1.5)

    female = np.where(mdc == 13, 1.0, 0.55)  # MDC 14 (code 13): pregnancy
    gender = (rec.random(n) >= female).astype(np.int64)  # 0 = F, 1 = M
    age = np.clip(np.round(rec.normal(12, 5, size=n)), 1, d["pat_age"] - 1).astype(np.int64)
    age = np.where(mdc == 14, 0, age)  # MDC 15 (code 14): newborns
    race_p = st.dirichlet(np.array([6.0, 2.0, 3.0, 0.7, 0.5]), size=d["county"])
    cum = np.cumsum(race_p, axis=1)[county]
    race = (rec.random(n)[:, None] > cum).sum(axis=1).clip(0, d["race"] - 1).astype(np.int64)
    rsk = np.clip(age // 4 + rec.integers(-1, 2, size=n), 0, d["rsk_mor"] - 1).astype(np.int64)

    hw = np.bincount(thcic, minlength=d["thcic"]).astype(np.float64) + 0.5 if doctors is None else doctors
    ms, mn = _allocate(hw, d["and_md"], st)
    and_md = _nested(thcic, ms, mn, rec, 1.3)
    ss, sn = _allocate(hw, d["surgeon"], st)
    surgeon = _nested(thcic, ss, sn, rec, 1.3)
    return {
        "thcic": thcic,
        "gender": gender,
        "pat_zip": pat_zip,
        "county": county,
        "pat_age": age,
        "race": race,
        "ad_diag": ad,
        "prn_diag": prn,
        "diag1": secondary["diag1"],
        "diag2": secondary["diag2"],
        "diag3": secondary["diag3"],
        "p_icd9": proc,
        "hcfa_mdc": mdc,
        "hcfa_drg": drg,
        "apr_drg": apr,
        "rsk_mor": rsk,
        "and_md": and_md,
        "surgeon": surgeon,
    }


def _p(w: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    return w / w.sum()


def _labels(name: str, card: int) -> npt.NDArray[np.object_]:
    if name == "gender":
        return np.array(["F", "M"], dtype=object)
    if name == "race":
        return np.array(["1-white", "2-black", "3-hispanic", "4-asian", "5-other"], dtype=object)
    width = len(str(card))
    return np.array([f"{i + 1:0{width}d}" for i in range(card)], dtype=object)


def texas_like(n: int = 177_148, seed: int = 0) -> EncodedTable:
    """A synthetic ``n``-record table with Table 5b's 18 attributes (see module docstring)."""
    cols = []
    for name, codes in texas_like_codes(n, seed).items():
        labels = _labels(name, TEXAS_LIKE_DOMAINS[name])
        present = np.flatnonzero(np.bincount(codes, minlength=len(labels)))
        rank = np.zeros(len(labels), dtype=CODE_DTYPE)
        rank[present] = np.arange(len(present), dtype=CODE_DTYPE)
        cols.append(Column(name, rank[codes], labels[present]))
    return EncodedTable(tuple(cols), source=f"texas_like(n={n}, seed={seed})")


def write_texas_like_parquet(directory: str | Path, n: int, part_rows: int = 1_000_000, seed: int = 0) -> Path:
    """Write ``n`` texas_like-style records (:func:`texas_like_parts`) as a Parquet
    dataset, one file per part, never holding more than one part in memory."""
    import pyarrow.parquet as pq

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=False)
    labels = {
        name: pa.array(_labels(name, card).astype(str), type=pa.string()) for name, card in TEXAS_LIKE_DOMAINS.items()
    }
    for i, part in enumerate(texas_like_parts(n, part_rows, seed)):
        arrays = [labels[name].take(pa.array(codes)) for name, codes in part.items()]
        pq.write_table(pa.Table.from_arrays(arrays, names=list(part)), out / f"part-{i:05d}.parquet")
    return out


def write_texas_like(path: str | Path, n: int, seed: int = 0) -> Path:
    """Write ``texas_like(n, seed)`` as a CSV file (for end-to-end benchmarks)."""
    p = Path(path)
    table = texas_like(n, seed)
    arrays = [pa.array(c.values.astype(str), type=pa.string()).take(pa.array(c.codes)) for c in table.columns]
    pacsv.write_csv(pa.Table.from_arrays(arrays, names=list(table.names)), p)
    return p
