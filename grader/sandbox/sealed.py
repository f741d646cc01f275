"""What a forkserver the worker starts does last before it serves (``grader.sandbox.forkserver``). INSIDE the sandbox.

Imported after the server's preloads, before it forks a rank: the exercise's forbidden APIs
removed (from the plan the worker published, ``grader.sandbox.removal``) and no new program
(``grader.sandbox.no_exec``), so a process it forks, whoever asks for one, has both. A server
that cannot seal itself ends (its ranks then fail to start) rather than serve unsealed.
"""

import os

from grader.sandbox import no_exec, removal

try:
    removal.install_inherited()
    no_exec.install()
except BaseException:
    os._exit(70)
