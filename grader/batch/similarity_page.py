"""``similarity.html``: what the similarity pass found, each finding with both sources side by side.

Submissions that match a published answer come first (each with the published file
beside it), then pairs of submissions, then what a time budget left uncompared. The
page is self-contained (inline CSS, no scripts, no remote assets) and autoescaped.
"""

from __future__ import annotations

import difflib

from markupsafe import Markup, escape

from grader.batch.similarity import Pair, Similarity, Submission
from grader.reports import templating
from grader.untrusted import shown

_env = templating.environment("grader.batch")


#: The side-by-side view shows at most this many lines of each file, each cut at MAX_LINE characters,
#: and only the first MAX_VIEWS findings get one: the page stays readable and its cost bounded.
MAX_VIEW_LINES, MAX_LINE, MAX_VIEWS = 1000, 300, 100


def pair_anchors(pairs: list[Pair]) -> dict[Pair, str]:
    """The ``id`` each pair has in :func:`render_similarity_html` (``pair-1``, ...), for links."""
    return {p: f"pair-{i}" for i, p in enumerate(pairs, 1)}


def _view_lines(source: str) -> tuple[list[str], bool]:
    # shown(): control and bidi characters as escapes, which also keeps out the \0 and \1 HtmlDiff marks
    # changes with before it swaps them for <span> tags.
    lines = shown(source.replace("\r\n", "\n")).splitlines()
    shown_lines = [line if len(line) <= MAX_LINE else line[:MAX_LINE] + " …" for line in lines[:MAX_VIEW_LINES]]
    return shown_lines, len(lines) > MAX_VIEW_LINES or shown_lines != lines[:MAX_VIEW_LINES]


def _side_by_side(a: Submission, b: Submission) -> tuple[Markup, bool]:
    """difflib's side-by-side table of the two original sources (cut to the limits above), and whether it was cut.

    ``HtmlDiff`` escapes ``&``, ``<`` and ``>`` in every line it shows (its
    ``_format_line``; tests/test_similarity.py checks), but not the column headings,
    so those are escaped here before the table is marked safe.
    """
    (left, cut_a), (right, cut_b) = _view_lines(a.source), _view_lines(b.source)
    table = difflib.HtmlDiff(tabsize=4, wrapcolumn=72).make_table(
        left, right,
        fromdesc=str(escape(shown(a.candidate))),
        todesc=str(escape(shown(b.candidate))),
    )
    return Markup(table), cut_a or cut_b


def _fmt_score(score: float | None) -> str:
    return "—" if score is None else f"{score:.2f}".rstrip("0").rstrip(".")


def render_similarity_html(pairs: list[Pair] | Similarity, *, title: str = "Similar submissions") -> str:
    """A self-contained page (inline CSS, no scripts, no remote assets): one section per published match,
    one per pair, then what a time budget left uncompared."""
    found = pairs if isinstance(pairs, Similarity) else Similarity(list(pairs))
    views = iter(range(MAX_VIEWS))  # the first MAX_VIEWS findings (matches first) get a side-by-side view

    def view(a: Submission, b: Submission) -> tuple[Markup | None, bool]:
        return _side_by_side(a, b) if next(views, None) is not None else (None, False)

    published = []
    for m in found.published:
        theirs = Submission(m.file.label, m.submission.exercise, m.file.source, None)
        table, cut = view(m.submission, theirs)
        published.append(dict(anchor=m.anchor, match=m, percent=f"{100 * m.similarity:.1f}",
                              score=_fmt_score(m.submission.score), table=table, cut=cut))
    rows = []
    for p, anchor in pair_anchors(found.pairs).items():
        table, cut = view(p.a, p.b)
        rows.append(dict(anchor=anchor, pair=p, percent=f"{100 * p.similarity:.1f}", score_a=_fmt_score(p.a.score),
                         score_b=_fmt_score(p.b.score), table=table, cut=cut))
    return _env.get_template("similarity.html.j2").render(
        title=title, rows=rows, published=published, published_files=found.published_files,
        unchecked=found.unchecked, unchecked_count=found.unchecked_count,
        budget_s=found.budget_s, limits=dict(lines=MAX_VIEW_LINES, chars=MAX_LINE, views=MAX_VIEWS))
