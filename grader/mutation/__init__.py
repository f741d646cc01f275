"""A mutation score for an exercise's checks: ``grader validate --mutation``.

The hand-written mutants in ``solutions/<name>/mutants/`` are the mistakes an author
thought of; generated ones (every operator swapped, constant nudged, statement dropped)
find the ones nobody thought of, and each survivor is either a missing check or a change
that makes no difference, which the author records as such. One concept per module:

- :mod:`~grader.mutation.operators`: which mutations (cosmic-ray's operators, and ours);
- :mod:`~grader.mutation.generate`: the mutants of a source, with stable ids and diffs;
- :mod:`~grader.mutation.equivalents`: the survivors an author recorded as equivalent;
- :mod:`~grader.mutation.score`: grading, classifying, the score;
- :mod:`~grader.mutation.render` and :mod:`~grader.mutation.command`: what the command shows, and its exit status.

Needs the ``mutation`` extra (cosmic-ray); nothing else in the grader imports this package.
"""
