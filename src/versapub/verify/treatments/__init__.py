"""What the release's treatments and recodings did, checked from the files: the perturbative
treatments the manifest declares (sdcMicro's coding, rounding, microaggregation, noise, PRAM
and swapping; the k of microaggregated combinations), the columns recoded for ``--k``, the
records removed by suppression (ARX's semantics) and, with the original, what the treatments
changed record by record."""
