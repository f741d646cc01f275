"""The authoring rules (grader.authoring), each shown failing on a small bad folder, and none on a good one.

The good folder is what ``grader new`` writes (the scaffold follows every rule as written)
plus a mistake record made here from the hashes of its files and the signatures its
mutants have (``tests/test_new_exercise.py`` grades the scaffold for real). Each case
breaks one thing and asserts the rule's finding: its id, file, line where there is one,
severity, and the words that name the problem and the fix.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest
from click.testing import CliRunner

from grader.authoring import Concern, Finding, Folder, Rule, Severity, check_exercise
from grader.authoring import run as authoring_run
from grader.authoring.subset import harness_modules
from grader.cli import main
from grader.corpus import corpus
from grader.exercise import load_exercise
from grader.hindsight.records import Loss, Lost, MistakeRecord, MutantSignature, Signature
from grader.hindsight.recording import sha256_file, write_record
from grader.wire.grant import Flavor
from grader.scaffold import new_exercise

RETURNS, UNCHANGED = "test_returns_x_times_factor", "test_leaves_x_unchanged"
#: What each scaffold mutant loses (as `grader validate` measures it); the others lose RETURNS.
LOSES = {"scales_x_in_place": [UNCHANGED], "uses_torch_mul": [RETURNS, UNCHANGED]}


def record(root: Path) -> None:
    """A current mistakes.json for the scaffold at ``root`` (exercises/ and solutions/ beneath it)."""
    ex = load_exercise(root / "exercises" / "demo")
    items = corpus(ex, root / "solutions", more=True)
    mutants = [MutantSignature(name=i.name, file=f"mutants/{i.path.name}", held_in=True, sha256=sha256_file(i.path),
                               description=i.name, signatures={Flavor.CPU: Signature(
                                   lost={c: Lost(how=Loss.FAILED) for c in LOSES.get(i.name, [RETURNS])})})
               for i in items if i.kind == "mutant"]
    write_record(ex, MistakeRecord(exercise="demo", exercise_fingerprint=ex.fingerprint,
                                   reference_sha256=sha256_file(items[0].path), checks={Flavor.CPU: [RETURNS, UNCHANGED]},
                                   mutants=mutants))


@pytest.fixture
def root(tmp_path) -> Path:
    new_exercise("demo", tmp_path / "exercises", tmp_path / "solutions")
    record(tmp_path)
    return tmp_path


def rules_on(root: Path) -> list[Finding]:
    return check_exercise(load_exercise(root / "exercises" / "demo"), root / "solutions")


def test_the_scaffold_with_its_record_follows_every_rule(root):
    assert rules_on(root) == []


def test_without_its_record_the_scaffold_has_one_warning_and_no_error(root):
    (root / "exercises" / "demo" / "mistakes.json").unlink()
    found = rules_on(root)
    assert [(f.rule, f.severity) for f in found] == [(Rule.RECORD_MISSING, Severity.WARNING)]
    assert "run `grader validate demo --more --record`" in found[0].message


# --- one case per way of breaking a rule ------------------------------------------------------------------------

def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


E, S = Path("exercises/demo"), Path("solutions/demo")
README, TOML, GUIDE, TABLE = E / "README.md", E / "exercise.toml", E / "interview.toml", S / "contract.toml"
CHECKS, STUB, EXAMPLE, REFERENCE = E / "checks/test_demo.py", E / "demo.py", E / "test_demo_example.py", S / "demo.py"
COPY, ZEROS = S / "variants/scales_a_copy_in_place.py", S / "variants/adds_scaled_x_to_zeros.py"
ADDS, MUL = S / "mutants/adds_factor.diff", S / "mutants/uses_torch_mul.py"
PROBES = E / "probes.py"


@dataclass(frozen=True)
class Case:
    rule: Rule
    breaks: Callable[[Path], None]
    file: Path  # relative to the root
    words: str  # in the message
    at: str | None = None  # text on the finding's line (its first line holding it), or None: no line


def _unlink(relative: Path) -> Callable[[Path], None]:
    return lambda r: (r / relative).unlink()


def _edit(relative: Path, old: str, new: str) -> Callable[[Path], None]:
    return lambda r: edit(r / relative, old, new)


def _write(relative: Path, text: str) -> Callable[[Path], None]:
    return lambda r: (r / relative).write_text(text, encoding="utf-8")


def _append(relative: Path, text: str) -> Callable[[Path], None]:
    return lambda r: append(r / relative, text)


def _many_mutants(r: Path) -> None:
    for n in range(3):
        shutil.copy(r / MUL, r / S / "mutants" / f"uses_torch_mul_{n}.py")


def _short_answer(r: Path) -> None:
    """Question 2's answer cut to ten characters."""
    text = (r / GUIDE).read_text()
    start = text.index('answer = """', text.index("Your result came back"))
    end = text.index('"""', start + len('answer = """')) + 3
    (r / GUIDE).write_text(text[:start] + 'answer = "Too short."' + text[end:])


