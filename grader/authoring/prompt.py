"""The prompt's shape: README.md is all a candidate reads, so its parts stand where a candidate looks.

A ``# Title``; ``Level: X.`` (exercise.toml's level) above the first ``## `` section; that
section starts within the first 15 lines and shows the API (a code block or `` `name(` ``);
``## Decisions``, ``## Example`` and ``## Trying it`` sections; and ``## What your file may
use``, naming every module and builtin exercise.toml's ``[subset]`` adds, so that a file
that follows the prompt runs. exercise.toml names the exercise's topics. A prompt that still says it
is ``grader new``'s template gets a warning (the scaffold validates as written, and says what is left).
"""

from __future__ import annotations

import re

from grader.authoring.findings import Finding, Rule
from grader.authoring.folder import Folder

#: The first ``## `` section (the contract) starts by this line (1-based).
FIRST_SECTION_BY = 15
#: How far below the first section's heading the API must show.
API_WITHIN = 40
SUBSET_HEADING = "## What your file may use"
#: Sections every prompt has besides the contract, by the start of their heading.
REQUIRED_SECTIONS = {
    "## Decisions": "what the contract leaves open, decided, so that two correct solutions get the same marks",
    "## Example": "a short session a candidate can read",
    "## Trying it": "how to run the public example and `grader submit`",
}


def _lines(folder: Folder) -> list[str] | None:
    return None if folder.readme is None else folder.readme.splitlines()


def _first_section(lines: list[str]) -> int | None:
    return next((i for i, line in enumerate(lines) if line.startswith("## ")), None)


def prompt_file(folder: Folder) -> list[Finding]:
    """There is a README.md, in UTF-8: every other prompt rule reads it."""
    if folder.readme is not None:
        return []
    path = folder.exercise.readme
    why = "is missing" if not path.is_file() else "is not UTF-8 text"
    return [Finding(Rule.PROMPT_FILE, path, f"the prompt {why}: write README.md, the whole prompt a candidate reads "
                                            "(AUTHORING.md, section 2; `grader new` writes one to start from).")]


def title(folder: Folder) -> list[Finding]:
    lines = _lines(folder)
    if lines is None or (lines and lines[0].startswith("# ")):
        return []
    return [Finding(Rule.PROMPT_TITLE, folder.exercise.readme, "the prompt does not start with a `# Title` line: "
                    "put the exercise's title on the first line, e.g. `# layer_norm: normalize the last dimension`.",
                    line=1)]


def first_section(folder: Folder) -> list[Finding]:
    """The contract comes first: its ``## `` section starts by line 15."""
    lines = _lines(folder)
    if lines is None:
        return []
    at = _first_section(lines)
    path = folder.exercise.readme
    if at is None:
        return [Finding(Rule.PROMPT_FIRST_SECTION, path, "the prompt has no `## ` section: start the contract with "
                        "one (`## Contract`, or one per function, ``## 1. `f(x) -> y` ``) within the first "
                        f"{FIRST_SECTION_BY} lines.")]
    if at + 1 > FIRST_SECTION_BY:
        return [Finding(Rule.PROMPT_FIRST_SECTION, path, f"the first `## ` section starts at line {at + 1}; a "
                        f"candidate meets the contract within the first {FIRST_SECTION_BY} lines: shorten the "
                        "introduction, or move what it says into Decisions.", line=at + 1)]
    return []


def api_shown(folder: Folder) -> list[Finding]:
    lines = _lines(folder)
    at = None if lines is None else _first_section(lines)
    if at is None:
        return []
    section = "\n".join(lines[at:at + API_WITHIN])
    if "```" in section or re.search(r"`\w+\(", section):
        return []
    return [Finding(Rule.PROMPT_API, folder.exercise.readme, f"the first section ({lines[at].strip()!r}) does not "
                    "show the API: give the signature in a code block, or name the function as `` `name(` `` in "
                    f"its first {API_WITHIN} lines.", line=at + 1)]


