"""Verification: independent checks of a written release (shares no code with the producers)."""

from versapub.verify.finding import Finding
from versapub.verify.primitives import VerificationReport
from versapub.verify.release_check import verify_release

__all__ = ["Finding", "VerificationReport", "verify_release"]