def _strip_fences(r: Path) -> None:
    text = (r / README).read_text()
    (r / README).write_text(text.replace("```python\n", "").replace("```bash\n", "").replace("```\n", ""))


CASES = {
    "no README": Case(Rule.PROMPT_FILE, _unlink(README), README, "the prompt is missing: write README.md"),
    "no title": Case(Rule.PROMPT_TITLE, _edit(README, "# demo: scale", "demo: scale"), README,
                     "does not start with a `# Title` line", at="demo: scale a tensor"),
    "contract too low": Case(Rule.PROMPT_FIRST_SECTION, _edit(README, "Everything you need", "\n" * 10 + "Everything"),
                             README, "the first `## ` section starts at line 18", at="## Contract"),
    "no API shown": Case(Rule.PROMPT_API, _strip_fences, README, "does not show the API", at="## Contract"),
    "wrong level": Case(Rule.PROMPT_LEVEL, _edit(README, "Level: mid.", "Level: senior."), README,
                        "says `Level: senior.` where exercise.toml's [exercise] level is 'mid'", at="Level: senior."),
    "no Decisions": Case(Rule.PROMPT_SECTIONS, _edit(README, "## Decisions", "## Choices"), README,
                         "has no `## Decisions` section"),
    "no subset section": Case(Rule.PROMPT_SUBSET, _edit(README, "## What your file may use", "## Allowed"), README,
                              "does not state its language subset: add a `## What your file may use` section"),
    "subset entry unnamed": Case(Rule.PROMPT_SUBSET, _append(TOML, '\n[subset]\nmodules = ["tempfile"]\n'), README,
                                 "does not name `tempfile`, which exercise.toml's [subset] allows",
                                 at="## What your file may use"),
    "no topics": Case(Rule.PROMPT_TOPICS, _edit(TOML, 'topics = ["tensors"]', "topics = []"), TOML,
                      "[exercise] topics is empty"),
    "a second example": Case(Rule.LAYOUT_EXAMPLE, _write(E / "test_more.py", "def test_x():\n    pass\n"),
                             E / "test_more.py", "would be shipped to candidates as a public example"),
    "no reference": Case(Rule.LAYOUT_REFERENCE, _unlink(REFERENCE), REFERENCE, "no reference solution: write "),
    "variant says nothing": Case(Rule.LAYOUT_DESCRIPTION, _edit(COPY, '"""Variant: copies x, then scales the copy in '
                                                                      'place. Another correct answer, written '
                                                                      'differently."""', "# x"),
                                 COPY, "this variant does not say what it is: give it a module docstring", at="# x"),
    "variant does not parse": Case(Rule.LAYOUT_SOURCE, _append(ZEROS, "def (:\n"), ZEROS, "does not parse",
                                   at="def (:"),
    "patch does not apply": Case(Rule.LAYOUT_SOURCE, _edit(REFERENCE, "return x * factor", "return factor * x"), ADDS,
                                 "does not apply to demo.py"),
    "one variant": Case(Rule.COUNT_VARIANTS, _unlink(ZEROS), S / "variants", "1 variant, at least 2 needed"),
    "five mutants": Case(Rule.COUNT_MUTANTS, _unlink(ADDS), S / "mutants", "5 mutants in mutants/, at least 6"),
    "nine mutants": Case(Rule.COUNT_MUTANTS, _many_mutants, S / "mutants", "9 mutants in mutants/, which CI grades "
                         "on every run: keep a set in which every check catches one (at most 8)"),
    "stub leaves the subset": Case(Rule.SUBSET_STUB, _edit(STUB, "import torch\n", "import torch\nimport os\n"), STUB,
                                   "leaves the exercise's language subset: the module `os`", at="import os"),
    "example leaves the subset": Case(Rule.SUBSET_EXAMPLE, _edit(EXAMPLE, "import torch\n", "import torch\nimport os\n"),
                                      EXAMPLE, "declare it on a line `# example harness: NAME, ... (why)`",
                                      at="import os"),
    "harness names the unallowable": Case(Rule.SUBSET_EXAMPLE, _edit(EXAMPLE, "import torch\n",
                                                                      "# example harness: pickle (saves)\nimport torch\n"),
                                          EXAMPLE, "its `# example harness:` line names what no subset can allow"),
    "variant uses the forbidden API": Case(Rule.SUBSET_CORRECT, _edit(COPY, "out *= factor", "out = torch.mul(out, factor)"),
                                           COPY, "uses the forbidden API torch.mul", at="torch.mul(out"),
    "forbidden mutant not said": Case(Rule.SUBSET_MUTANT, _edit(MUL, "which this exercise forbids (the right values, "
                                                                     "by a forbidden route)", "the right values"),
                                      MUL, "uses the forbidden API torch.mul but its description does not say "
                                           "\"forbidden\"", at="return torch.mul"),
    "clean mutant said forbidden": Case(Rule.SUBSET_MUTANT, _edit(ADDS, "instead of multiplying.", "(forbidden)."),
                                        ADDS, "its description says \"forbidden\" but it uses none"),
    "checks do not parse": Case(Rule.CHECKS_PARSE, _write(E / "checks/_broken.py", "x = 1\ndef (:\n"),
                                E / "checks/_broken.py", "does not parse", at="def (:"),
    "assert in a helper": Case(Rule.CHECKS_ASSERT, _write(E / "checks/_helpers.py", "def close(a, b):\n    x = 1\n"
                                                                                   "    assert a == b\n"),
                               E / "checks/_helpers.py", "`assert` in the checks: raise AssertionError",
                               at="assert a == b"),
    "NaN passes": Case(Rule.NAN_SAFE, _write(E / "checks/_numbers.py", "def far(a, b, tol):\n    return abs(a - b) > tol\n"),
                       E / "checks/_numbers.py", "NaN could pass `abs(a - b) > tol`: an ordering comparison",
                       at="abs(a - b) > tol"),
    "no table": Case(Rule.CONTRACT_TABLE, _unlink(TABLE), TABLE, "no contract table: write contract.toml"),
    "table not TOML": Case(Rule.CONTRACT_TABLE, _write(TABLE, 'x = 1\ny = = 2\n'), TABLE, "is not valid TOML", at="y = = 2"),
    "stale quote": Case(Rule.CONTRACT_QUOTE, _append(TABLE, '"a sentence the prompt lost" = "not checked: gone"\n'),
                        TABLE, "'a sentence the prompt lost' is in no paragraph of the prompt",
                        at="a sentence the prompt lost"),
    "bad string": Case(Rule.CONTRACT_VALUE, _append(TABLE, '"a finite Python float" = "held"\n'), TABLE,
                       "a string value must read 'not checked: <why>', got 'held'", at="a finite Python float"),
    "empty list": Case(Rule.CONTRACT_VALUE, _append(TABLE, '"a finite Python float" = []\n'), TABLE,
                       "no check named: list the checks", at="a finite Python float"),
    "unknown check": Case(Rule.CONTRACT_CHECK, _edit(TABLE, '["test_leaves_x_unchanged"]', '["test_nope"]'), TABLE,
                          "no check named test_nope in", at="test_nope"),
    "API not forbidden": Case(Rule.CONTRACT_CHECK, _edit(TABLE, "forbidden:torch.mul", "forbidden:torch.add"), TABLE,
                              "torch.add is not in exercise.toml's forbidden list (torch.mul)", at="torch.add"),
    "rule without a row": Case(Rule.CONTRACT_ROW, _edit(README, "- `torch.mul` may", "- **Fast.** One pass.\n- `torch.mul` may"),
                               TABLE, "no row for the prompt's paragraph [Contract] '**Fast.** One pass.' (README.md "
                                      "line 16)"),
    "check without a sentence": Case(Rule.CONTRACT_IDLE_CHECK, _append(CHECKS, '\n\ndef test_extra(sandbox):\n'
                                                                                '    """Extra"""\n'),
                                     CHECKS, "the check test_extra holds no sentence of the prompt",
                                     at="def test_extra"),
    "record unreadable": Case(Rule.RECORD_INVALID, _write(E / "mistakes.json", "{}"), E / "mistakes.json",
                              "is not a valid mistake record"),
    "no record": Case(Rule.RECORD_MISSING, _unlink(E / "mistakes.json"), E / "mistakes.json", "no mistakes.json"),
    "record stale": Case(Rule.RECORD_STALE, _edit(ADDS, "instead of multiplying", "rather than multiplying"),
                         E / "mistakes.json", "stale: mutants/adds_factor.diff changed since it was written"),
    "cpu record of a GPU exercise": Case(Rule.RECORD_FLAVOR, _edit(TOML, 'gpu = "none"', 'gpu = "required"'),
                                         E / "mistakes.json", "its record is a cuda one only, not cpu"),
    "no guide": Case(Rule.GUIDE_MISSING, _unlink(GUIDE), GUIDE, "no interview.toml: write the panel's follow-up"),
    "guide malformed": Case(Rule.GUIDE_INVALID, _edit(GUIDE, 'when = "failed"', 'when = "fail"'), GUIDE,
                            "question 1 (\"Your scale changed the caller's tensor."),
    "four questions": Case(Rule.GUIDE_SIZE, lambda r: (r / GUIDE).write_text(
        (r / GUIDE).read_text().rsplit("[[question]]", 1)[0]), GUIDE, "4 questions, 5 to 8 wanted"),
    "two deeper questions": Case(Rule.GUIDE_KINDS, _edit(GUIDE, 'checks = ["test_leaves_x_unchanged"]\nwhen = "passed"',
                                                         'checks = ["test_leaves_x_unchanged"]\nwhen = "failed"'),
                                 GUIDE, "3 question(s) about a mistake (when = \"failed\") and 2 deeper one(s)"),
    "not a question": Case(Rule.GUIDE_SPOKEN, _edit(GUIDE, "hold twice in memory?", "hold twice in memory."), GUIDE,
                           "question 5 ('How would you scale a tensor too large t'): `ask` is a spoken question",
                           at="too large to hold twice"),
    "answer too short": Case(Rule.GUIDE_SPOKEN, _short_answer, GUIDE, "its answer is 10 characters; 40 to 600",
                             at="Your result came back"),
    "tied to no mutant": Case(Rule.GUIDE_TIES, _edit(GUIDE, 'mutants = ["scales_x_in_place"]', 'mutants = ["nope"]'),
                              GUIDE, "no mutant 'nope' in solutions/demo/mutants|more_mutants", at="Your scale changed"),
    "tied to no check": Case(Rule.GUIDE_TIES, _edit(GUIDE, 'checks = ["test_leaves_x_unchanged"]', 'checks = ["test_x"]'),
                             GUIDE, "no check 'test_x' in checks/", at="Your scale changed"),
    "log kept on a handed object": Case(Rule.PROBE_INSTRUMENT, _append(PROBES, "\n\nclass Model:\n    def __init__"
                                                                               "(self):\n        self.calls = []\n"),
                                        PROBES, "`.calls = []`: a log started on an object the candidate can reach",
                                        at="self.calls = []"),
    "counter kept on a handed object": Case(Rule.PROBE_INSTRUMENT, _append(PROBES, "\n\ndef count(model):\n"
                                                                                   "    model.seen += 1\n"),
                                            PROBES, "`.seen += ...`: a counter kept on an object", at="model.seen += 1"),
    "hook on a handed object": Case(Rule.PROBE_INSTRUMENT, _append(PROBES, "\n\ndef hooked(model, log):\n"
                                                                           "    model.register_forward_hook(log)\n"),
                                    PROBES, "`register_forward_hook`: a hook lives on the object it is registered on",
                                    at="register_forward_hook"),
    "saved-tensor hooks": Case(Rule.PROBE_INSTRUMENT, _append(PROBES, "\n\ndef saved(pack, unpack):\n    return "
                                                                      "torch.autograd.graph.saved_tensors_hooks(pack, "
                                                                      "unpack)\n"),
                               PROBES, "`saved_tensors_hooks`", at="saved_tensors_hooks"),
    "probe without a reply shape": Case(Rule.REPLY_SHAPES, _append(PROBES, "\n\ndef extra(x):\n    return x\n"),
                                        E / "checks/replies.py", "no reply shape for the probe 'extra'"),
    "reply shape of no probe": Case(Rule.REPLY_SHAPES, _edit(E / "checks/replies.py", '    "scale": Reply(',
                                                             '    "gone": Reply(ANY),\n    "scale": Reply('),
                                    E / "checks/replies.py", "REPLIES names 'gone', which probes.py does not define",
                                    at='"gone"'),
    "instruments without a forger": Case(Rule.PROBE_FORGER, _append(PROBES, "\n\nLEDGER = probekit.Ledger\n"),
                                         S / "mutants", "no mutant forges those measurements"),
    "mutant fails none of its checks": Case(Rule.GUIDE_MUTANT_CHECK, _edit(
        GUIDE, 'checks = ["test_leaves_x_unchanged"]\nmutants', 'checks = ["test_returns_x_times_factor"]\nmutants'),
        GUIDE, "mutant scales_x_in_place fails none of ['test_returns_x_times_factor'] (it fails "
               "['test_leaves_x_unchanged']): a grading that looks like it", at="Your scale changed"),
}


