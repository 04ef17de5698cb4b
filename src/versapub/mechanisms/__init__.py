"""Mechanisms: measurements taken with calibrated noise for differentially private releases
(issue 52): zCDP accounting (:mod:`~versapub.mechanisms.accounting`), noise from OpenDP's
vetted sampler (:mod:`~versapub.mechanisms.noise`), marginals measured with their ledger
(:mod:`~versapub.mechanisms.measure`), the adaptive selections MST
(:mod:`~versapub.mechanisms.mst`, with its compression of rare values,
:mod:`~versapub.mechanisms.compress`) and AIM (:mod:`~versapub.mechanisms.aim`), the model
fitted to the noisy marginals by Private-PGM's mirror descent (:mod:`~versapub.mechanisms.fit`)
and the ``dp`` plug-in that runs them (:mod:`~versapub.mechanisms.gaussian`), registered in
:data:`MECHANISMS`."""

from collections.abc import Mapping
from typing import Any

from versapub.plugins import LazyRegistry, build, parse_spec

#: Mechanisms by name, each imported when first named (``--mechanism dp:epsilon=1``).
MECHANISMS: LazyRegistry[Any] = LazyRegistry({"dp": "versapub.mechanisms.gaussian:GaussianMarginals"})


def make_mechanism(name: str, **params: Any) -> Any:
    """The registered mechanism ``name`` built with ``params`` (a clear error lists the valid
    names or parameters)."""
    return build("mechanism", MECHANISMS, name, params)


def parse_mechanism(spec: str | Mapping[str, Any] | Any) -> Any:
    """A mechanism from the command line's ``NAME:p=v,...``, a configuration's table or an object."""
    if isinstance(spec, str):
        name, params = parse_spec(spec, "--mechanism")
        return make_mechanism(name, **params)
    if isinstance(spec, Mapping):
        return make_mechanism(str(spec.get("name", "")), **{k: v for k, v in spec.items() if k != "name"})
    return spec


__all__ = ["MECHANISMS", "make_mechanism", "parse_mechanism"]
