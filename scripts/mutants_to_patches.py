"""Turn whole-file mutants into patches against the reference, where the mistake is a few lines.

    python scripts/mutants_to_patches.py                  # every exercise, mutants/ and more_mutants/
    python scripts/mutants_to_patches.py lora_linear --dry-run

For each ``solutions/<name>/{mutants,more_mutants}/NAME.py`` whose difference from the
reference (its docstring aside) is at most ``--max-hunks`` hunks and ``--max-changed``
changed lines, writes ``NAME.diff`` (the docstring as the description, then the diff)
and removes ``NAME.py``. The patch is checked first: applied to the reference it must
give the mutant's text with the reference's docstring, so the graded code is the same.
A larger difference (a rewrite) stays a whole file. Authors can write a mistake as a
copy of the reference, then run this to keep only the lines that make it.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader.corpus import MUTANT_FOLDERS, SOLUTIONS_DIR  # noqa: E402
from grader.exercise import load_exercise  # noqa: E402
from grader.mutant_patch import PATCH_SUFFIX, make_patch, parse_patch  # noqa: E402
from grader.validation import all_exercise_names  # noqa: E402


def docstring_span(source: str, where: Path) -> tuple[int, int]:
    """The module docstring's lines, as a 0-based half-open range."""
    body = ast.parse(source).body
    first = body[0] if body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)):
        raise SystemExit(f"{where}: no module docstring (a mutant's docstring says its mistake)")
    return first.lineno - 1, first.end_lineno


def as_patch(reference: Path, mutant: Path) -> tuple[str, int, int]:
    """(patch text, hunks, changed lines) for ``mutant``; the patch reproduces it, docstring aside."""
    ref_text, mut_text = reference.read_text(encoding="utf-8"), mutant.read_text(encoding="utf-8")
    ref_lines, mut_lines = ref_text.splitlines(keepends=True), mut_text.splitlines(keepends=True)
    (a, b), (c, d) = docstring_span(mut_text, mutant), docstring_span(ref_text, reference)
    body = "".join(mut_lines[:a] + ref_lines[c:d] + mut_lines[b:])  # the mutant, under the reference's docstring
    description = ast.get_docstring(ast.parse(mut_text))
    patch = make_patch(ref_text, body, name=reference.name, description=description)
    parsed = parse_patch(patch, mutant.with_suffix(PATCH_SUFFIX))
    if parsed.apply_to(reference) != body:
        raise SystemExit(f"{mutant}: the patch does not give the mutant back")
    hunk_lines = patch[patch.index("\n@@ "):].splitlines()
    changed = sum(1 for line in hunk_lines if line[:1] in "+-")
    return patch, len(parsed.hunks), changed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("exercises", nargs="*", help="default: every exercise")
    parser.add_argument("--max-hunks", type=int, default=4)
    parser.add_argument("--max-changed", type=int, default=12, help="removed plus added lines, at most")
    parser.add_argument("--dry-run", action="store_true", help="say what would change, change nothing")
    args = parser.parse_args()
    converted = kept = 0
    for name in args.exercises or all_exercise_names():
        ex = load_exercise(name)
        reference = SOLUTIONS_DIR / ex.name / ex.config.exercise.submission
        for folder in MUTANT_FOLDERS:
            for mutant in sorted((SOLUTIONS_DIR / ex.name / folder).glob("*.py")):
                patch, hunks, changed = as_patch(reference, mutant)
                rel = mutant.relative_to(SOLUTIONS_DIR)
                if hunks > args.max_hunks or changed > args.max_changed:
                    kept += 1
                    print(f"kept whole  {rel} ({hunks} hunks, {changed} lines changed)")
                    continue
                converted += 1
                print(f"patch       {rel} ({hunks} hunks, {changed} lines changed)")
                if not args.dry_run:
                    mutant.with_suffix(PATCH_SUFFIX).write_text(patch, encoding="utf-8")
                    mutant.unlink()
    print(f"{converted} mutants {'would become' if args.dry_run else 'became'} patches, {kept} stay whole files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
