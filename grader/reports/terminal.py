"""Render a :class:`~grader.reports.model.Report` as a terminal scorecard with rich.

Fits 80 columns and reads without colour (``NO_COLOR``): every status is a symbol
and a word, never a colour alone. Untrusted text (messages, candidate output) is
only ever passed as :class:`rich.text.Text`, never as markup, and terminal control
and bidi characters are shown escaped (``grader.untrusted.shown``), so a candidate cannot restyle or clear the panel's
terminal.
"""

from __future__ import annotations

from rich import box
from rich.console import Console, Group
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from grader.reports.model import Report
from grader.reports.problems import ProblemGroup
from grader.reports.headline import short_hash
from grader.reports.scorecard import ScorecardView, scorecard_view
from grader.reports.views import Audience, CheckView, LoadErrorView
from grader.untrusted import shown

#: Lines of a check's output and of its details shown here; the HTML report has it all.
OUTPUT_LINES = 20
DETAIL_LINES = 15
MESSAGE_CHARS = 90

STYLES = {"passed": "green", "failed": "red", "error": "dark_orange", "timeout": "magenta", "skipped": "dim",
          "check_error": "bold yellow", "not run": "dim"}

# 3x5 pixel glyphs for the score, drawn two pixel rows per line with half blocks.
_GLYPHS = {
    "0": ("111", "101", "101", "101", "111"), "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"), "3": ("111", "001", "111", "001", "111"),
    "4": ("101", "101", "111", "001", "001"), "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"), "7": ("111", "001", "001", "001", "001"),
    "8": ("111", "101", "111", "101", "111"), "9": ("111", "101", "111", "001", "111"),
    "/": ("001", "001", "010", "100", "100"), ".": ("0", "0", "0", "0", "1"), " ": ("0",) * 5,
}
_HALF = {("1", "1"): "█", ("1", "0"): "▀", ("0", "1"): "▄", ("0", "0"): " "}

def big_text(text: str) -> list[str]:
    """``text`` (digits, ``/``, ``.``, spaces) as three lines of block characters."""
    rows = ["".join(_GLYPHS[ch][r] + "0" for ch in text) for r in range(5)] + ["0" * (4 * len(text))]
    return [
        "".join(_HALF[top, bottom] for top, bottom in zip(rows[r], rows[r + 1])).rstrip()
        for r in (0, 2, 4)
    ]


def _status(c: CheckView) -> Text:
    return Text(f"{c.symbol} {c.status}", style=STYLES[c.status])


def _header(v: ScorecardView, width: int) -> Panel:
    title = Text(shown(v.title), style="bold")
    title.append(f"  ({shown(v.exercise)})", style="dim")
    parts: list = [title, ""]
    if v.candidate:
        parts[1:1] = [Text.assemble(("Candidate: ", "bold"), shown(v.candidate))]
    if v.file:
        parts.insert(-1, Text.assemble(("File: ", "bold"), shown(v.file, newlines=False), overflow="fold"))
    if v.graded:
        score = f"{v.score} / {v.max_score}"
        art = big_text(score)
        if max(map(len, art)) <= width - 6:
            parts += [Text("\n".join(art), style="bold"), ""]
        line = Text(f"Score: {score} points", style="bold")
        if v.percent is not None:
            line.append(f"  ({v.percent}%)")
        parts.append(line)
        for note in v.not_counted:  # by the score: a 100% that left checks out says so where it is read
            parts.append(Text(note, style="bold yellow"))
        parts.append(_counts(v))
        border = "green" if v.percent == 100 and not v.not_counted else "blue"
    elif v.check_errors:
        parts.append(Text("NOT GRADED — a check of the grader broke", style="bold red"))
        parts.append(Text(f"Check error: {shown(', '.join(v.check_errors))}", style="yellow"))
        parts.append(Text(shown(v.not_graded_reason), style="dim"))
        if v.not_graded_detail:
            parts.append(Text(shown(v.not_graded_detail), style="dim"))
        parts.append(Text("Nothing was scored: this is not a zero, and not the submission's failure.", style="dim"))
        parts.append(_counts(v))
        border = "red"
    else:
        parts.append(Text("NOT GRADED — rerun", style="bold red"))
        parts.append(Text(f"Reason: {shown(v.not_graded_reason)}", style="red"))
        if v.not_graded_detail:
            parts.append(Text(shown(v.not_graded_detail), style="dim"))
        parts.append(Text("Nothing was scored: this is not a zero.", style="dim"))
        border = "red"
    if v.hidden_summary:
        parts.append(Text(v.hidden_summary))
    if v.timing:
        parts.append(Text(v.timing))
    if v.late:
        parts.append(Text(v.late_note, style="bold red"))
    if v.audience == "candidate":
        parts.append(Text("candidate view", style="dim"))
    return Panel(Group(*parts), border_style=border, padding=(0, 1))


