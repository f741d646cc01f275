"""Self-practice on a candidate's own machine: the catalog, workspaces, packs, history and timed mode.

Nothing here grades: ``grader.host.grading.grade`` does. This zone decides what a
candidate may see of an exercise (its public files), and remembers their attempts
in a SQLite file in their data directory.
"""
