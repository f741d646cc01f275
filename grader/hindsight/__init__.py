"""What a panel learns from a grading after it is scored: the mistake it looks like, what to ask next.

It reads a finished report (``grader.reports.model``) and the exercise's files, and nothing
of how the grading ran:

- ``records``: an exercise's ``mistakes.json``, each mutant's signature (read per grading,
  written by ``grader validate --record``);
- ``diagnosis``: which recorded mistake a grading's lost checks look like;
- ``interview``: an exercise's ``interview.toml``, and which questions to suggest;
- ``annotate``: both, for one report, loaded once per grading or batch.
"""