def _counts(v: ScorecardView) -> Text:
    counts = Text()
    for i, c in enumerate(v.counts):
        counts.append(" · " if i else "")
        counts.append(c.text, style=STYLES[c.status])
    return counts


def preview(text: str, limit: int = MESSAGE_CHARS) -> str:
    """``text`` for a table cell: whole when it fits, else cut where a clause ends (never mid-word) with "…";
    the whole message is under "What went wrong"."""
    if len(text) <= limit:
        return text
    head = text[:limit - 1]
    cut = max(head.rfind(mark) for mark in (" (", "; ", ": ", ", "))
    if cut < limit // 2:
        cut = head.rfind(" ")
    return (head[:cut] if cut > 0 else head).rstrip(" :;,") + " …"


def _checks_table(v: ScorecardView) -> Table:
    table = Table(box=box.SIMPLE_HEAD, expand=True, pad_edge=False, title="Checks", title_justify="left",
                  title_style="bold")
    table.add_column("Status", no_wrap=True)
    table.add_column("Check", ratio=3, overflow="fold")
    table.add_column("Points", justify="right", no_wrap=True)
    table.add_column("Message", ratio=4, overflow="fold")
    for c in v.table_checks:
        name = Text(shown(c.name))
        if c.hidden:
            name.append(" (hidden)", style="dim")
        if c.withheld:
            message = Text("details withheld", style="dim italic")
        elif c.redacted:
            message = Text("")
        else:
            summary = preview(shown(c.summary))
            message = Text(summary)
            if c.forbidden_unmentioned:
                message.append(f"{' ' if summary else ''}forbidden: {', '.join(c.forbidden_unmentioned)}", style="red")
        table.add_row(_status(c), name, c.points, message)
    return table


def _capped(text: str, lines: int, *, tail: bool) -> Text:
    """At most ``lines`` lines of ``text`` (the last ones when ``tail``), saying how many were left out."""
    all_lines = shown(text).rstrip("\n").split("\n")
    if len(all_lines) <= lines:
        return Text("\n".join(all_lines))
    kept = all_lines[-lines:] if tail else all_lines[:lines]
    note = Text(f"[{len(all_lines) - lines} more lines not shown here; see the HTML report]", style="dim italic")
    body = Text("\n".join(kept))
    return Text("\n").join([note, body] if tail else [body, note])


def _block(parts: list, label: str, body: Text) -> None:
    parts.append(Text(label, style="bold dim"))
    parts.append(Panel(body, box=box.SQUARE, border_style="dim", padding=(0, 1)))


def _load_error(e: LoadErrorView) -> Group:
    """The file does not import: its cause and line once, then how many checks that cost."""
    parts: list = [Text.assemble(("✗ ", "bold red"), (shown(e.headline), "bold red"))]
    if e.traceback:
        _block(parts, "Your file:", _capped(e.traceback, DETAIL_LINES, tail=True))
    parts.append(Text(e.checks_line))
    return Group(*parts, "")


def _problem(g: ProblemGroup, *, graded: bool) -> Group:
    c = g.first
    heading = _status(c)
    if g.grouped:
        heading.append(f"  {shown(g.heading)}", style="bold")
        parts: list = [heading]
        for member in g.checks:
            line = Text(f"  • {shown(member.name)}")
            if member.hidden:
                line.append(" (hidden)", style="dim")
            if graded:
                line.append(f"  {member.points}")
            parts.append(line)
        rest = c.message.strip().split("\n", 1)[1:]  # the first line is in the heading
        if rest:
            parts.append(Text(shown(rest[0])))
    else:
        heading.append(f"  {shown(c.name)}", style="bold")
        if c.hidden:
            heading.append(" (hidden)", style="dim")
        if graded:
            heading.append(f"  {c.points}")
        parts = [heading]
        if c.message:
            parts.append(Text(shown(c.message)))

    def block(label: str, body: Text) -> None:
        _block(parts, label, body)

    if c.counterexample and not g.grouped:
        block("Counterexample:", _capped(c.counterexample, OUTPUT_LINES, tail=False))
    if c.hint and not g.grouped:
        parts.append(Text.assemble(("Hint: ", "bold cyan"), shown(c.hint)))
    if c.details:
        block("Details (end):", _capped(c.details, DETAIL_LINES, tail=True))
    if c.output:
        label = "Candidate output" + (" (truncated by the grader)" if c.output_truncated else "") + ":"
        block(label, _capped(c.output, OUTPUT_LINES, tail=False))
    return Group(*parts, "")


