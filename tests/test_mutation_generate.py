"""The mutant generator (grader.mutation.generate): each operator's change, stable ids, what is dropped, sampling."""

import textwrap

import pytest

pytest.importorskip("cosmic_ray", reason="the mutation extra (cosmic-ray) is not installed")

from grader.mutation.generate import Mutant, generate  # noqa: E402
from grader.mutation.operators import Entry, Operator, catalogue  # noqa: E402
from grader.mutation.score import sample  # noqa: E402

ENTRIES = {e.name: e for e in catalogue()}


def only(name: str, source: str):
    return generate(textwrap.dedent(source), operators=(ENTRIES[name],))


@pytest.mark.parametrize("name, before, after", [
    ("add_to_sub", "y = a + b\n", "y = a - b\n"),
    ("div_to_floordiv", "y = a / b\n", "y = a // b\n"),
    ("mul_to_pow", "y = a * b\n", "y = a ** b\n"),
    ("matmul_to_mul", "y = q @ k\n", "y = q * k\n"),
    ("lt_to_lte", "ok = i < n\n", "ok = i <= n\n"),
    ("isnot_to_is", "ok = m is not None\n", "ok = m is None\n"),
    ("drop_minus", "y = x.sum(dim=-1)\n", "y = x.sum(dim=1)\n"),
    ("number_plus_one", "y = x.sum(dim=-1)\n", "y = x.sum(dim=-2)\n"),
    ("number_minus_one", "y = x[1:]\n", "y = x[0:]\n"),
    ("true_to_false", "y = x.sum(keepdim=True)\n", "y = x.sum(keepdim=False)\n"),
    ("and_to_or", "ok = a and b\n", "ok = a or b\n"),
    ("drop_not", "if not ok:\n    y = 1\n", "if ok:\n    y = 1\n"),
    ("zero_iterations", "for p in ps:\n    p.grad = None\n", "for p in []:\n    p.grad = None\n"),
    ("break_to_continue", "for p in ps:\n    break\n", "for p in ps:\n    continue\n"),
    ("drop_decorator", "@torch.no_grad()\ndef f(x):\n    return x\n", "def f(x):\n    return x\n"),
    ("drop_statement", "def f(opt):\n    opt.zero_grad()\n    return opt\n", "def f(opt):\n    pass\n    return opt\n"),
    ("swap_arguments", "y = torch.clamp(x, lo, hi)\n", "y = torch.clamp(lo, x, hi)\n"),
])
def test_each_operator_makes_its_one_change(name, before, after):
    made = only(name, before).mutants
    assert made, f"{name} made no mutant of {before!r}"
    assert made[0].source == after
    assert made[0].operator == name


def test_ids_name_operator_line_and_column_and_are_the_same_every_time():
    source = "def f(a, b):\n    c = a + b\n    return c + a\n"
    first, again = generate(source), generate(source)
    assert [m.id for m in first.mutants] == [m.id for m in again.mutants]
    adds = [m.id for m in first.mutants if m.operator == "add_to_sub"]
    assert adds == ["add_to_sub@2:11", "add_to_sub@3:14"]  # 1-based, where the '+' stands
    m = next(m for m in first.mutants if m.id == "add_to_sub@3:14")
    assert m.line == 3 and m.col == 14 and m.line_text == "return c + a"
    assert m.diff.startswith("--- reference.py\n+++ reference.py\n") and "-    return c + a\n+    return c - a\n" in m.diff


def test_a_second_mutation_at_the_same_place_gets_an_occurrence_suffix():
    class Twice(Operator):
        def mutation_positions(self, node):
            if node.type == "number":
                yield node.start_pos, node.end_pos
                yield node.start_pos, node.end_pos

        def mutate(self, node, index):
            node.value = str(7 + index)
            return node

        @classmethod
        def examples(cls):
            return ()

    made = generate("x = 1\n", operators=(Entry("twice", Twice()),)).mutants
    assert [(m.id, m.source) for m in made] == [("twice@1:5", "x = 7\n"), ("twice@1:5#1", "x = 8\n")]


def test_unparseable_identical_and_duplicate_mutants_are_dropped_with_a_reason():
    class Breaks(Operator):
        def mutation_positions(self, node):
            if node.type == "name" and node.value == "a":
                yield node.start_pos, node.end_pos

        def mutate(self, node, index):
            node.value = "a)"
            return node

        @classmethod
        def examples(cls):
            return ()

    broken = generate("y = a\n", operators=(Entry("breaks", Breaks()),))
    assert not broken.mutants and [(d.id, d.reason) for d in broken.dropped] == [("breaks@1:5", "does not parse")]
    # `if not ok` with add_not is `if not not ok`: the program drop_not made already.
    both = generate("def f(ok):\n    if not ok:\n        return 1\n    return 2\n",
                    operators=(ENTRIES["drop_not"], ENTRIES["add_not"]))
    assert [m.id for m in both.mutants] == ["drop_not@2:8"]
    assert [(d.id, d.reason) for d in both.dropped] == [("add_not@2:8", "the same program as drop_not@2:8")]
    # A different text for the same program as the reference: `1.0` + 1 and - 1 of `x = 1.0 - 1.0` ... is a change,
    # but swapping equal texts never is, so the same call makes nothing.
    assert not only("swap_arguments", "y = f(a, a)\n").mutants


def test_annotations_main_blocks_symmetric_calls_and_first_bindings_are_left_alone():
    source = """\
        def f(x: int = 1) -> list[int]:
            y = x.transpose(1, 2)
            y = y + 1
            return y

        def g(n):
            raise ValueError(f"n + 1 must be < {n + 1}")

        if __name__ == "__main__":
            print(f(3) - 1)
        """
    made = generate(textwrap.dedent(source)).mutants
    assert [m.id for m in made if m.line in (7, 9, 10)] == ["drop_statement@7:5"]  # the raise, not its message
    assert not [m for m in made if m.operator == "swap_arguments"]  # transpose(1, 2) is transpose(2, 1)
    dropped = {m.line for m in made if m.operator == "drop_statement"}
    assert dropped == {3, 7}  # y = x.transpose(...) binds y first: dropping it is a NameError, not a question
    assert {m.id for m in made if m.operator == "number_plus_one"} == {"number_plus_one@1:16", "number_plus_one@2:21",
                                                                       "number_plus_one@2:24", "number_plus_one@3:13"}


def test_a_keyword_only_star_is_no_multiplication():
    made = generate("def f(a, *, b=2):\n    return a * b\n", operators=(ENTRIES["mul_to_div"],)).mutants
    assert [m.id for m in made] == ["mul_to_div@2:14"]  # cosmic-ray alone also turns `*,` into `/,`


def test_sampling_is_stable_keeps_the_order_and_a_new_mutant_displaces_at_most_one():
    mutants = [Mutant(f"op@{n}:1", "op", n, 1, "", "", "") for n in range(1, 41)]
    chosen = sample(mutants, "ex", 10)
    assert len(chosen) == 10 and chosen == sample(mutants, "ex", 10)
    assert [m.line for m in chosen] == sorted(m.line for m in chosen)
    assert sample(mutants, "ex", None) == mutants and sample(mutants[:5], "ex", 10) == mutants[:5]
    grown = sample([*mutants, Mutant("op@99:1", "op", 99, 1, "", "", "")], "ex", 10)
    assert len({m.id for m in chosen} - {m.id for m in grown}) <= 1
    assert {m.id for m in sample(mutants, "other", 10)} != {m.id for m in chosen}  # per exercise
