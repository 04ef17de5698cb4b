"""The verifier's own reading of what each guarantee asks of an attack and of the posterior,
from its manifest form (``{"name": ..., params}``) — beside :mod:`versapub.verify.guarantees.group_checks`,
sharing nothing with the publisher's guarantee classes.

* ``min_values``: a target the attacks leave with fewer possible sensitive values than this
  is disclosed — the fewest distinct values a group meeting the guarantee can hold.
* ``posterior``: the largest ``P(S = s | Q = q)`` the release may allow under its
  maximum-entropy model (1: the guarantee bounds no single value's share).

Per guarantee, from its definition:

=========================  ===========================================  =================
guarantee                  min_values                                   posterior
=========================  ===========================================  =================
l-diversity (frequency)    ``l`` (fewer values leave one above 1/l)     ``1/l``
distinct-l-diversity       ``l``                                        1
entropy-l-diversity        ``ceil(l)`` (``H <= log m`` with m values)   1
recursive-cl-diversity     ``l`` (``r_l`` must exist)                   ``c / (c + 1)``
                                                                        (``r_1 < c (n - r_1)``)
k-anonymity                1                                            1
t-closeness                1                                            1 (bounds a
                                                                        distance, not a share)
beta-likeness              1                                            1 (bounds a share
                                                                        by the table's)
delta-disclosure           1 (every value, as the table's: not known    1 (as beta-likeness)
                           from the parameters)
k-map                      1                                            1
delta-presence             1 (bounds presence, not values)              1
functional-diversity       one more than the last ``k`` with            ``phi(1)``
                           ``phi(k) < 1`` (``F(k) < 1`` needs > k)
all-of                     the largest of its parts'                    the smallest
differential-privacy       1 (bounds what one record changes, not a     1
                           group's values; its ledger is checked by
                           :mod:`versapub.verify.dp.dp_checks`)
=========================  ===========================================  =================
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from versapub.verify.guarantees.group_checks import SpecError, _number, bounding_function, presence_bounds, sample_k


class Thresholds(Protocol):
    """What the attacks and the posterior check read of a guarantee."""

    def min_possible_values(self) -> int: ...

    def posterior_limit(self) -> float: ...


@dataclass(frozen=True)
class Threshold:
    """One guarantee as the attacks and the posterior check read it (module docstring)."""

    spec: dict[str, Any]
    min_values: int
    posterior: float
    #: Per value of table-wide share ``p``, the largest share a group may give it (issue 64):
    #: ``p + add``, ``p * mul`` (``enhanced``: ``p (1 + min(mul - 1, -ln p))``), else ``posterior``.
    add: float | None = None
    mul: float | None = None
    enhanced: bool = False

    @property
    def name(self) -> str:
        return str(self.spec.get("name"))

    def min_possible_values(self) -> int:
        return self.min_values

    def posterior_limit(self) -> float:
        return self.posterior

    def value_limits(self, p: Any) -> Any:
        """Per value of table-wide share ``p`` (an array), what the guarantee lets a group give
        it: ``p + t`` (t-closeness, read with equal distances), ``(1 + beta) p``
        (beta-likeness; enhanced: ``p (1 + min(beta, -ln p))``), ``p e^delta``
        (delta-disclosure), else the posterior limit; never above 1."""
        import numpy as np

        q = np.asarray(p, dtype=np.float64)
        if self.add is not None:
            out = q + self.add
        elif self.mul is not None and self.enhanced:
            out = q * (1 + np.minimum(self.mul - 1, -np.log(np.maximum(q, 1e-300))))
        elif self.mul is not None:
            out = q * self.mul
        else:
            out = np.full(q.shape, self.posterior)
        return np.minimum(1.0, np.minimum(out, self.posterior))

    def to_manifest(self) -> dict[str, Any]:
        return dict(self.spec)


def threshold(spec: dict[str, Any]) -> Threshold:
    """The thresholds of the guarantee ``spec`` (its manifest form); :class:`SpecError` for an
    unknown name or a parameter out of range."""
    if not isinstance(spec, dict):
        raise SpecError(f"a guarantee must be an object like {{'name': ...}}, got {spec!r}")
    name = str(spec.get("name", "")).lower()
    if name == "l-diversity":
        l = int(_number(spec, "l", True, 2))
        return Threshold(spec, l, 1.0 / l)
    if name == "distinct-l-diversity":
        return Threshold(spec, int(_number(spec, "l", True, 2)), 1.0)
    if name == "entropy-l-diversity":
        return Threshold(spec, math.ceil(_number(spec, "l", False, 1.0000001)), 1.0)
    if name == "recursive-cl-diversity":
        c, l = _number(spec, "c", False, 1e-12), int(_number(spec, "l", True, 2))
        return Threshold(spec, l, c / (c + 1))
    if name == "k-anonymity":
        _number(spec, "k", True, 2)
        return Threshold(spec, 1, 1.0)
    if name == "t-closeness":  # a hierarchical distance moves mass further: no per-value limit read there
        t = _number(spec, "t", False, 1e-12, 1.0)
        return Threshold(spec, 1, 1.0, add=None if spec.get("distance") == "hierarchical" else t)
    if name == "beta-likeness":  # bounds each share by p (1 + beta): table-dependent, as t-closeness
        beta = _number(spec, "beta", False, 1e-300)
        return Threshold(spec, 1, 1.0, mul=1 + beta, enhanced=bool(spec.get("enhanced")))
    if name == "delta-disclosure":  # every class holds every value; the share bound p e^delta is table-dependent
        delta = _number(spec, "delta", False, 1e-300)
        return Threshold(spec, 1, 1.0, mul=math.exp(delta))
    if name == "k-map":
        if "fraction" in spec:  # else checked against the population (population_checks)
            sample_k(spec)
        else:
            _number(spec, "k", True, 2)
        return Threshold(spec, 1, 1.0)
    if name == "delta-presence":  # bounds the probability of presence in the data, not a sensitive value
        presence_bounds(spec)
        return Threshold(spec, 1, 1.0)
    if name == "functional-diversity":
        phi = bounding_function(spec)
        below = [k for k, v in enumerate(phi, start=1) if v < 1]
        return Threshold(spec, max(below) + 1 if below else 1, float(phi[0]))
    if name == "all-of":
        parts = spec.get("guarantees")
        if not isinstance(parts, list) or len(parts) < 2:
            raise SpecError("all-of needs a list of at least two guarantees")
        each = [threshold(p) for p in parts]
        tight = min(each, key=lambda t: (t.add if t.add is not None else 2.0, t.mul or 3.0))  # the per-value limit
        return Threshold(
            spec, max(t.min_values for t in each), min(t.posterior for t in each), tight.add, tight.mul, tight.enhanced
        )
    if name == "differential-privacy":
        _number(spec, "epsilon", False, 1e-300)
        _number(spec, "delta", False, 0.0, 1.0)
        return Threshold(spec, 1, 1.0)
    raise SpecError(f"cannot check unknown guarantee {name!r}")
