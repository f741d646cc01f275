"""Which catalog a command reads (issues 25.4 and 30.2): grading never from the current folder, authoring from
the checkout around it. Fast: no grading here (the attack is graded for real in test_catalog_by_name.py)."""

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.catalogs import (NotInCatalog, authoring_catalog, find_checkout, given, grading_catalog, installed)
from grader.cli import every_command, main
from grader.errors import UsageError
from grader.exercise import REPO_ROOT
from grader.unknown_exercise import UnknownExercise

TOY = Path(__file__).parent / "fixtures" / "toy"


def make_checkout(root: Path, *exercises: str) -> Path:
    """A grader checkout as `git clone` makes one: pyproject.toml naming grader, exercises/ and solutions/."""
    (root / "solutions").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "grader"\nversion = "0"\n')
    for name in exercises:
        folder = shutil.copytree(TOY, root / "exercises" / name)
        toml = folder / "exercise.toml"
        toml.write_text(toml.read_text().replace('name = "toy"', f'name = "{name}"'))
    (root / "exercises").mkdir(exist_ok=True)
    return root


def test_a_checkout_is_found_from_any_folder_inside_it_and_only_when_pyproject_names_grader(tmp_path):
    clone = make_checkout(tmp_path / "clone")
    (clone / "notes" / "deep").mkdir(parents=True)
    assert find_checkout(clone / "notes" / "deep") == clone.resolve()
    (clone / "pyproject.toml").write_text('[project]\nname = "something-else"\n')
    assert find_checkout(clone) is None
    assert find_checkout(REPO_ROOT / "grader") == REPO_ROOT


def test_authoring_commands_use_the_checkout_around_the_current_folder(tmp_path):
    clone = make_checkout(tmp_path / "clone", "demo")
    catalog = authoring_catalog(clone / "exercises")
    assert catalog.origin == "checkout" and catalog.exercises == clone.resolve() / "exercises"
    assert catalog.solutions == clone.resolve() / "solutions" and catalog.names() == ["demo"]
    assert authoring_catalog(tmp_path).origin == "installed"  # outside any checkout
    assert authoring_catalog(REPO_ROOT).origin == "installed"  # the installed checkout is no "other" one


def test_grading_commands_use_the_installed_catalog_and_say_how_to_use_the_checkout_they_run_in(tmp_path):
    clone = make_checkout(tmp_path / "clone", "demo")
    catalog, note = grading_catalog(clone)
    assert catalog == installed()
    assert note is not None and str(clone.resolve()) in note
    assert f"--exercise-root {clone.resolve() / 'exercises'}" in note
    assert grading_catalog(tmp_path) == (installed(), None)
    assert grading_catalog(clone, exercise_root=clone / "exercises")[0].names() == ["demo"]


def test_a_name_is_looked_up_in_the_catalog_only_never_in_the_current_folder(tmp_path, monkeypatch):
    shutil.copytree(TOY, tmp_path / "attention")  # a folder here that holds an exercise.toml
    monkeypatch.chdir(tmp_path)
    ex = installed().resolve("attention")
    assert ex.root == REPO_ROOT / "exercises" / "attention"


def test_a_path_is_accepted_only_when_it_is_the_catalogs_own_folder_of_that_name(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO_ROOT)
    assert installed().resolve("exercises/attention").name == "attention"  # typed at the checkout's root
    impostor = shutil.copytree(REPO_ROOT / "exercises" / "attention", tmp_path / "attention")
    with pytest.raises(NotInCatalog) as refused:
        installed().resolve(str(impostor))
    assert "--exercise-root" in refused.value.hint and str(tmp_path) in refused.value.hint
    assert given(tmp_path).resolve(str(impostor)).root == impostor.resolve()  # once the user names that catalog


def test_a_mistyped_name_or_a_missing_path_gets_the_known_names(tmp_path):
    with pytest.raises(UnknownExercise, match="Did you mean attention"):
        installed().resolve("attenton")
    with pytest.raises(UnknownExercise):
        installed().resolve(str(tmp_path / "nowhere"))
    with pytest.raises(UsageError, match="is not a folder"):
        given(tmp_path / "nowhere")


