"""code-runtime-native: the entry point of the Python child (docs/protocol.md#order-of-a-run,
docs/python.md#the-bootstrap).

Spawned as `python3 -u -I <staging>/bootstrap.py` with the protocol on fd 3 (a durable attempt's
as `python3 -u -s`, whose `PYTHONHASHSEED` `-I` would ignore). It restores SIGXCPU, imports its two
modules from its own directory (which isolated mode leaves off `sys.path`; without it, dropped
here), hides them from the program, and hands over to `runner.main()`.
"""

import os
import signal
import sys

# SIGXCPU is the CPU timeout: it must terminate this process, never be ignored or blocked.
signal.signal(signal.SIGXCPU, signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGXCPU})


def _load():
    here = os.path.dirname(os.path.abspath(__file__))
    wrote_bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # the staging directory is thrown away with the run
    sys.path.insert(0, here)
    try:
        import runner
    finally:
        del sys.path[0]
        sys.modules.pop("runner", None)
        sys.modules.pop("protocol", None)
        sys.dont_write_bytecode = wrote_bytecode
    if not sys.flags.isolated:
        sys.path[:] = [entry for entry in sys.path if entry != here]
    return runner.main


_load()()
