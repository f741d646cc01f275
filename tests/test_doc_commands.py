"""Every ``grader ...`` command line in README.md and docs/ parses as the CLI parses it (``tests/doc_commands.py``):
a renamed option, command or choice fails here, not in a newcomer's terminal. So does an option named alone
in prose (``--solutions-root DIR``) that no command has, or only as a deprecated spelling."""

from __future__ import annotations

import pytest

from tests.doc_commands import DOC_FILES, check, command_lines, every_option, named_options

#: The one page that lists the old spellings kept for a release (and so names them).
OLD_SPELLINGS_LISTED = "docs/options.md"
#: Options named in the docs that are not grader's, and why.
NOT_GRADERS = {
    "--nvproxy": "gVisor's runsc flag, written into Docker's daemon.json (docs/gpu.md)",
}


def test_every_grader_command_line_in_the_docs_parses():
    lines = [w for path in DOC_FILES for w in command_lines(path)]
    assert len(lines) > 100 and {w.file for w in lines} >= {"README.md", "docs/panels.md", "docs/authors.md"}
    refused = [f"{w.file}:{w.line}: `grader {' '.join(w.argv)}`: {why}" for w in lines if (why := check(w.argv))]
    assert refused == [], "\n".join(refused)


def test_every_option_named_in_the_docs_exists_in_its_current_spelling():
    options = every_option()
    wrong = []
    for w in (w for path in DOC_FILES for w in named_options(path)):
        option = w.argv[0]
        if option in NOT_GRADERS:
            continue
        if option not in options:
            wrong.append(f"{w.file}:{w.line}: {w.text}: no grader command has {option}")
        elif not options[option] and w.file != OLD_SPELLINGS_LISTED:
            wrong.append(f"{w.file}:{w.line}: {w.text}: {option} is a deprecated spelling")
    assert wrong == [], "\n".join(wrong)


@pytest.mark.parametrize("argv, why", [
    (("batch", "s/", "--output", "r/", "--colour"), "No such option"),
    (("submit", "--sandbox", "dockerr"), "'dockerr' is not one of"),
    (("sandbox", "bulid"), "no command 'bulid'"),
    (("submitt",), "no command 'submitt'"),
    (("hand-in", "extra"), "unexpected extra argument"),
    (("validate", "--solutions", "DIR"), "deprecated spelling"),
    (("batch", "--jobs", "two"), "'two' is not a valid integer"),
])
def test_what_the_parser_refuses(argv, why):
    assert why in (check(argv) or "(accepted)")


@pytest.mark.parametrize("argv", [
    ("submit",), ("batch", "SUBMISSIONS", "--output", "OUT", "--jobs", "N"), ("regrade", "REPORT.json", "[SUBMISSION]"),
    ("submit", "...", "--bundle", "DIR"), ("sandbox", "build", "--cuda"), ("validate", "--gpus", "device=0,1"),
])
def test_what_it_accepts_placeholders_included(argv):
    assert check(argv) is None


def test_lines_are_found_in_blocks_and_inline_code(tmp_path, monkeypatch):
    import tests.doc_commands as dc

    page = tmp_path / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text("Run `grader list`, then\n```bash\n.venv/bin/grader batch s/ --output r/ \\\n    --jobs 2  # two\n"
                    "GRADER_TAG=x python3 -m grader validate a && grader key | head -1\n"
                    "batch/   grader batch: a file tree, not a command\n```\nand `grader show\nattention` too.\n")
    monkeypatch.setattr(dc, "REPO", tmp_path)
    found = [(w.line, w.argv) for w in command_lines(page)]
    assert found == [(3, ("batch", "s/", "--output", "r/", "--jobs", "2")), (5, ("validate", "a")), (5, ("key",)),
                     (1, ("list",)), (8, ("show", "attention"))]
    assert [w.argv for w in named_options(page)] == []
