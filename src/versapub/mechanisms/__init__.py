"""Mechanisms: measurements taken with calibrated noise for differentially private releases
(issue 52): zCDP accounting (:mod:`~versapub.mechanisms.accounting`), noise from OpenDP's
vetted sampler (:mod:`~versapub.mechanisms.noise`) and marginals measured with their ledger
(:mod:`~versapub.mechanisms.measure`)."""
