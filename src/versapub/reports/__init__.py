"""Reports: human-readable descriptions of a release."""

from versapub.reports.summary import markdown_report, summary_rows

__all__ = ["markdown_report", "summary_rows"]
