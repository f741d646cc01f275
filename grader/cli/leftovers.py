"""Containers a dead grading left behind, removed when a command starts, and counted out loud.

Every grading already reaps before it opens its own sandbox, but silently and in
the judge. A crashed grader or a killed batch should not leave a panel wondering
what the stray containers are: the commands that use Docker call this first and
say how many they removed.
"""

from __future__ import annotations


def reap_leftovers(console) -> int:
    """Remove grader containers whose owning process on this host is gone; print one line when any were."""
    from grader.errors import InfraError
    from grader.backends import docker_backend, engine

    if not engine.engine_available():
        return 0  # the command itself reports a missing engine, in its own words
    try:
        client = engine.connect(timeout=10)
    except InfraError:
        return 0
    try:
        removed = docker_backend.reap(client)
    finally:
        client.close()
    if removed:
        console.print(f"note: removed {removed} sandbox container{'s' if removed != 1 else ''} left by "
                      "gradings that are gone (a crashed grader or a killed batch)", highlight=False)
    return removed
