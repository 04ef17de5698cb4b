"""The range a release allows for a count: the value every bound of
:mod:`versapub.model.bounds` is (``lower``, ``upper``, whether it is sharp, and whether it is
a hard range over consistent tables or a statistical interval)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

#: What a range is over: every table consistent with the release (hard), or an interval.
BASES = ("release", "pram-variance", "treated", "dp-noise")


@dataclass(frozen=True)
class Bound:
    """``lower <= count <= upper``.

    * ``basis == "release"``: over every non-negative integer table over the input's domain
      whose projections equal the published tables; the true count is always inside, and
      ``sharp`` says that some consistent table reaches each end.
    * ``"pram-variance"``: a 95 % interval of the PRAM-corrected estimate (statistical).
    * ``"treated"``: the range the published, perturbed values allow (statistical: a
      treatment moved values, so the true count is not bounded by it).
    * ``"dp-noise"``: a 95 % interval from the noise of a differentially private release's
      measured marginal (:mod:`versapub.model.noise_interval`); with no ``method``, no
      measured marginal holds the query and there is no interval.
    """

    lower: float
    upper: float
    sharp: bool
    basis: str = "release"
    #: How it was computed, in a few words ("per group", "integer program", ...).
    method: str = ""

    def __post_init__(self) -> None:
        if self.basis not in BASES:
            raise ValueError(f"Unknown basis {self.basis!r} of a range; one of {', '.join(BASES)}.")
        if math.isnan(self.lower) or math.isnan(self.upper) or self.lower > self.upper + 1e-9:
            raise ValueError(f"A range needs lower <= upper, got {self.lower} and {self.upper}.")

    @property
    def statistical(self) -> bool:
        return self.basis != "release"

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def contains(self, value: float, slack: float = 1e-6) -> bool:
        return self.lower - slack <= value <= self.upper + slack

    def to_dict(self) -> dict[str, Any]:
        return {
            "lower": self.lower,
            "upper": self.upper,
            "sharp": self.sharp,
            "statistical": self.statistical,
            "basis": self.basis,
            "method": self.method,
        }

    def text(self) -> str:
        """``any table consistent with the release: 0 to 2,369`` (or the interval's words)."""
        ends = f"{_num(self.lower)} to {_num(self.upper)}"
        if self.basis == "pram-variance":
            return f"95 % interval of the PRAM correction: {ends}"
        if self.basis == "dp-noise":
            if not self.method:
                return (
                    "no interval: no measured marginal holds all of the query's attributes (the model's estimate alone)"
                )
            return f"95 % interval from the noise of {self.method}: {ends}"
        if self.basis == "treated":
            return f"the treated values allow {ends}; the treatment moved values, the true count is not bounded"
        return f"any table consistent with the release: {ends}" + ("" if self.sharp else ", not sharp")


def _num(x: float) -> str:
    return f"{x:,.0f}" if abs(x - round(x)) < 1e-9 else f"{x:,.1f}"


def integral(lower: float, upper: float) -> tuple[float, float]:
    """Counts are integers: the lower end rounded up and the upper down (with float slack)."""
    lo = float(math.ceil(lower - 1e-6))
    hi = float(math.floor(upper + 1e-6))
    return max(lo, 0.0), max(hi, max(lo, 0.0))
