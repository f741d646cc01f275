"""The grading report (plain data) and the renderers that read only that data."""

from grader.reports.model import CheckResult, Environment, ForbiddenHit, Report, Status, Visibility

__all__ = ["CheckResult", "Environment", "ForbiddenHit", "Report", "Status", "Visibility"]
