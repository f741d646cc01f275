"""Published answers compared (issue 25): a renamed copy of a shipped reference, variant or mutant is a flag
naming the file, on every page and export; an honest answer of one's own is not. Fast: no grading."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from grader.batch.layout import Found, Layout
from grader.batch.model import Row, RowStatus
from grader.batch.publish import publish
from grader.batch.published import published_files, solution_folders
from grader.batch.runner import Batch
from grader.batch.similarity import Submission, compare
from grader.exercise import load_exercise
from grader.reports.model import CheckResult, Report, Status, Visibility
from tests.conftest import REPO

ATTENTION = load_exercise("attention")
REFERENCE = (REPO / "solutions" / "attention" / "attention.py").read_text()
HONEST = (REPO / "tests" / "fixtures" / "published" / "attention_honest.py").read_text()
STUBS = {"attention": ATTENTION.stub.read_text()}
RENAMES = {"scores": "logits", "weights": "attn", "has_key": "row_alive", "_split_heads": "_to_heads",
           "batch": "bsz", "length": "seq_len", "heads": "ctx", "out": "merged", "x": "t"}


def disguised(source: str) -> str:
    """What a candidate hides a copy with: identifiers renamed, comments and docstrings rewritten."""
    source = re.sub(r'"""[\s\S]*?"""', '"""My own attention."""', source)
    source = re.sub(r"#[^\n]*", "# written by me", source)
    return re.sub(r"\b(" + "|".join(RENAMES) + r")\b", lambda m: RENAMES[m.group()], source)


@pytest.fixture(scope="module")
def published():
    files, problems = published_files({"attention": ATTENTION}, solution_folders(None))
    assert problems == [] and len(files["attention"]) > 10  # the reference, 3 variants, the mutants applied
    return files


def sub(candidate: str, source: str) -> Submission:
    return Submission(candidate, "attention", source, 22.0)


def test_a_renamed_copy_of_the_reference_is_flagged_naming_the_file_and_an_honest_answer_is_not(published):
    assert disguised(REFERENCE) != REFERENCE and "logits" in disguised(REFERENCE)
    found = compare([sub("copier", disguised(REFERENCE)), sub("honest", HONEST)], STUBS, published=published)
    [match] = found.published
    assert match.submission.candidate == "copier" and match.file.label == "solutions/attention/attention.py"
    assert match.file.public and match.similarity >= 0.8 and match.strong
    assert match.line == (f"resembles the published solutions/attention/attention.py: {match.similarity:.2f}; "
                          f"honest solutions of this exercise reach {match.honest:.2f}")
    assert found.pairs == []  # the honest answer is not like the copy either


def in_parentheses(source: str) -> str:
    """Every identifier wrapped in parentheses wherever the file still compiles: ``(self).W_q = (nn).Linear(...)``."""
    import io
    import keyword
    import tokenize

    out = source
    for tok in reversed(list(tokenize.generate_tokens(io.StringIO(source).readline))):
        if tok.type != tokenize.NAME or keyword.iskeyword(tok.string):
            continue
        lines = out.splitlines(keepends=True)
        (row, start), (_, end) = tok.start, tok.end
        line = lines[row - 1]
        trial = "".join(lines[:row - 1] + [line[:start] + f"({tok.string})" + line[end:]] + lines[row:])
        try:
            compile(trial, "<wrapped>", "exec")
        except SyntaxError:
            continue
        out = trial
    return out


def test_a_reference_wrapped_in_parentheses_is_still_the_published_answer_in_red(published):
    """Issue 36: every identifier of the reference in parentheses made a resemblance of 0.20 and no flag (the copy
    scored full marks); parsed and written back first, it is the reference."""
    wrapped = in_parentheses(REFERENCE)
    assert wrapped.count("(self)") > 10 and wrapped != REFERENCE
    [match] = compare([sub("wrapper", wrapped)], STUBS, published=published).published
    assert match.file.label == "solutions/attention/attention.py" and match.similarity >= 0.99 and match.strong


def test_an_honest_answer_near_a_plainly_written_reference_is_evidence_never_red():
    """Issue 36: a newcomer's honest custom_layer answer, written without looking, was flagged in red at exactly the
    threshold. A contract that leaves little room makes honest answers close; the flag says how close the
    exercise's honest solutions come, and is red only well above that."""
    custom = load_exercise("custom_layer")
    files, _ = published_files({"custom_layer": custom}, solution_folders(None))
    honest = (REPO / "tests" / "fixtures" / "published" / "custom_layer_honest.py").read_text()
    found = compare([Submission("newcomer", "custom_layer", honest, None)],
                    {"custom_layer": custom.stub.read_text()}, published=files, budget_s=None)
    assert all(not m.strong for m in found.published)
    for m in found.published:
        assert m.line.startswith("resembles the published solutions/custom_layer/")
        assert f"; honest solutions of this exercise reach {m.honest:.2f}" in m.line


