"""Evidence a panel can stand behind: regrade a stored report, and archive a grading as a checked bundle.

A hiring decision may be challenged. ``regrade`` shows a score is reproducible
(same exercise content, seed and sandbox, same submission bytes); ``bundle``
packs what a reviewer needs with a ``SHA256SUMS`` file, so anyone can confirm
with coreutils alone that nothing was edited after the fact.
"""
