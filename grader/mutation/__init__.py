"""A mutation score for an exercise's checks: ``grader validate --mutation``.

Hand-written mutants are the mistakes an author thought of; generated ones find the others, and each
survivor is a missing check or a change that makes no difference, which the author records as such.
``operators``: which mutations; ``generate``: a source's mutants, with stable ids and diffs;
``equivalents``: survivors recorded as equivalent; ``score``: grading, classifying, the score;
``render`` and ``command``: what the command shows, and its exit status. Needs the ``mutation`` extra
(cosmic-ray); nothing else in the grader imports this package.
"""