# --- authoring in a clone with the CLI installed from another checkout (issue 30.2) ----------------------------


def test_new_list_show_init_in_a_clone_use_that_clone_and_say_so(tmp_path, monkeypatch):
    clone = make_checkout(tmp_path / "clone")
    monkeypatch.chdir(clone)
    runner = CliRunner()
    made = runner.invoke(main, ["new", "demo"])
    assert made.exit_code == 0, made.output
    assert f"writing into the exercises of the checkout {clone.resolve()}" in made.output
    assert (clone / "exercises" / "demo" / "exercise.toml").is_file() and (clone / "solutions" / "demo").is_dir()
    assert not (REPO_ROOT / "exercises" / "demo").exists()
    assert "grader validate demo --sandbox local" in made.output and "--record" not in made.output
    listed = runner.invoke(main, ["list"], env={"COLUMNS": "120"})
    assert listed.exit_code == 0 and "note: listing the exercises of the checkout" in listed.output
    assert "demo" in listed.output and "attention" not in listed.output
    shown = runner.invoke(main, ["show", "demo"], env={"COLUMNS": "120"})
    assert shown.exit_code == 0 and "Exercise:     demo" in shown.output, shown.output
    ws = runner.invoke(main, ["init", "demo", str(tmp_path / "ws")], env={"COLUMNS": "200"})
    assert ws.exit_code == 0, ws.output
    assert f"grader submit --exercise-root {clone.resolve() / 'exercises'}" in ws.output  # grading never takes it from here
    again = runner.invoke(main, ["new", "attention"])  # exists in the installed checkout, not in this one
    assert again.exit_code == 0, again.output


def test_grading_inside_a_clone_says_in_one_line_how_to_use_it(tmp_path, monkeypatch):
    clone = make_checkout(tmp_path / "clone", "demo")
    monkeypatch.chdir(clone)
    r = CliRunner().invoke(main, ["submit", "demo", "x.py"])
    assert r.exit_code == 2
    assert "No exercise named 'demo' in the installed exercises" in r.output
    assert f"add --exercise-root {clone.resolve() / 'exercises'}" in " ".join(r.output.split())


@pytest.mark.parametrize("argv, old, new", [
    (["new", "demo", "--exercises", "{root}/ex", "--solutions", "{root}/sol"], "--exercises", "--exercise-root"),
    (["validate", "nothing_here", "--solutions", "{root}/sol", "--sandbox", "local"], "--solutions",
     "--solutions-root"),
    (["regrade", "{root}/none.json", "--exercises", "{root}"], "--exercises", "--exercise-root"),
])
def test_old_option_spellings_still_work_for_one_release_and_say_their_new_name(tmp_path, argv, old, new):
    r = CliRunner().invoke(main, [a.format(root=tmp_path) for a in argv])
    assert f"deprecated: {old} is now {new}; the old spelling goes in the next release." in r.output, r.output
    assert "Traceback" not in r.output


def test_every_command_spells_a_catalog_folder_the_same_way():
    """Issue 30.3: one option name per meaning. A folder of exercises is --exercise-root everywhere, a folder
    of solutions --solutions-root, a list of names --only; no visible option is called --exercises."""
    import click

    def walk(group):
        for cmd in (every_command() if group is main else group.commands).values():
            yield from walk(cmd) if isinstance(cmd, click.Group) else [cmd]

    for cmd in walk(main):
        for param in cmd.params:
            if isinstance(param, click.Option) and not param.hidden:
                assert "--exercises" not in param.opts and "--solutions" not in param.opts, (cmd.name, param.opts)
                if "--exercise-root" in param.opts:
                    assert param.help.startswith("Folder holding exercise folders by name."), cmd.name
    takes_a_catalog = {c.name for c in walk(main) if any("--exercise-root" in getattr(p, "opts", []) for p in c.params)}
    assert {"submit", "batch", "regrade", "list", "show", "init", "pack", "new", "validate", "start"} <= takes_a_catalog
