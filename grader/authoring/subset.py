"""The judge's source audit on the author's own files: no false alarm on an honest one, each forbidden mutant caught.

The same audit (``grader.subset.audit``) on an author's files must say what the author means: the stub
holds no forbidden API and stays in the subset; a public example stays in the subset widened by
``pytest``, the candidate's module and what its harness declares (``# example harness: os.path (why)``),
forbidden APIs allowed, since it is run by the candidate and never graded; the reference and every
variant have no forbidden API and no violation (a false alarm costs an honest candidate every point);
exactly the mutants whose description (or name) says "forbidden" use a forbidden API.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import ValidationError

from grader.authoring.findings import Finding, Rule
from grader.authoring.folder import Folder
from grader.exercise import SubsetConfig
from grader.subset.audit import SourceAudit, audit_exercise_file, audit_source
from grader.mutant_patch import MutantPatchError

#: A public example declares what its harness uses beyond the subset on a line of its own.
HARNESS = re.compile(r"^#\s*example harness:\s*(?P<names>[\w.*]+(?:\s*,\s*[\w.*]+)*)", re.MULTILINE)


def _line(where: str) -> int | None:
    tail = where.rpartition(":")[2]
    return int(tail) if tail.isdigit() else None


def _audit_findings(rule: Rule, path: Path, audit: SourceAudit, *, forbidden_too: bool, fix: str) -> list[Finding]:
    if not audit.parsed:
        summary = audit.load_error.summary if audit.load_error else "it does not parse"
        line = audit.load_error.line if audit.load_error else None
        return [Finding(rule, path, f"the judge cannot parse it ({summary}): {fix}", line=line)]
    out = [Finding(rule, path, f"leaves the exercise's language subset: {v.text} ({fix})", line=v.line)
           for v in audit.violations]
    if forbidden_too:
        out += [Finding(rule, path, f"uses the forbidden API {h.api}" + (f" (as {h.via})" if h.via else "") +
                        f": {fix}", line=_line(h.where)) for h in audit.forbidden]
    return out


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def stub_clean(folder: Folder) -> list[Finding]:
    ex = folder.exercise
    source = _read(ex.stub)
    if source is None:
        return [Finding(Rule.SUBSET_STUB, ex.stub, "the stub cannot be read as UTF-8 text: write it as UTF-8.")]
    audit = audit_exercise_file(ex, source, filename=ex.stub.name)
    return _audit_findings(Rule.SUBSET_STUB, ex.stub, audit, forbidden_too=True,
                           fix="the stub is a candidate's starting point, so it holds the contract's signatures "
                               "and `raise NotImplementedError`, inside the subset and free of forbidden APIs")


def harness_modules(source: str) -> list[str]:
    """What a public example's ``# example harness: a, b (why)`` lines declare, in order."""
    return [name.strip() for m in HARNESS.finditer(source) for name in m.group("names").split(",")]


def examples_in_subset(folder: Folder) -> list[Finding]:
    ex = folder.exercise
    subset, out = ex.config.subset, []
    for example in (p for p in ex.public_files if p.name.startswith("test_")):
        source = _read(example)
        if source is None:
            out.append(Finding(Rule.SUBSET_EXAMPLE, example, "cannot be read as UTF-8 text: write it as UTF-8."))
            continue
        extras = harness_modules(source)
        try:
            widened = SubsetConfig(modules=[*subset.modules, "pytest", ex.module_name, *extras],
                                   builtins=subset.builtins)
        except ValidationError as e:
            why = "; ".join(err["msg"] for err in e.errors())
            out.append(Finding(Rule.SUBSET_EXAMPLE, example, f"its `# example harness:` line names what no subset "
                               f"can allow ({why}): take it out, and leave that to the harness's own process."))
            continue
        audit = audit_source(source, ex.config.forbidden, filename=example.name, subset=widened)
        out += _audit_findings(Rule.SUBSET_EXAMPLE, example, audit, forbidden_too=False,
                               fix="a public example stays in the exercise's subset, widened by pytest and the "
                                   "candidate's module; where its harness needs more (spawning ranks, building a "
                                   "model to export), declare it on a line `# example harness: NAME, ... (why)`")
    return out


def corpus_audited_as_it_says(folder: Folder) -> list[Finding]:
    """Reference and variants clean; exactly the mutants that say "forbidden" use a forbidden API."""
    ex, out = folder.exercise, []
    for item in folder.corpus:
        if item.kind == "stub" or not (item.path.is_file() and folder.corpus[0].path.is_file()):
            continue
        try:
            source = item.source()
        except (MutantPatchError, OSError, ValueError):
            continue  # layout-source names it
        audit = audit_exercise_file(ex, source)
        if not audit.parsed:
            continue  # layout-source names it
        if item.kind in ("reference", "variant"):
            out += _audit_findings(Rule.SUBSET_CORRECT, item.path, audit, forbidden_too=True,
                                   fix=f"the {item.kind} is a correct answer, and the judge must never take credit "
                                       "from one: rewrite that line, or widen exercise.toml's [subset] if the "
                                       "exercise needs it (and say so in the prompt)")
            continue
        says_forbidden = "forbidden" in (item.description() or "").lower() + item.path.name
        if audit.forbidden and not says_forbidden:
            apis = ", ".join(sorted({h.api for h in audit.forbidden}))
            out.append(Finding(Rule.SUBSET_MUTANT, item.path, f"uses the forbidden API {apis} but its description "
                               "does not say \"forbidden\": a grading that looks like it would be told the wrong "
                               "mistake. Say so in its description, or make the mistake without that API.",
                               line=_line(audit.forbidden[0].where)))
        elif says_forbidden and not audit.forbidden:
            out.append(Finding(Rule.SUBSET_MUTANT, item.path, "its description says \"forbidden\" but it uses none "
                               f"of exercise.toml's forbidden APIs ({', '.join(ex.config.forbidden.apis) or 'none'}):"
                               " make it use one, or describe the mistake it does make."))
    return out


RULES = (stub_clean, examples_in_subset, corpus_audited_as_it_says)
