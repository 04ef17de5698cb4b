"""Verification: independent checks of a written release (shares no code with the producers)."""

from versapub.verify.files.release_check import verify_release
from versapub.verify.finding import Finding
from versapub.verify.reading.primitives import VerificationReport

__all__ = ["Finding", "VerificationReport", "verify_release"]
