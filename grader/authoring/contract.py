"""Every rule of the prompt names the check that holds it: ``solutions/<name>/contract.toml``, kept true.

A README rule with no check behind it is a rule a candidate can break for free ("x itself is never
modified", held by nothing). The table maps each paragraph of the README outside "Example" and "Trying
it" (one row per rule; code blocks may be quoted but need no row), word for word, to a list of check
ids, ``"forbidden:API"``, ``"subset"``, or ``"not checked: <why>"`` for what is no rule. These rules
fail on a paragraph with no row, a row quoting text the prompt no longer has, a check that does not
exist, or a check holding no sentence. The table is judge side, outside the checks' fingerprint.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt

from grader.authoring.findings import Finding, Rule
from grader.authoring.folder import Folder

TABLE_NAME = "contract.toml"
NOT_CHECKED = "not checked: "
FORBIDDEN = "forbidden:"
#: The holder of the prompt's language-subset paragraph: the judge's subset check (grader.subset.audit).
SUBSET = "subset"
#: Sections of a prompt that show or explain, and state no rule of their own.
NO_RULES = re.compile(r"(Example|Trying it)")
_KEY = re.compile(r"""\s*("(?:[^"\\]|\\.)*"|'[^']*'|[A-Za-z0-9_-]+)\s*=""")


@dataclass(frozen=True)
class Paragraph:
    section: str
    text: str  # whitespace collapsed
    line: int  # 1-based, in the README
    needs_a_row: bool = True  # False for a code block (a signature): quotable, not required


def flat(text: str) -> str:
    return " ".join(text.split())


def prompt_paragraphs(readme: str) -> list[Paragraph]:
    """The README's paragraphs (prose and list items) under a level-2 heading that states rules."""
    tokens = MarkdownIt("commonmark").parse(readme)
    section, out = None, []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h2":
            section = tokens[i + 1].content
        elif section and not NO_RULES.match(section):
            if token.type == "inline" and tokens[i - 1].type == "paragraph_open":
                out.append(Paragraph(section, flat(token.content), (token.map or [0])[0] + 1))
            elif token.type == "fence":
                out.append(Paragraph(section, flat(token.content), (token.map or [0])[0] + 1, needs_a_row=False))
    return out


def key_lines(text: str) -> dict[str, int]:
    """The line (1-based) of each top-level key of a TOML file, found by reading each line's key alone."""
    found: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        m = _KEY.match(line)
        if m:
            try:
                (key,) = tomllib.loads(f"{m.group(1)} = 0")
            except (tomllib.TOMLDecodeError, ValueError):
                continue
            found.setdefault(key, n)
    return found


def table_path(folder: Folder) -> Path:
    return folder.solutions / TABLE_NAME


def _read_table(folder: Folder) -> tuple[dict | None, dict[str, int], list[Finding]]:
    path = table_path(folder)
    if not path.is_file():
        return None, {}, [Finding(Rule.CONTRACT_TABLE, path, f"no contract table: write {TABLE_NAME}, one row per "
                                  "rule of the prompt naming the check that holds it (AUTHORING.md, section 2; "
                                  "`grader new` writes one to start from).")]
    try:
        text = path.read_text(encoding="utf-8")
        return tomllib.loads(text), key_lines(text), []
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        line = re.search(r"at line (\d+)", str(e))
        return None, {}, [Finding(Rule.CONTRACT_TABLE, path, f"is not valid TOML ({e}): each row is "
                                  '"words of the prompt" = ["check_name", ...].', line=int(line.group(1)) if line
                                  else None)]


def table_holds(folder: Folder) -> list[Finding]:
    """Each row quotes one paragraph and names what holds it; each paragraph has a row; each check holds one."""
    rows, lines, out = _read_table(folder)
    if rows is None or folder.readme is None:
        return out
    path, ex = table_path(folder), folder.exercise
    paragraphs = prompt_paragraphs(folder.readme)
    known, forbidden = set(folder.check_functions), set(ex.config.forbidden.apis)
    covered: set[Paragraph] = set()
    for quote, held_by in rows.items():
        at = lines.get(quote)
        found = [p for p in paragraphs if flat(quote) in p.text]
        if len(found) != 1:
            lines_of = ", ".join(str(p.line) for p in found)
            where = "no paragraph" if not found else f"{len(found)} paragraphs (lines {lines_of})"
            out.append(Finding(Rule.CONTRACT_QUOTE, path, f"{quote!r} is in {where} of the prompt, not exactly one: "
                               "quote words that stand in one paragraph of README.md as it is now (outside Example "
                               "and Trying it).", line=at))
        covered.update(found)
        out += _value_findings(path, quote, held_by, at, known, forbidden, ex.checks_dir)
    out += [Finding(Rule.CONTRACT_ROW, path, f"no row for the prompt's paragraph [{p.section}] {p.text[:100]!r} "
                    f"(README.md line {p.line}): add one naming the check that holds it, or \"not checked: <why>\" "
                    "for a definition, advice or a promise about the checks' own inputs.")
            for p in paragraphs if p.needs_a_row and p not in covered]
    named = {c for held_by in rows.values() if isinstance(held_by, list) for c in held_by}
    out += [Finding(Rule.CONTRACT_IDLE_CHECK, check.file, f"the check {name} holds no sentence of the prompt: name "
                    f"it in the row of the rule it holds in {TABLE_NAME}; a check whose rule the prompt does not "
                    "state grades what a candidate was never told.", line=check.line)
            for name, check in sorted(folder.check_functions.items()) if name not in named]
    return out


def _value_findings(path: Path, quote: str, held_by, at: int | None, known: set[str], forbidden: set[str],
                    checks_dir: Path) -> list[Finding]:
    if isinstance(held_by, str):
        if not held_by.startswith(NOT_CHECKED) or not held_by[len(NOT_CHECKED):].strip():
            return [Finding(Rule.CONTRACT_VALUE, path, f"{quote!r}: a string value must read 'not checked: <why>', "
                            f"got {held_by!r}; to name checks, give a list.", line=at)]
        return []
    if not isinstance(held_by, list) or not all(isinstance(c, str) for c in held_by):
        return [Finding(Rule.CONTRACT_VALUE, path, f"{quote!r}: the value must be a list of check names (or "
                        f"\"not checked: <why>\"), got {held_by!r}.", line=at)]
    if not held_by:
        return [Finding(Rule.CONTRACT_VALUE, path, f"{quote!r}: no check named: list the checks that hold it, or "
                        "write \"not checked: <why>\".", line=at)]
    out = []
    for check in held_by:
        api = check.removeprefix(FORBIDDEN)
        if check.startswith(FORBIDDEN) and api not in forbidden:
            out.append(Finding(Rule.CONTRACT_CHECK, path, f"{quote!r}: {api} is not in exercise.toml's forbidden "
                               f"list ({', '.join(sorted(forbidden)) or 'empty'}): forbid it there, or name the "
                               "check that holds the rule.", line=at))
        elif not check.startswith(FORBIDDEN) and check != SUBSET and check not in known:
            out.append(Finding(Rule.CONTRACT_CHECK, path, f"{quote!r}: no check named {check} in {checks_dir} (a "
                               "row names test functions of checks/test_*.py, \"forbidden:API\" or \"subset\").",
                               line=at))
    return out


RULES = (table_holds,)
