"""The fast tier (``pytest -m fast``, ``scripts/test.sh --fast``): unit tests that start no container, worker or judge.

A module joins it by its name in :data:`FAST_MODULES` (its tests get the ``fast`` marker); its tests marked
``slow``, ``docker``, ``gpu`` or ``exclusive`` stay out. Asked for the fast tier alone, pytest does not even import the other modules (their
collection alone takes half a minute). Inside the tier a guard fails any test that starts a judge, a worker, the
warm server or a Docker client, so the tier stays what its name says.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

MARK = "fast"
#: The test modules of the fast tier.
FAST_MODULES = frozenset("""
test_accounting test_annotate test_answers test_architecture test_authoring_doc test_batch_exports test_batch_layout
test_batch_progress test_batch_runner test_contract_tables test_corpus test_counterexample test_decision test_derived
test_diagnosis test_doc_commands test_events test_expect test_fast_tier test_fixes test_gpu
test_gpu_scheduling test_history test_image test_items test_leftovers test_mutant_patch
test_mutation_generate test_mutation_score test_numbers test_oci_runtime test_options_vocabulary test_pack test_panel
test_progress test_protocol test_readme_exercises test_redact test_regrade_cli test_reports_render test_signing
test_stats test_strategies test_timed_mode test_tolerance test_trees test_unknown_exercise test_untrusted
test_untrusted_records test_validate_output test_workspace
""".split())
#: Markers that keep a test out of the fast tier even in a fast module.
NOT_FAST = ("slow", "docker", "gpu", "exclusive")
#: What a grader process it must not start has on its command line.
STARTS = {"grader.host.zygote": "the warm judge server", "grader.sandbox.worker": "a sandbox worker",
          "--grader-submission": "a judge", "-m grader": "the grader CLI in a process of its own"}


def fast_only(config) -> bool:
    """Whether this run asks for the fast tier alone (``-m fast``)."""
    return (config.option.markexpr or "").strip() == MARK


def in_the_tier(item) -> bool:
    return item.get_closest_marker(MARK) is not None and not any(item.get_closest_marker(m) for m in NOT_FAST)


def skip_module(path: Path, config) -> bool:
    """With ``-m fast``, a test module that does not join the tier is not imported at all."""
    return fast_only(config) and path.suffix == ".py" and path.name.startswith("test_") and path.stem not in FAST_MODULES


def mark(items) -> None:
    """The ``fast`` marker on every test of a module in :data:`FAST_MODULES`."""
    for item in items:
        if item.path.stem in FAST_MODULES:
            item.add_marker(MARK)


def deselect_the_rest(config, items) -> None:
    """With ``-m fast``: a fast module's slow, docker, gpu and exclusive tests are not run either."""
    mark(items)
    if not fast_only(config):
        return
    out = [item for item in items if not in_the_tier(item)]
    if out:
        config.hook.pytest_deselected(items=out)
        items[:] = [item for item in items if in_the_tier(item)]


class _Guarded(subprocess.Popen):
    def __init__(self, args, *rest, **kwargs):
        line = args if isinstance(args, str) else " ".join(map(str, args))
        for sign, what in STARTS.items():
            if sign in line:
                pytest.fail(f"a fast test started {what} ({line[:120]}): stand it in, or leave the fast tier",
                            pytrace=False)
        super().__init__(args, *rest, **kwargs)


def guard(item, monkeypatch) -> None:
    """In the tier: no judge, worker, warm server or grader process, and no container."""
    if not in_the_tier(item):
        return
    from docker.models.containers import ContainerCollection

    def no_container(*args, **kwargs):
        pytest.fail("a fast test started a container: stand the engine in, or leave the fast tier", pytrace=False)

    monkeypatch.setattr(subprocess, "Popen", _Guarded)
    monkeypatch.setattr(ContainerCollection, "create", no_container)
    monkeypatch.setattr(ContainerCollection, "run", no_container)
