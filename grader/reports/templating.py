"""The one Jinja2 set-up for every page and document the grader renders.

Scorecards (HTML, Markdown), the panel page and the similarity page all print
names, messages and output that came from outside. Autoescaping keeps HTML out of
a page; ``finalize`` additionally passes every printed string through
:func:`grader.untrusted.shown`, so control and bidi characters are shown, never
obeyed, in every template at once: escaping at the edge, not per variable.
"""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from grader.untrusted import shown


def _finalize(value):
    # Markup is HTML the grader built itself (escaped already where it holds outside text).
    if isinstance(value, str) and not isinstance(value, Markup):
        return shown(value)
    return value


def environment(package: str) -> Environment:
    """Templates of ``package``'s ``templates/`` folder: ``*.html.j2`` autoescaped, ``*.md.j2`` not."""
    return Environment(
        loader=PackageLoader(package, "templates"),
        # "x.html.j2" ends in ".j2": list "html.j2" too, or the HTML would not be escaped.
        autoescape=select_autoescape(["html", "htm", "html.j2"], default_for_string=True, default=False),
        undefined=StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
