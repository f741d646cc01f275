"""What a panel learns from a grading after it is scored: the mistake it looks like, what to ask next.

It reads a finished report (``grader.reports.model``) and the exercise's files, nothing of how the
grading ran: ``records``, an exercise's ``mistakes.json`` (written by ``grader validate --record``);
``evidence``, what a lost check said, as a record keeps it and a grading matches it; ``diagnosis``, which
recorded mistake a grading's lost checks look like; ``interview``, the exercise's ``interview.toml`` and
which questions to suggest; ``annotate``, both for one report.
"""
