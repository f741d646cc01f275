"""Render a :class:`~grader.reports.model.Report` as HTML or Markdown, and write report files.

Every format renders the one scorecard view (:func:`grader.reports.scorecard.scorecard_view`),
redacted for its audience before any template sees it.

Candidate output and messages are untrusted text. HTML templates are autoescaped;
Markdown goes through :func:`md_text`, :func:`md_code` and :func:`md_fence`.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from grader.atomic import atomic_write
from grader.errors import UsageError
from grader.reports import templating
from grader.reports.headline import short_hash
from grader.reports.model import Report
from grader.reports.redact import for_audience
from grader.reports.scorecard import scorecard_view
from grader.reports.views import Audience, check_audience

# --- Markdown escaping ------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|~])")


def _html_entities(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def md_text(value: object) -> str:
    """Untrusted text as inline Markdown, safe in a table cell too.

    No raw HTML (``<`` ``>`` ``&`` as entities), pipes and formatting characters
    backslash-escaped, line breaks as ``<br>`` so a cell stays on one line.
    """
    text = _MD_SPECIAL.sub(r"\\\1", _html_entities(str(value or "").strip()))
    return "<br>".join(line.strip() for line in text.splitlines())


def md_code(value: object) -> str:
    """Untrusted text as a one-line Markdown code span, safe in a table cell."""
    text = " ".join(str(value or "").split()).replace("|", "\\|")
    if not text:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def md_fence(value: object, lang: str = "text") -> str:
    """A fenced code block that the content cannot close early (fence longer than any backtick run)."""
    text = str(value or "").rstrip("\n")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


# --- Templates ----------------------------------------------------------------------------------

_env = templating.environment("grader.reports")
_env.filters.update(md_text=md_text, md_code=md_code, md_fence=md_fence, short_hash=short_hash)


def render_html(report: Report, *, audience: Audience = "panel") -> str:
    """A self-contained HTML scorecard (inline CSS, no scripts, no remote assets)."""
    return _env.get_template("scorecard.html.j2").render(v=scorecard_view(report, audience=audience))


def render_markdown(report: Report, *, audience: Audience = "panel") -> str:
    """A Markdown scorecard (GitHub-flavoured tables)."""
    return _env.get_template("scorecard.md.j2").render(v=scorecard_view(report, audience=audience))


# --- Files ---------------------------------------------------------------------------------------


def _check_target(path: str | os.PathLike[str], kind: str) -> Path:
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"Cannot write the {kind} report to {str(p)!r}: it is a directory.",
                         hint=f"Give a file path, e.g. {str(p / ('report.' + kind.lower()))!r}.")
    if p.suffix.lower() == ".py" or (p.exists() and p.resolve().suffix.lower() == ".py"):
        raise UsageError(f"Refusing to write the {kind} report to {str(p)!r}: it is a Python file "
                         "(a report never overwrites code).",
                         hint=f"Use a .{kind.lower()} path instead.")
    return p


def check_report_paths(
    *,
    json_path: str | os.PathLike[str] | None = None,
    html_path: str | os.PathLike[str] | None = None,
    md_path: str | os.PathLike[str] | None = None,
) -> list[tuple[Path, str]]:
    """Validate where reports would go, before any grading: ``[(path, kind), ...]``.

    A directory, a ``.py`` file or two formats aimed at one file raise
    :class:`~grader.errors.UsageError` naming the path.
    """
    targets: list[tuple[Path, str]] = []
    for path, kind in ((json_path, "JSON"), (html_path, "HTML"), (md_path, "Markdown")):
        if path is not None:
            targets.append((_check_target(path, kind), kind))
    seen: dict[Path, str] = {}
    for p, kind in targets:
        key = p.resolve()
        if key in seen:
            raise UsageError(f"The {seen[key]} and {kind} reports would both be written to {str(p)!r}.")
        seen[key] = kind
    return targets


def write_reports(
    report: Report,
    *,
    json_path: str | os.PathLike[str] | None = None,
    html_path: str | os.PathLike[str] | None = None,
    md_path: str | os.PathLike[str] | None = None,
    audience: Audience = "panel",
) -> list[Path]:
    """Write the requested formats, creating parent folders; return the paths written.

    Every path is checked first (see ``check_report_paths``), so nothing is written
    when one is bad. Every format holds what ``audience`` may see: for a candidate,
    the JSON is :func:`~grader.reports.redact.for_audience`'s copy, which the
    scorecards are rendered from too.
    """
    check_audience(audience)
    targets = check_report_paths(json_path=json_path, html_path=html_path, md_path=md_path)
    report = for_audience(report, audience)

    render = {
        "JSON": lambda: report.to_json() + "\n",
        "HTML": lambda: render_html(report, audience=audience),
        "Markdown": lambda: render_markdown(report, audience=audience),
    }
    written = []
    for p, kind in targets:
        text = render[kind]()
        try:
            with atomic_write(p) as f:  # a reader never sees half a report
                f.write(text)
        except OSError as exc:
            raise UsageError(f"Cannot write the {kind} report to {str(p)!r}: {exc.strerror or exc}.") from exc
        written.append(p)
    return written
