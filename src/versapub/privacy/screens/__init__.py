"""The column screens: column roles and decisions, likely identifiers, cell risk, and the
columns that (alone or together) reveal a protected attribute."""