def test_copies_of_a_variant_and_of_a_mutant_name_that_file(published):
    variant = (REPO / "solutions" / "attention" / "variants" / "loops_manual_softmax.py").read_text()
    mutant = next(p for p in published["attention"] if p.label.endswith("mutants/no_scaling.diff"))
    found = compare([sub("v", disguised(variant)), sub("m", disguised(mutant.source))], STUBS, published=published)
    labels = {m.submission.candidate: m.file.label for m in found.published}
    assert labels["v"] == "solutions/attention/variants/loops_manual_softmax.py"
    assert labels["m"] == "solutions/attention/mutants/no_scaling.diff"  # the patch applied, as validate does


def test_every_published_file_is_honest_about_itself_and_the_stub_never_matches(published):
    """The stub (what every candidate starts from) has too little code of its own to match anything."""
    found = compare([sub("stub", STUBS["attention"])], STUBS, published=published)
    assert found.published == [] and found.published_files == {"attention": len(published["attention"])}


def test_the_published_comparison_keeps_the_time_budget(published):
    ticks = iter([0.0] * 3 + [100.0] * 1000)  # the deadline, two files' fingerprints, then out of time
    found = compare([sub("a", disguised(REFERENCE)), sub("b", HONEST)], STUBS, budget_s=60,
                    clock=lambda: next(ticks), published=published)
    assert found.published == [] and found.pairs == []  # not compared is listed, never guessed
    assert {(u.a, u.b) for u in found.unchecked} == {("a", "the published solutions"),
                                                     ("b", "the published solutions"), ("a", "b")}


def test_a_private_exercise_folder_uses_the_solutions_beside_it(tmp_path):
    """A panel's own catalog: its solutions/ beside it is read (a match there is a private answer that
    leaked), and the grader's shipped solutions/ always are."""
    (tmp_path / "exercises").mkdir()
    private = tmp_path / "solutions" / "attention"
    private.mkdir(parents=True)
    (private / "attention.py").write_text(HONEST)
    folders = solution_folders(tmp_path / "exercises")
    assert folders[0] == (tmp_path / "solutions", False) and folders[1][1] is True
    files, _ = published_files({"attention": ATTENTION}, folders)
    found = compare([sub("leak", disguised(HONEST))], STUBS, published=files)
    [match] = found.published
    assert match.file.label == "solutions/attention/attention.py" and not match.file.public
    assert match.line.startswith("resembles the private solutions/attention/attention.py")


def test_a_match_is_a_flag_on_the_panel_page_the_exports_and_the_similarity_page(published, tmp_path):
    sources = {"copier": disguised(REFERENCE), "honest": HONEST}
    found = [Found(name, "attention", Path(f"/x/{name}/attention/attention.py"), text.encode(), "0" * 64)
             for name, text in sources.items()]
    check = CheckResult(id="c", name="c", status=Status.PASSED, score=22.0, max_score=22.0,
                        visibility=Visibility.VISIBLE)
    rows = [Row(name, "attention", RowStatus.GRADED, 22.0, 22.0, report=Report(
        exercise="attention", graded=True, checks=[check], score=22.0, max_score=22.0)) for name in sources]
    batch = Batch(layout=Layout(found=found, exercises=["attention"]), rows=rows)
    publish(batch, tmp_path, {"attention": ATTENTION}, published)
    line = "resembles the published solutions/attention/attention.py"
    with open(tmp_path / "summary.csv", newline="") as f:
        table = {r["candidate"]: r for r in csv.DictReader(f)}
    assert table["copier"]["flags"] == "published" and table["honest"]["flags"] == ""
    assert re.fullmatch(r"solutions/attention/attention.py [01]\.\d\d", table["copier"]["published"])
    assert not table["honest"]["published"]
    jsonl = {r["candidate"]: r for r in map(json.loads, (tmp_path / "results.jsonl").read_text().splitlines())}
    assert jsonl["copier"]["flags"] == ["published"] and jsonl["honest"]["published"] is None
    assert jsonl["copier"]["published"]["file"] == "solutions/attention/attention.py"
    index = (tmp_path / "index.html").read_text()
    assert line in index and 'class="flag f-published"' in index and "1 submission is</a> nearly a published solution" in index
    anchor = rows[0].published.anchor
    assert f'href="similarity.html#{anchor}"' in index
    page = (tmp_path / "similarity.html").read_text()
    assert f'id="{anchor}"' in page and "copier matches the published solutions/attention/attention.py" in page
    assert "honest" not in page.split("<footer>")[0].split("</header>")[1]  # only the copy is listed


def test_no_honest_variant_of_any_exercise_matches_another_published_file():
    """Every exercise's variants are honest answers written apart from the reference: compared with the other
    published files of their exercise (reference, other variants, every mutant), none reaches the threshold.
    A legitimate candidate whose answer is merely correct is not flagged."""
    from grader.batch.similarity import THRESHOLD
    from grader.exercise import known_names

    exercises = {name: load_exercise(name) for name in known_names()}
    files, problems = published_files(exercises, solution_folders(None))
    assert problems == []
    near = []
    for name, published in files.items():
        stubs = {name: exercises[name].stub.read_text()}
        for honest in (p for p in published if "/variants/" in p.label):
            others = {name: [p for p in published if p.label != honest.label]}
            found = compare([Submission("v", name, honest.source, None)], stubs, published=others, budget_s=None)
            near += [(honest.label, m.file.label, m.similarity) for m in found.published]
    assert near == [], f"honest variants flagged at {THRESHOLD}: {near}"
