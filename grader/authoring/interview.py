"""The interview guide (``interview.toml``): spoken questions tied to checks and mutants that exist.

Every exercise has 5 to 8 questions of both kinds (``failed``: about a mistake; ``passed``: deeper, at
least three, so a candidate with full marks still gets three). Each is spoken: ``ask`` ends with ``?``,
``answer`` is 40 to 600 characters. Every tied check and mutant exists, and a ``failed`` question naming
both asks about a check that mutant fails (from the mistake record). That the guide never reaches a
candidate is ``Exercise.public_files``'s behaviour, held by tests/test_interview.py.
"""

from __future__ import annotations

from grader.authoring.findings import Finding, Rule, Severity
from grader.authoring.folder import Folder
from grader.corpus import MUTANT_FOLDERS
from grader.errors import ExerciseError
from grader.hindsight.interview import GUIDE_FILE, Guide, guide_path, load_guide
from grader.hindsight.records import load_record
from grader.hindsight.recording import stale_files

QUESTIONS = (5, 8)
MIN_DEEPER = 3
ANSWER_CHARS = (40, 600)


def _guide(folder: Folder) -> Guide | None:
    try:
        return load_guide(folder.exercise)
    except ExerciseError:
        return None  # guide_readable names it


def _question_lines(folder: Folder) -> list[int]:
    """Each question's line: its ``ask =`` (what an author looks for), else its ``[[question]]`` header."""
    try:
        lines = guide_path(folder.exercise).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    headers = [n for n, line in enumerate(lines, 1) if line.strip() == "[[question]]"]
    ends = [*headers[1:], len(lines) + 1]
    return [next((n for n in range(start, end) if lines[n - 1].lstrip().startswith("ask")), start)
            for start, end in zip(headers, ends)]


def _at(lines: list[int], n: int) -> int | None:
    """The line of question ``n`` (from 1)."""
    return lines[n - 1] if 0 < n <= len(lines) else None


def mutant_names(folder: Folder) -> set[str]:
    return {p.stem for sub in MUTANT_FOLDERS for p in (folder.solutions / sub).glob("*")
            if p.suffix in (".py", ".diff")}


def guide_readable(folder: Folder) -> list[Finding]:
    path = guide_path(folder.exercise)
    if not path.is_file():
        return [Finding(Rule.GUIDE_MISSING, path, f"no {GUIDE_FILE}: write the panel's follow-up questions, "
                        f"{QUESTIONS[0]} to {QUESTIONS[1]}, each with the answer a strong candidate gives "
                        "(AUTHORING.md, section 9; `grader new` writes one to start from).")]
    try:
        load_guide(folder.exercise)
    except ExerciseError as e:
        return [Finding(Rule.GUIDE_INVALID, path, str(e) + (f" {e.hint}" if e.hint else ""))]
    return []


def guide_shape(folder: Folder) -> list[Finding]:
    """5 to 8 questions, both kinds, at least three deeper; each a spoken question with a short answer."""
    guide = _guide(folder)
    if guide is None or not guide_path(folder.exercise).is_file():
        return []
    path, lines, out = guide_path(folder.exercise), _question_lines(folder), []
    kinds = [q.when for q in guide.questions]
    if not QUESTIONS[0] <= len(kinds) <= QUESTIONS[1]:
        out.append(Finding(Rule.GUIDE_SIZE, path, f"{len(kinds)} questions, {QUESTIONS[0]} to {QUESTIONS[1]} "
                           "wanted: enough that every grading gets three, few enough that each is worth asking."))
    if "failed" not in kinds or kinds.count("passed") < MIN_DEEPER:
        out.append(Finding(Rule.GUIDE_KINDS, path, f"{kinds.count('failed')} question(s) about a mistake (when = "
                           f"\"failed\") and {kinds.count('passed')} deeper one(s) (when = \"passed\"): a guide has "
                           f"at least one of the first and {MIN_DEEPER} of the second, so that a candidate with full "
                           f"marks still gets {MIN_DEEPER}."))
    for n, q in enumerate(guide.questions, 1):
        if not q.ask.endswith("?"):
            out.append(Finding(Rule.GUIDE_SPOKEN, path, f"question {n} ({q.ask[:40]!r}): `ask` is a spoken question "
                               "and ends with '?'.", line=_at(lines, n)))
        if not ANSWER_CHARS[0] <= len(q.answer) <= ANSWER_CHARS[1]:
            out.append(Finding(Rule.GUIDE_SPOKEN, path, f"question {n} ({q.ask[:40]!r}): its answer is "
                               f"{len(q.answer)} characters; {ANSWER_CHARS[0]} to {ANSWER_CHARS[1]} (1 to 4 "
                               "sentences a panel member reads aloud, naming the mechanism).", line=_at(lines, n)))
    return out


def guide_ties(folder: Folder) -> list[Finding]:
    """Each name a question is tied to is a check of ``checks/`` or a mutant file."""
    guide = _guide(folder)
    if guide is None:
        return []
    checks, mutants, lines = set(folder.check_functions), mutant_names(folder), _question_lines(folder)
    path, out = guide_path(folder.exercise), []
    for n, q in enumerate(guide.questions, 1):
        out += [Finding(Rule.GUIDE_TIES, path, f"question {n} ({q.ask[:40]!r}): no check {c!r} in checks/ (a test "
                        "function of checks/test_*.py): name one that exists.", line=_at(lines, n))
                for c in q.checks if c not in checks]
        out += [Finding(Rule.GUIDE_TIES, path, f"question {n} ({q.ask[:40]!r}): no mutant {m!r} in "
                        f"solutions/{folder.name}/{'|'.join(MUTANT_FOLDERS)} (a file's stem): name one that exists.",
                        line=_at(lines, n)) for m in q.mutants if m not in mutants]
    return out


def failed_questions_match_their_mutants(folder: Folder) -> list[Finding]:
    """A ``failed`` question naming a mutant and checks: the mutant's recorded signature includes one of them.

    Measured on the mistake record; where that record is stale, the finding is a warning
    (the signature it compares with may have moved)."""
    guide = _guide(folder)
    try:
        record = load_record(folder.exercise)
    except ExerciseError:
        return []  # record-invalid names it
    if guide is None or record is None:
        return []
    stale = bool(stale_files(record, folder.exercise, folder.corpus))
    signatures = {m.name: set().union(*(s.checks for s in m.signatures.values())) for m in record.mutants}
    path, lines, out = guide_path(folder.exercise), _question_lines(folder), []
    for n, q in enumerate(guide.questions, 1):
        if q.when != "failed" or not q.checks:
            continue
        for m in q.mutants:
            if m in signatures and not signatures[m] & set(q.checks):
                out.append(Finding(
                    Rule.GUIDE_MUTANT_CHECK, path, f"question {n} ({q.ask[:40]!r}): mutant {m} fails none of "
                    f"{q.checks} (it fails {sorted(signatures[m])}"
                    + (", by a stale mistakes.json" if stale else "") + "): a grading that looks like it would be "
                    "asked about another mistake; tie the question to the checks that mutant fails.",
                    line=_at(lines, n), severity=Severity.WARNING if stale else None))
    return out


RULES = (guide_readable, guide_shape, guide_ties, failed_questions_match_their_mutants)