def _line(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_each_rule_names_what_is_wrong_where_and_the_fix(root, case):
    case.breaks(root)
    found = [f for f in rules_on(root) if f.rule is case.rule]
    assert found, f"no {case.rule.value} finding; got {[str(f) for f in rules_on(root)]}"
    finding = next((f for f in found if case.words in f.message), None)
    assert finding is not None, [f.message for f in found]
    assert finding.file == root / case.file, finding
    expected_line = None if case.at is None else _line(finding.file, case.at)
    if case.rule is Rule.LAYOUT_SOURCE and case.at is None:
        expected_line = finding.line  # a patch names its hunk in the message
    assert finding.line == expected_line, finding
    assert finding.severity is case.rule.severity


def test_every_rule_has_a_case():
    shown = {case.rule for case in CASES.values()}
    assert [r.value for r in Rule if r not in shown and r is not Rule.RULE_CRASHED] == []


def test_a_hook_that_is_the_scenario_says_so_and_a_forging_mutant_answers_the_instruments(root):
    append(root / PROBES, "\n\ndef owned(model, log):\n    model.register_forward_hook(log)  # not an instrument: "
                          "the owner's hook the candidate must keep\n\n\nLEDGER = probekit.Ledger\n")
    (root / S / "more_mutants").mkdir()
    (root / S / "more_mutants" / "forges.py").write_text('"""Mutant: forges its instruments."""\n\n\ndef scale(x, '
                                                         'factor):\n    return x\n')
    assert [f for f in rules_on(root) if f.rule.concern is Concern.INSTRUMENTS] == []


def test_a_failed_question_checked_against_a_stale_record_is_a_warning(root):
    CASES["mutant fails none of its checks"].breaks(root)
    edit(root / ADDS, "instead of multiplying", "rather than multiplying")  # the record no longer holds
    (finding,) = [f for f in rules_on(root) if f.rule is Rule.GUIDE_MUTANT_CHECK]
    assert finding.severity is Severity.WARNING and "by a stale mistakes.json" in finding.message


def test_an_example_harness_line_widens_the_examples_subset_only(root):
    edit(root / EXAMPLE, "import torch\n", "# example harness: os.path (names a file)\nimport torch\nimport os\n")
    assert harness_modules((root / EXAMPLE).read_text()) == ["os.path"]
    assert [f for f in rules_on(root) if f.rule is Rule.SUBSET_EXAMPLE] == []
    edit(root / STUB, "import torch\n", "import torch\nimport os\n")  # the stub gets nothing of it
    assert [f.rule for f in rules_on(root)] == [Rule.SUBSET_STUB]


def test_a_rule_that_raises_is_a_finding_naming_it_and_the_others_still_run(root, monkeypatch):
    def broken(folder):
        raise KeyError("boom")

    broken.__module__, broken.__name__ = "grader.authoring.counts", "variants"
    monkeypatch.setitem(authoring_run.RULES, Concern.COUNTS, (broken,) + authoring_run.RULES[Concern.COUNTS][1:])
    _unlink(ZEROS)(root)
    found = rules_on(root)
    assert [f.rule for f in found] == [Rule.RULE_CRASHED]
    assert found[0].is_error and "grader.authoring.counts.variants raised KeyError: 'boom'" in found[0].message


def test_concerns_select_their_rules_only(root):
    _unlink(ZEROS)(root)
    _unlink(GUIDE)(root)
    only = check_exercise(load_exercise(root / E), root / "solutions", concerns=[Concern.INTERVIEW])
    assert [f.rule for f in only] == [Rule.GUIDE_MISSING]


# --- grader validate runs them on a folder outside the repository ---------------------------------------------

def _validate(root: Path, *args: str):
    return CliRunner().invoke(main, ["validate", "demo", "--exercise-root", str(root / "exercises"),
                                     "--solutions-root", str(root / "solutions"), *args],
                              env={"COLUMNS": "300"}, catch_exceptions=False)


def test_validate_rules_only_exits_4_naming_the_rule_and_the_file(root):
    _unlink(ZEROS)(root)
    r = _validate(root, "--rules", "only")
    text = " ".join(r.output.split())
    assert r.exit_code == 4, r.output
    assert f"demo: {root / S / 'variants'}: error [count-variants] 1 variant, at least 2 needed" in text


def test_validate_rules_only_passes_a_good_folder_and_strict_fails_a_warning(root):
    assert _validate(root, "--rules", "only").exit_code == 0
    (root / E / "mistakes.json").unlink()
    r = _validate(root, "--rules", "only")
    assert r.exit_code == 0 and "warning [record-missing]" in r.output, r.output
    r = _validate(root, "--rules", "only", "--strict")
    assert r.exit_code == 4 and "warning [record-missing]" in r.output, r.output


def test_validate_fails_an_exercise_whose_gradings_pass_but_a_rule_does_not(root, monkeypatch):
    """The rules run before grading; an error fails the exercise (exit 4, FAILED, the rule named in the summary)
    however the gradings went, and --rules skip grades only."""
    from grader.host import validation

    graded = []
    monkeypatch.setattr(validation, "validate_exercises",
                        lambda exercises, **k: graded.append(1) or iter([validation.ExerciseValidation("demo")]))
    monkeypatch.setattr("grader.cli.mistakes_note.note_mistakes", lambda *a, **k: None)
    _edit(README, "Level: mid.", "Level: senior.")(root)
    r = _validate(root, "--sandbox", "local")
    text = " ".join(r.output.split())
    assert r.exit_code == 4, r.output
    assert "demo: FAILED" in text and f"demo: rule prompt-level in {root / README}:5: the prompt says `Level: senior.`" \
        in text
    assert text.index("[prompt-level]") < text.index("demo: FAILED")  # said before grading
    r = _validate(root, "--sandbox", "local", "--rules", "skip")
    assert r.exit_code == 0 and "prompt-level" not in r.output, r.output
    assert len(graded) == 2


def test_record_skips_the_record_rules_it_is_about_to_rewrite(root, monkeypatch):
    from grader.host import validation

    monkeypatch.setattr(validation, "validate_exercises", lambda exercises, **k: iter([]))
    (root / E / "mistakes.json").unlink()
    r = _validate(root, "--sandbox", "local", "--record", "--strict")
    assert r.exit_code == 0 and "record-missing" not in r.output, r.output


def test_rules_only_does_not_go_with_grading_options(root):
    r = _validate(root, "--rules", "only", "--record")
    assert r.exit_code == 2 and "--rules only reads the exercises' files and grades nothing" in r.output


def test_what_a_finding_quotes_from_the_folder_is_printed_as_text(root):
    """A paragraph quoted in a finding is the author's text: rich markup and control characters stay visible."""
    _edit(README, "- `torch.mul` may", "- [bold]Fast[/bold] \x1b[31mred\n- `torch.mul` may")(root)
    r = _validate(root, "--rules", "only")
    assert r.exit_code == 4, r.output
    assert "[bold]Fast[/bold] \\x1b[31mred" in r.output and "\x1b" not in r.output
