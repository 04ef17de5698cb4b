"""Treatments: perturbative methods applied to named columns before the job's anonymization
(issue 48; :mod:`versapub.treatments.base`): top and bottom coding, rounding, microaggregation,
noise, PRAM, rank swapping and targeted record swapping.

Registered by name; :func:`make_treatment` builds one with its parameters
(``make_treatment("top-coding", columns="income", threshold=100000)``), :func:`parse_treatment`
reads the command line's ``--treat "top-coding:columns=income;wealth,quantile=0.99"``.
"""

from collections.abc import Callable, Mapping
from typing import Any

from versapub.plugins import build, parse_spec
from versapub.treatments.base import Treated, Treatment
from versapub.treatments.coding import BottomCoding, Rounding, TopCoding
from versapub.treatments.microaggregation import Microaggregation
from versapub.treatments.noise import Noise
from versapub.treatments.pram import Pram
from versapub.treatments.swapping import RankSwapping, TargetedSwapping

TREATMENTS: dict[str, Callable[..., Treatment]] = {
    "top-coding": TopCoding,
    "bottom-coding": BottomCoding,
    "rounding": Rounding,
    "microaggregation": Microaggregation,
    "noise": Noise,
    "pram": Pram,
    "rank-swapping": RankSwapping,
    "targeted-swapping": TargetedSwapping,
}


def make_treatment(name: str, **params: Any) -> Treatment:
    """The registered treatment ``name`` built with ``params`` (a clear error lists the valid
    names or parameters)."""
    return build("treatment", TREATMENTS, name, params)


def parse_treatment(spec: str | Mapping[str, Any] | Treatment) -> Treatment:
    """A treatment from the command line's ``NAME:p=v,...``, a configuration's table
    (``{name = "...", columns = [...], ...}``) or a treatment object."""
    if isinstance(spec, str):
        name, params = parse_spec(spec, "--treat")
        return make_treatment(name, **params)
    if isinstance(spec, Mapping):
        rest = {k: v for k, v in spec.items() if k != "name"}
        return make_treatment(str(spec.get("name", "")), **rest)
    return spec


__all__ = [
    "TREATMENTS",
    "BottomCoding",
    "Microaggregation",
    "Noise",
    "Pram",
    "RankSwapping",
    "Rounding",
    "TargetedSwapping",
    "TopCoding",
    "Treated",
    "Treatment",
    "make_treatment",
    "parse_treatment",
]
