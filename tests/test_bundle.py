"""Grading bundles: written by `grader submit --bundle`, checked by coreutils and by `grader bundle verify`."""

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.cli import main
from grader.errors import UsageError
from grader.evidence.bundle import SUMS, _digests, verify_bundle, write_bundle
from grader.reports.derived import report_from_json

TOY = Path(__file__).parent / "fixtures" / "toy"
PRINTS = Path(__file__).parent / "fixtures" / "toy_submissions" / "prints.py"
FILES = {"SHA256SUMS", "SIGNATURE", "report.json", "output.txt", "environment.json", "submission/prints.py"}


def invoke(*args, **env):
    return CliRunner().invoke(main, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1", **env})


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """One bundle of the printing toy submission, made through `grader submit --bundle`; tests copy it."""
    dest = tmp_path_factory.mktemp("made") / "bundle"
    data = tmp_path_factory.mktemp("data")  # module scope: the per-test private data folder is not set yet
    r = invoke("submit", TOY, "--exercise-root", TOY.parent, PRINTS, "--sandbox", "local", "--no-history", "--bundle", dest, GRADER_DATA_DIR=str(data))
    assert r.exit_code == 0, r.output
    return dest


@pytest.fixture
def bundle(made, tmp_path):
    copy = tmp_path / "bundle"
    shutil.copytree(made, copy)
    return copy


def test_the_bundle_holds_every_part(bundle):
    assert {p.relative_to(bundle).as_posix() for p in bundle.rglob("*") if p.is_file()} == FILES
    assert (bundle / "submission" / "prints.py").read_bytes() == PRINTS.read_bytes()
    report = report_from_json((bundle / "report.json").read_text())
    assert report.audience == "panel" and report.graded
    assert any(c.visibility.value == "hidden" and not c.id.startswith("hidden-") for c in report.checks)
    assert json.loads((bundle / "environment.json").read_text()) == report.environment.model_dump(mode="json")
    assert report.environment.submission_sha256 == hashlib.sha256(PRINTS.read_bytes()).hexdigest()


def test_output_txt_holds_the_submissions_print_labelled_by_check(bundle):
    text = (bundle / "output.txt").read_text()
    assert "<script>alert('x')</script> scaling" in text
    assert "===== test_toy.py::test_scale_small (Scales a small tensor)" in text


def test_coreutils_sha256sum_accepts_the_sums_file(bundle):
    done = subprocess.run(["sha256sum", "-c", "SHA256SUMS"], cwd=bundle, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "report.json: OK" in done.stdout and "submission/prints.py: OK" in done.stdout


def test_an_intact_bundle_verifies_exit_0(bundle):
    assert verify_bundle(bundle) == []
    r = invoke("bundle", "verify", bundle)
    assert r.exit_code == 0 and r.output.startswith("signed and intact: signed with this machine's key "), r.output


@pytest.mark.parametrize("rel, disagrees", [("report.json", []),  # a newline more: the same report
                                            ("submission/prints.py", ["not the one report.json records"])])
def test_an_edited_file_is_listed_exit_5(bundle, rel, disagrees):
    with open(bundle / rel, "a") as f:
        f.write("\n")
    problems = verify_bundle(bundle)
    assert problems[0] == f"{rel}: changed (sha256 differs from SHA256SUMS)"
    assert problems[-1] == f"{rel}: edited after the bundle was signed (it does not match the signature)"
    assert len(problems) == 2 + len(disagrees) and all(w in p for w, p in zip(disagrees, problems[1:]))
    r = invoke("bundle", "verify", bundle)
    assert r.exit_code == 5 and rel in r.output


def test_missing_and_extra_files_are_listed(bundle):
    (bundle / "output.txt").unlink()
    (bundle / "notes.txt").write_text("added later\n")
    assert sorted(verify_bundle(bundle)) == ["notes.txt: added after the bundle was signed (not in the signature)",
                                             "notes.txt: extra (not listed in SHA256SUMS)", "output.txt: missing",
                                             "output.txt: missing (the signature lists it)"]


def test_an_existing_non_empty_dest_is_refused_and_left_alone(made, tmp_path):
    dest = tmp_path / "taken"
    dest.mkdir()
    (dest / "keep.txt").write_text("precious\n")
    report = report_from_json((made / "report.json").read_text())
    with pytest.raises(UsageError, match="never overwritten"):
        write_bundle(report, made / "submission" / "prints.py", dest)
    assert [p.name for p in dest.iterdir()] == ["keep.txt"] and (dest / "keep.txt").read_text() == "precious\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]  # no half-written folder left beside it


def test_an_empty_dest_folder_is_used(made, tmp_path):
    dest = tmp_path / "empty"
    dest.mkdir()
    report = report_from_json((made / "report.json").read_text())
    write_bundle(report, made / "submission" / "prints.py", dest)
    assert verify_bundle(dest) == []


def test_a_submission_other_than_the_graded_one_is_refused(made, tmp_path):
    report = report_from_json((made / "report.json").read_text())
    with pytest.raises(UsageError, match=report.environment.submission_sha256):
        write_bundle(report, TOY / "solution.py", tmp_path / "b")
    assert not (tmp_path / "b").exists()


def test_regrade_finds_the_submission_inside_a_bundle(bundle):
    r = invoke("regrade", bundle / "report.json", "--exercises", TOY.parent, "--sandbox", "local")
    assert r.exit_code == 0 and "every check's outcome matches" in r.output, r.output


def test_submit_refuses_a_taken_bundle_folder_before_grading(tmp_path):
    dest = tmp_path / "taken"
    dest.mkdir()
    (dest / "keep.txt").write_text("precious\n")
    r = invoke("submit", TOY, "--exercise-root", TOY.parent, PRINTS, "--sandbox", "local", "--bundle", dest, "--json", tmp_path / "r.json")
    assert r.exit_code == 2 and "never overwritten" in r.output
    assert "Score" not in r.output and not (tmp_path / "r.json").exists()  # nothing graded, nothing written
    assert [p.name for p in dest.iterdir()] == ["keep.txt"]


def resum(bundle: Path) -> None:
    """What someone covering an edit would do: write SHA256SUMS again, so every sum matches."""
    (bundle / SUMS).write_text("".join(f"{d}  {rel}\n" for rel, d in _digests(bundle).items()))


def only_disagreement(bundle: Path) -> list[str]:
    """What the parts' agreement finds once the sums were rewritten: the signature finds the rewrite too
    (it covers SHA256SUMS), and its lines are left out here."""
    resum(bundle)
    problems = verify_bundle(bundle)
    assert f"{SUMS}: edited after the bundle was signed (it does not match the signature)" in problems
    problems = [p for p in problems if "the signature" not in p]
    assert not any("SHA256SUMS" in p for p in problems)  # the sums alone would pass it
    return problems


def test_an_edited_submission_with_new_sums_disagrees_with_the_report(bundle):
    (bundle / "submission" / "prints.py").write_text("def scale(x, k):\n    return x * k\n")
    recorded = report_from_json((bundle / "report.json").read_text()).environment.submission_sha256
    [problem] = only_disagreement(bundle)
    assert problem.startswith("submission/prints.py: sha256 ") and recorded in problem
    r = invoke("bundle", "verify", bundle)
    assert r.exit_code == 5 and "edited: submission/prints.py" in r.output


def test_an_edited_environment_with_new_sums_names_the_field(bundle):
    env = json.loads((bundle / "environment.json").read_text())
    env["hypothesis_seed"] += 1
    (bundle / "environment.json").write_text(json.dumps(env, indent=2))
    assert only_disagreement(bundle) == ["environment.json: differs from report.json's environment (hypothesis_seed)"]


def test_an_edited_output_with_new_sums_disagrees_with_the_report(bundle):
    text = (bundle / "output.txt").read_text()
    (bundle / "output.txt").write_text(text.replace("<script>alert('x')</script> scaling", "nothing printed"))
    assert only_disagreement(bundle) == ["output.txt: differs from the checks' output in report.json"]


def test_a_second_submission_file_is_a_problem(bundle):
    (bundle / "submission" / "other.py").write_text("x = 1\n")
    assert only_disagreement(bundle) == ["submission/: holds 2 files, a bundle holds exactly one"]


@pytest.mark.parametrize("text", ["{not json", '{"graded": true}', "\udcff"])
def test_a_report_that_does_not_parse_is_named_not_a_traceback(bundle, text):
    (bundle / "report.json").write_text(text, errors="surrogateescape")  # the last is not UTF-8 at all
    [problem] = only_disagreement(bundle)
    assert problem.startswith("report.json: not a grading report (")
    r = invoke("bundle", "verify", bundle)
    assert r.exit_code == 5 and "edited: report.json: not a grading report" in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_a_symlink_in_place_of_a_part_is_named_and_never_followed(bundle, tmp_path):
    """output.txt moved out and linked back: the sums still match what the link points at."""
    outside = tmp_path / "elsewhere.txt"
    (bundle / "output.txt").rename(outside)
    (bundle / "output.txt").symlink_to(outside)
    r = invoke("bundle", "verify", bundle)
    assert r.exit_code == 5, r.output
    assert "edited: output.txt: a symlink, not read" in r.output


def test_a_fifo_or_a_linked_folder_in_a_bundle_is_named_not_opened(bundle, tmp_path):
    import os

    os.mkfifo(bundle / "pipe")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("not the bundle's")
    (bundle / "linked").symlink_to(tmp_path / "outside")
    assert sorted(verify_bundle(bundle)) == ["linked: a symlink, not read", "pipe: not a regular file, not read"]


def test_bundle_verify_shows_file_names_and_sums_lines_escaped(bundle):
    hostile = "evil\x1b[2J\x1b]0;owned\x07\u202etxt.exe"
    (bundle / hostile).write_text("x")
    with open(bundle / SUMS, "a", encoding="utf-8") as f:
        f.write(f"{'0' * 64}  gone\u202e\x1b[31m.txt\n")
    r = invoke("bundle", "verify", bundle)
    assert r.exit_code == 5, r.output
    assert "edited: evil\\x1b[2J\\x1b]0;owned\\x07\\u202etxt.exe: extra" in r.output
    assert "edited: gone\\u202e\\x1b[31m.txt: missing" in r.output
    assert "\x1b" not in r.output and "\u202e" not in r.output


# Signed bundles (issue 25): an edit whose author rewrote the sums is refused; unsigned is never "intact".

USES_MUL = Path(__file__).parent / "fixtures" / "toy_solutions" / "toy" / "mutants" / "uses_mul.py"


@pytest.fixture(scope="module")
def made_forbidden(tmp_path_factory):
    """A bundle of the toy's forbidden-API mistake: 1/6 with the forbidden flag."""
    dest = tmp_path_factory.mktemp("made") / "bundle"
    sub = tmp_path_factory.mktemp("sub") / "toy.py"
    shutil.copy(USES_MUL, sub)
    r = invoke("submit", "toy", sub, "--exercise-root", TOY.parent, "--sandbox", "local", "--no-history", "--bundle", dest,
               GRADER_DATA_DIR=str(tmp_path_factory.mktemp("data")))
    assert r.exit_code == 0, r.output
    report = report_from_json((dest / "report.json").read_text())
    assert (report.score, report.max_score) == (1, 6) and report.forbidden
    return dest


@pytest.fixture
def forbidden(made_forbidden, tmp_path):
    copy = tmp_path / "bundle"
    shutil.copytree(made_forbidden, copy)
    return copy


def edit_report(bundle: Path, edit) -> None:
    data = json.loads((bundle / "report.json").read_text())
    edit(data)
    (bundle / "report.json").write_text(json.dumps(data, indent=2))


def test_the_attack_an_edited_score_and_flags_with_new_sums_is_refused_and_never_shown(forbidden, tmp_path):
    edit_report(forbidden, lambda data: data.update(score=data["max_score"], forbidden=[]))
    resum(forbidden)
    problems = verify_bundle(forbidden)
    assert "report.json: edited after the bundle was signed (it does not match the signature)" in problems
    assert "report.json: edited: score is 6 but its checks add up to 1" in problems
    assert any(p.startswith("report.json: edited: forbidden is missing torch.mul") for p in problems)
    r = invoke("bundle", "verify", forbidden)
    assert r.exit_code == 5 and "intact" not in r.output, r.output
    assert "edited: report.json: edited: score is 6 but its checks add up to 1" in r.output
    with pytest.raises(ValueError, match="score is 6 but its checks add up to 1"):
        report_from_json((forbidden / "report.json").read_text())
    r = invoke("regrade", forbidden / "report.json", "--exercises", TOY.parent, "--sandbox", "local")
    assert r.exit_code == 5 and "refused: score is 6 but its checks add up to 1" in r.output, r.output
    assert "6/6" not in r.output and "matches" not in r.output


def forge_full_marks(bundle: Path) -> None:
    """A careful forgery: every check passed, no flag, the score to match, output.txt and the sums made again.
    Nothing in the bundle disagrees with anything else; only the signature can tell."""
    from grader.evidence.bundle import captured_output

    def full(data):
        for c in data["checks"]:
            c["status"], c["score"], c["message"], c["forbidden"] = "passed", c["max_score"], "", []
        data["score"], data["forbidden"], data["findings"] = data["max_score"], [], []
    edit_report(bundle, full)
    report = report_from_json((bundle / "report.json").read_text())  # it agrees with itself
    (bundle / "output.txt").write_text(captured_output(report))
    resum(bundle)


def test_a_consistent_forgery_is_found_by_the_signature_naming_each_file(forbidden):
    forge_full_marks(forbidden)
    assert sorted(verify_bundle(forbidden)) == [
        f"{name}: edited after the bundle was signed (it does not match the signature)"
        for name in ("SHA256SUMS", "output.txt", "report.json")]
    r = invoke("bundle", "verify", forbidden)
    assert r.exit_code == 5 and "intact" not in r.output, r.output
    r = invoke("regrade", forbidden / "report.json", "--exercises", TOY.parent, "--sandbox", "local")
    assert r.exit_code == 5, r.output
    assert "mismatch: bundle: report.json: edited after the bundle was signed" in r.output
    assert "mismatch: score: 6 vs 1" in r.output and "mismatch: flags: (none) vs forbidden" in r.output


def test_a_bundle_without_a_signature_is_unsigned_not_intact(bundle):
    (bundle / "SIGNATURE").unlink()
    assert verify_bundle(bundle) == []  # nothing found edited...
    r = invoke("bundle", "verify", bundle)
    assert r.exit_code == 6, r.output  # ...but nothing vouches for it either
    assert r.output.startswith("unsigned: the bundle has no SIGNATURE") and "intact" not in r.output
    assert "which, cannot be told" in r.output


def test_a_bundle_signed_with_another_key_is_not_signed_by_this_key(bundle, tmp_path, monkeypatch):
    from grader.evidence.signing import load_key

    signed_by = load_key(create=False).id
    monkeypatch.setenv("GRADER_KEY_FILE", str(tmp_path / "other.key"))
    r = invoke("bundle", "verify", bundle)
    assert r.exit_code == 6 and "not signed by this key" in r.output and "this machine has no key" in r.output
    mine = load_key(create=True).id
    r = invoke("bundle", "verify", bundle)
    assert r.exit_code == 6 and "intact" not in r.output, r.output
    assert f"not signed by this key: the signature names key {signed_by}, this machine's key is {mine}" in r.output
    (bundle / "submission" / "prints.py").write_text("x = 1\n")  # an edit still shows through the other checks
    r = invoke("bundle", "verify", bundle)
    assert r.exit_code == 5 and "edited: submission/prints.py: changed" in r.output


def test_a_signature_line_removed_with_its_file_is_found(bundle):
    (bundle / "output.txt").unlink()
    lines = (bundle / "SIGNATURE").read_text().splitlines(keepends=True)
    (bundle / "SIGNATURE").write_text("".join(line for line in lines if not line.endswith("  output.txt\n")))
    assert "SIGNATURE: its list of files was edited (it does not match the signature)" in verify_bundle(bundle)


def test_the_key_never_travels_in_the_bundle(bundle):
    from grader.evidence.signing import load_key

    secret = load_key(create=False).secret.hex()
    assert not any(secret in p.read_text(errors="replace") for p in bundle.rglob("*") if p.is_file())