def level_stated(folder: Folder) -> list[Finding]:
    lines = _lines(folder)
    if lines is None:
        return []
    at = _first_section(lines)
    level = folder.exercise.config.exercise.level
    if re.search(rf"Level: {re.escape(level)}\.", "\n".join(lines[:at])):
        return []
    said = next(((n, m.group(1)) for n, text in enumerate(lines[:at], 1) if (m := re.search(r"Level: (\w+)\.", text))),
                None)
    problem = (f"says `Level: {said[1]}.` where exercise.toml's [exercise] level is {level!r}" if said else
               f"does not say `Level: {level}.` above its first section")
    return [Finding(Rule.PROMPT_LEVEL, folder.exercise.readme, f"the prompt {problem}: state the level in the "
                    f"introduction, as exercise.toml has it (`Level: {level}.`).", line=said[0] if said else None)]


def sections(folder: Folder) -> list[Finding]:
    lines = _lines(folder)
    if lines is None:
        return []
    return [Finding(Rule.PROMPT_SECTIONS, folder.exercise.readme, f"the prompt has no `{heading}` section: add one "
                    f"({why}; AUTHORING.md, section 2).")
            for heading, why in REQUIRED_SECTIONS.items() if not any(line.startswith(heading) for line in lines)]


def subset_stated(folder: Folder) -> list[Finding]:
    """The prompt's "What your file may use" section names every entry exercise.toml's [subset] adds."""
    text = folder.readme
    if text is None:
        return []
    path = folder.exercise.readme
    marker = f"\n{SUBSET_HEADING}\n"
    if marker not in text:
        return [Finding(Rule.PROMPT_SUBSET, path, f"the prompt does not state its language subset: add a "
                        f"`{SUBSET_HEADING}` section (torch's public API and the pure standard library, and every "
                        "entry of exercise.toml's [subset]; AUTHORING.md, section 4).")]
    line = text[:text.index(marker) + 1].count("\n") + 1
    section = text.split(marker, 1)[1].split("\n## ", 1)[0]
    subset = folder.exercise.config.subset
    missing = [e for e in [*subset.modules, *subset.builtins] if f"`{e}`" not in section]
    if not missing:
        return []
    return [Finding(Rule.PROMPT_SUBSET, path, f"the `{SUBSET_HEADING}` section does not name "
                    f"{', '.join(f'`{e}`' for e in missing)}, which exercise.toml's [subset] allows: name each, in "
                    "backquotes, so that a candidate knows their file may use it.", line=line)]


def topics(folder: Folder) -> list[Finding]:
    meta = folder.exercise.config.exercise
    toml = folder.root / "exercise.toml"
    out = []
    if not meta.title.strip():
        out.append(Finding(Rule.PROMPT_TOPICS, toml, "[exercise] title is empty: give the one line `grader list` "
                                                     "and the scorecard show."))
    if not meta.topics:
        out.append(Finding(Rule.PROMPT_TOPICS, toml, "[exercise] topics is empty: list what the exercise exercises "
                                                     "(e.g. topics = [\"autograd\", \"numerics\"]), for `grader "
                                                     "list`."))
    return out


#: The scaffold's own words about itself (grader/scaffold.py's README), whitespace aside: still the template.
TEMPLATE_SAYS = "This prompt is the template `grader new` wrote"


def not_the_template(folder: Folder) -> list[Finding]:
    """A warning while the prompt is still the scaffold's: it validates, but it is not an exercise yet."""
    lines = _lines(folder)
    text = " ".join("\n".join(lines or []).split())
    if TEMPLATE_SAYS not in text:
        return []
    line = next((i for i, row in enumerate(lines, 1) if "This prompt" in row), None)
    return [Finding(Rule.PROMPT_TEMPLATE, folder.exercise.readme, "the prompt is still the template `grader new` "
                    "wrote (it says so): replace it with your exercise's contract, decisions, example and how to try "
                    "it, then the checks, reference and mutants to match (AUTHORING.md, section 2).", line=line)]


RULES = (prompt_file, title, first_section, api_shown, level_stated, sections, subset_stated, topics, not_the_template)