def _forbidden(v: ScorecardView) -> Group:
    """Each forbidden API once: where the file writes it, and how many checks it cost (the table names them)."""
    parts: list = [Text("Forbidden APIs used", style="bold red")]
    for f in v.forbidden:
        parts.append(Text.assemble(("✗ ", "red"), (shown(f.api), "bold")))
        parts += [Text(f"    {shown(line)}", overflow="fold") for line in f.lines]
    return Group(*parts, "")


def _findings(v: ScorecardView) -> Group:
    """What the judge's source audit (and the sandbox's net) found: tampering costs all credit, the rest are flags."""
    serious = ("tampering", "violation")
    title = "Language subset" if any(f.kind == "violation" for f in v.findings) else "Source audit"
    parts: list = [Text(title, style="bold red" if any(f.kind in serious for f in v.findings) else "bold")]
    for f in v.findings:
        style = "red" if f.kind in serious else "yellow"
        parts.append(Text.assemble(("✗ " if f.kind in serious else "⚑ ", style), (f.label, f"bold {style}"),
                                   f"  {shown(f.what)}  ", (f"{f.how}: {shown(f.where)}", "dim"), overflow="fold"))
    return Group(*parts, "")


def _diagnosis(v: ScorecardView) -> Group:
    """The named mistakes the grading looks like, one line each."""
    parts: list = [Text("Diagnosis", style="bold")]
    for d in v.diagnosis:
        line = Text.assemble(("→ ", "cyan"), shown(d.line), overflow="fold")
        if v.audience == "panel" and d.mutant:  # an outcome names no mutant
            line.append(f"  (mutant {shown(d.mutant)})", style="dim")
        parts.append(line)
    return Group(*parts, "")


def _follow_ups(v: ScorecardView) -> Group:
    """Interview questions with their answers: the panel's view only (a candidate's copy has none)."""
    parts: list = [Text.assemble(("Interview follow-ups", "bold"), (" (panel only)", "dim"))]
    for n, f in enumerate(v.follow_ups, 1):
        parts.append(Text.assemble((f"{n}. ", "bold"), (shown(f.ask), "bold"), overflow="fold"))
        parts.append(Text(f"   A strong answer: {shown(f.answer)}", overflow="fold"))
        parts.append(Text(f"   why: {shown(f.because)}", style="dim", overflow="fold"))
    return Group(*parts, "")


def _footer(report: Report, v: ScorecardView) -> Text:
    e = report.environment
    items = [
        ("sha256", short_hash(e.submission_sha256)),
        ("sandbox", e.sandbox),
        ("runtime", e.oci_runtime or ""),
        ("image", short_hash(e.image_id)),
        ("torch", e.torch_version or ""),
        ("seed", str(e.hypothesis_seed)),
        ("took", v.duration),
    ]
    return Text(" · ".join(f"{k} {shown(val)}" for k, val in items if val), style="dim")


def render_terminal(report: Report, console: Console, *, audience: Audience = "panel") -> None:
    """Print the scorecard of ``report`` (a :class:`~grader.reports.model.Report`) to ``console``."""
    v = scorecard_view(report, audience=audience)
    width = min(console.width, 100)
    console.print(_header(v, width), width=width)
    if v.diagnosis:
        console.print(_diagnosis(v), width=width)
    if v.load_error:
        console.print(_load_error(v.load_error), width=width)
    if v.table_checks:
        console.print(_checks_table(v), width=width)
    if v.groups:
        console.print(Rule("What went wrong", align="left", style="dim"), width=width)
        for g in v.groups:
            console.print(_problem(g, graded=v.graded), width=width)
    if v.follow_ups:
        console.print(_follow_ups(v), width=width)
    if v.forbidden:
        console.print(_forbidden(v), width=width)
    if v.findings:
        console.print(_findings(v), width=width)
    for w in v.warnings:
        console.print(Text.assemble(("warning: ", "bold yellow"), shown(w)), width=width)
    console.print(Rule(style="dim"), width=width)
    console.print(_footer(report, v), width=width)
