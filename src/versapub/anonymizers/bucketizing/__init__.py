"""The bucketizing family: values published exactly, links hidden inside groups (Anatomy,
multi-SA publishing, the MSA decomposition)."""
