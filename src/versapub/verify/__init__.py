"""Verification: independent checks of a written release (shares no code with the producers:
``tests/test_layers.py`` follows every import). ``check.py`` runs every check; the rooms by
family — ``reading/`` (the verifier's own reading of the manifest and each table kind),
``files/``, ``guarantees/``, ``identity/``, ``attacks/``, ``adversary/``, ``collection/``,
``dp/`` and ``treatments/`` — each say in their ``__init__`` what they check and against
which definition."""

from versapub.verify.files.release_check import verify_release
from versapub.verify.finding import Finding
from versapub.verify.reading.primitives import VerificationReport

__all__ = ["Finding", "VerificationReport", "verify_release"]
