"""Verification: independent checks of a written release (shares no code with the producers)."""

from versapub.verify.release_check import Finding, VerificationReport, verify_release

__all__ = ["Finding", "VerificationReport", "verify_release"]
