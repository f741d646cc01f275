"""Workspaces: public files only, never a silent overwrite, and found again from anywhere inside."""

import shutil
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.catalogs import given, installed
from grader.cli import main
from grader.errors import UsageError
from grader.exercise import load_exercise
from grader.practice.workspace import MARKER, find_workspace, init_workspace, public_contents

TOY = Path(__file__).parent / "fixtures" / "toy"


@pytest.fixture
def attention():
    return load_exercise("attention")


def test_public_files_are_the_allowlist(attention):
    assert [p.name for p in attention.public_files] == ["README.md", "attention.py", "test_attention_example.py"]


def test_init_copies_the_public_files_the_stub_byte_for_byte(attention, tmp_path):
    result = init_workspace(attention, tmp_path / "ws")
    for name, data in public_contents(attention).items():  # the prose with its commands made to work there
        assert (tmp_path / "ws" / name).read_bytes() == data
    assert (tmp_path / "ws" / "attention.py").read_bytes() == attention.stub.read_bytes()
    assert sorted(p.name for p in (tmp_path / "ws").iterdir()) == sorted(
        [MARKER, *(p.name for p in attention.public_files)])
    assert len(result.written) == 4 and not result.backups
    marker = tomllib.loads((tmp_path / "ws" / MARKER).read_text())
    # A name and the exercise's fingerprint, never a path (issue 25.4).
    assert marker["workspace"] == {"exercise": "attention", "submission": "attention.py",
                                   "fingerprint": attention.fingerprint}


def test_init_again_leaves_identical_files_alone(attention, tmp_path):
    init_workspace(attention, tmp_path)
    again = init_workspace(attention, tmp_path)
    assert again.written == [] and len(again.unchanged) == 4


def test_refuses_to_overwrite_and_writes_nothing(attention, tmp_path):
    mine = tmp_path / "attention.py"
    mine.write_bytes(b"def scaled_dot_product_attention(): ...  # my work\r\n")
    r = CliRunner().invoke(main, ["init", "attention", str(tmp_path)])
    assert r.exit_code == 2 and str(mine) in r.output and "--force" in r.output
    assert "Traceback" not in r.output
    assert mine.read_bytes() == b"def scaled_dot_product_attention(): ...  # my work\r\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["attention.py"]  # checked all before writing any


def test_refusal_lists_every_differing_file(attention, tmp_path):
    for name in ("attention.py", "README.md"):
        (tmp_path / name).write_text("mine\n")
    with pytest.raises(UsageError) as e:
        init_workspace(attention, tmp_path)
    assert str(tmp_path / "attention.py") in str(e.value) and str(tmp_path / "README.md") in str(e.value)


def test_force_keeps_the_old_file_as_bak(attention, tmp_path):
    (tmp_path / "attention.py").write_text("first\n")
    (tmp_path / "attention.py.bak").write_text("an older backup\n")
    r = CliRunner().invoke(main, ["init", "attention", str(tmp_path), "--force"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "attention.py").read_bytes() == attention.stub.read_bytes()
    assert (tmp_path / "attention.py.bak.1").read_text() == "first\n"  # .bak was taken
    assert (tmp_path / "attention.py.bak").read_text() == "an older backup\n"
    assert "attention.py.bak.1" in r.output


def test_init_prints_what_it_wrote_and_the_next_steps(tmp_path):
    r = CliRunner().invoke(main, ["init", "attention", str(tmp_path / "ws")])
    assert r.exit_code == 0, r.output
    for text in ("README.md", "test_attention_example.py", "cd ", "attention.py", "pytest", "grader submit"):
        assert text in r.output


def test_the_marker_is_found_from_a_subfolder_and_loads_the_exercise(attention, tmp_path):
    init_workspace(attention, tmp_path / "ws")
    deep = tmp_path / "ws" / "notes" / "deeper"
    deep.mkdir(parents=True)
    ws = find_workspace(deep)
    assert ws.root == (tmp_path / "ws").resolve() and ws.submission == ws.root / "attention.py"
    assert ws.load(installed()).root == attention.root
    assert find_workspace(tmp_path / "ws" / "attention.py").root == ws.root  # a file inside works too
    assert find_workspace(tmp_path) is None


def test_a_workspace_records_a_name_never_a_path_even_for_an_exercise_outside_the_catalog(tmp_path):
    toy = load_exercise(shutil.copytree(TOY, tmp_path / 'a "quoted" \\ földer' / "toy"))
    init_workspace(toy, tmp_path / "ws")
    ws = find_workspace(tmp_path / "ws")
    assert "path" not in tomllib.loads(ws.marker.read_text())["workspace"]
    assert ws.exercise == "toy" and ws.fingerprint == toy.fingerprint
    assert ws.load(given(toy.root.parent)).root == toy.root  # found by name, in the catalog the user names
    with pytest.raises(UsageError, match="toy"):
        ws.load(installed())


def test_an_older_marker_path_is_never_followed_and_a_changed_exercise_is_noted(tmp_path, attention):
    """A marker is the candidate's file: its `path = ...` could name any folder (issue 25.4)."""
    elsewhere = shutil.copytree(TOY, tmp_path / "elsewhere" / "attention")
    (tmp_path / MARKER).write_text(f'[workspace]\nexercise = "attention"\nsubmission = "attention.py"\n'
                                   f'path = "{elsewhere}"\nfingerprint = "{"0" * 64}"\n')
    ws = find_workspace(tmp_path)
    ex = ws.load(installed())
    assert ex.root == attention.root and ex.fingerprint == attention.fingerprint
    notes = ws.notes(ex)
    assert any("is not used" in n and "--exercise-root" in n for n in notes)
    assert any("changed since this workspace was made" in n for n in notes)


def test_init_again_rewrites_an_older_marker_of_the_same_exercise_keeping_its_candidate(attention, tmp_path):
    (tmp_path / MARKER).write_text('[workspace]\nexercise = "attention"\nsubmission = "attention.py"\n'
                                   'candidate = "ann"\n')
    result = init_workspace(attention, tmp_path)
    assert tmp_path / MARKER in result.written and not result.backups
    assert find_workspace(tmp_path).candidate == "ann" and find_workspace(tmp_path).fingerprint == attention.fingerprint


def test_a_broken_marker_is_a_usage_error_naming_it(tmp_path):
    marker = tmp_path / MARKER
    marker.write_text("[workspace\n")
    with pytest.raises(UsageError, match=str(marker)):
        find_workspace(tmp_path)
    marker.write_text('[workspace]\nexercise = "no_such_exercise"\nsubmission = "x.py"\n')
    ws = find_workspace(tmp_path)
    with pytest.raises(UsageError, match=str(marker)) as e:
        ws.load(installed())
    assert "no_such_exercise" in str(e.value)
    marker.write_text('[workspace]\nexercise = "attention"\nsubmission = "../../etc/passwd"\n')
    with pytest.raises(UsageError, match="submission must be a file name"):
        find_workspace(tmp_path)
