"""Numbers a steward can judge (issue 29): the workload's median first and what pulls the mean,
KL-divergence without a 0.000 that reads as failure, and a remark when the release keeps less
than publishing every attribute alone."""

from __future__ import annotations

import numpy as np

from versapub.model.utility import SMALL_COUNT, RelativeError
from versapub.reports.summary import kl_text, workload_text

W = {"qd": 3, "p": 0.4}


def test_the_median_comes_first_and_the_mean_says_what_pulls_it() -> None:
    actual = np.array([1.0] * 12 + [500.0] * 88)
    est = np.where(actual < SMALL_COUNT, 60.0, actual * 1.02)
    err = np.abs(actual - est) / actual
    r = RelativeError(float(err.mean()), float(np.median(err)), err, est, 100, 0, 0.0, actual).to_json()
    assert r["share_small_counts"] == 0.12 and r["median_large_counts"] == np.float64(0.02).item()
    text = workload_text(r, W)
    assert text.index("median") < text.index("mean")
    assert "pulled up by the 12.0% of queries that count fewer than 10 records" in text
    plain = workload_text({**r, "mean": r["median"]}, W)  # nothing pulls it: no remark
    assert "pulled up" not in plain


def test_kl_reads_without_a_zero_and_with_its_reference() -> None:
    tiny = kl_text({"kl_divergence": 9.5, "exp_minus_kl": 7.5e-5, "kl_all_attributes_alone": 12.0})
    assert "0.000" not in tiny and "7.5e-05" in tiny and "rather than with 0" in tiny
    worse = kl_text({"kl_divergence": 2.41, "exp_minus_kl": 0.09, "kl_all_attributes_alone": 0.90})
    assert "Worse than publishing every attribute alone (2.4100 > 0.9000)" in worse
    better = kl_text({"kl_divergence": 0.5, "exp_minus_kl": 0.6, "kl_all_attributes_alone": 0.90})
    assert "Worse" not in better and "60% as likely" in better
