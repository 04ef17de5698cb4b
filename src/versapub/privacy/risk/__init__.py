"""Risk measures: re-identification (prosecutor, journalist, marketer), population
uniqueness estimates, SUDA and sdcMicro's reading of missing values."""
