"""code-runtime-native: the Python template (docs/python.md#the-template).

Started once per runtime as `python3 -u -I <staging>/template.py <library>` with its channel to
the host on fd 3 (a SOCK_SEQPACKET socket: one frame, and its descriptors, per message); the
library is its native half (crates/python-entry, shipped beside the sandbox helper: no V8, no
napi). It imports the bootstrap's modules and what a run imports, never runs a program, and then
serves in the library (`crn_template_serve`, src/python/template/serve.rs), which forks one child
per `fork` request. The child reads its plan, places the run's descriptors and takes the run's
layers there too (src/python/template/child.rs, the helper's own code), and only the run's
program process returns into Python, which then runs the bootstrap exactly as a spawned child
would. The library's loop reaps each child it forked and writes how it ended to that child's exit
pipe, whose read end the host holds.

Its frames are the `PythonTemplate` channel's in src/channel/table (docs/protocol.md#frames): a
`fork` request is an id and its descriptors (the plan pipe, then stdin, stdout, stderr, the run's
channel, the helper's report, and the lifeline when there are seven); only the forked child reads
the `plan` frame from the plan pipe, so nothing of a run's (its paths) is ever in this process,
whose memory every later run's copy starts from. `template-ready` says how much address space the
library's mappings take (the host adds it to each child's RLIMIT_AS); `forked` comes with the read
end of the child's exit pipe.
"""

import builtins
import ctypes
import json
import os
import signal
import socket
import sys
import types

CHANNEL = 3


def _load_runner():
    here = os.path.dirname(os.path.abspath(__file__))
    sys.dont_write_bytecode = True
    sys.path.insert(0, here)
    try:
        import runner
    finally:
        del sys.path[0]
        sys.modules.pop("runner", None)
        sys.modules.pop("protocol", None)
        sys.dont_write_bytecode = False
    return runner.main, runner.prime


class _SslOnFirstUse(types.ModuleType):
    """asyncio's `ssl` until something reads from it: then the real module, imported in that
    process, in its place. `ssl` starts OpenSSL (4.4 MiB more for the template to hold, and
    every fork copying its relocated pages) for runs that rarely use it; a run that does gets
    the real module on first touch, as a bare interpreter's `import ssl` would give it."""

    def __getattr__(self, name):
        real = importlib.import_module("ssl")
        for user in _SSL_USERS:
            if vars(user).get("ssl") is self:
                user.ssl = real
        # What sslproto computes from `ssl` when it is imported (3.11 on).
        sslproto = sys.modules["asyncio.sslproto"]
        if sys.version_info >= (3, 11) and not hasattr(sslproto, "SSLAgainErrors"):
            sslproto.SSLAgainErrors = (real.SSLWantReadError, real.SSLSyscallError)
        return getattr(real, name)


def _import_asyncio_without_ssl():
    """asyncio as a run uses it, with `ssl` to be imported on first use (`_SslOnFirstUse`)."""
    blocked = "ssl" not in sys.modules
    if blocked:
        sys.modules["ssl"] = None
    try:
        import asyncio.base_events
        import asyncio.selector_events
        import asyncio.sslproto
    finally:
        if blocked:
            del sys.modules["ssl"]
    users = (asyncio.base_events, asyncio.selector_events, asyncio.sslproto)
    if blocked:
        stand_in = _SslOnFirstUse("ssl")
        for user in users:
            if vars(user).get("ssl", stand_in) is None:
                user.ssl = stand_in
    return users


import importlib  # noqa: E402

_SSL_USERS = _import_asyncio_without_ssl()

# What a run imports first, imported once here so each fork has it.
import ast  # noqa: E402,F401
import asyncio  # noqa: E402,F401
import io  # noqa: E402,F401
import linecache  # noqa: E402,F401
import resource  # noqa: E402,F401
import select  # noqa: E402,F401
import threading  # noqa: E402,F401
import traceback  # noqa: E402,F401

MAIN, PRIME = _load_runner()
LIBRARY = ctypes.PyDLL(sys.argv[1], mode=os.RTLD_LAZY | os.RTLD_LOCAL)
AFTER_FORK = ctypes.pythonapi.PyOS_AfterFork_Child
SERVE = LIBRARY.crn_template_serve
SERVE.argtypes = [ctypes.c_int]
SERVE.restype = ctypes.c_int
PLAN = LIBRARY.crn_template_plan
PLAN.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
PLAN.restype = ctypes.c_int64
# How a program process ends whose plan Python cannot take (the library's `CRN_EXIT_NO_PLAN`).
NO_PLAN = ctypes.c_int.in_dll(LIBRARY, "CRN_EXIT_NO_PLAN").value


def _mapped_bytes(path):
    """The address space the library's mappings take (every forked child has them; ctypes
    never unloads it)."""
    real = os.path.realpath(path)
    total = 0
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and fields[5].strip() == real:
                start, end = fields[0].split("-")
                total += int(end, 16) - int(start, 16)
    return total


# With the region each forked child maps for its own allocations (the library's
# `CRN_CHILD_REGION_BYTES`): neither is the program's to use.
LIBRARY_BYTES = _mapped_bytes(sys.argv[1]) + ctypes.c_size_t.in_dll(LIBRARY, "CRN_CHILD_REGION_BYTES").value


def program(length):
    """The run's program process, which the library returned in: every layer holds and only
    fds 0-3 are open. The interpreter is made whole again (no Python ran since the fork), then
    what the library kept of the plan for it (`length` bytes of JSON: the environment and the
    bootstrap) makes it the bootstrap."""
    AFTER_FORK()
    buf = ctypes.create_string_buffer(length)
    if PLAN(buf, length) != length:
        os._exit(NO_PLAN)
    become_bootstrap(json.loads(buf.raw))
    MAIN()
    os._exit(0)


def become_bootstrap(plan):
    """What a spawned child would be: the plan's environment over what the interpreter started
    with (the host starts the template with none; a wrapper script may add its own, as it would
    for a spawned child), `__main__` and `argv` naming the run's own bootstrap, and nothing
    random shared with the template or another run."""
    os.environ.update(dict(plan["env"]))
    if "tempfile" in sys.modules:
        sys.modules["tempfile"].tempdir = None
    if "random" in sys.modules:
        sys.modules["random"].seed()
    main = types.ModuleType("__main__")
    main.__file__ = plan["bootstrap"]
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    sys.argv = [plan["bootstrap"]]
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGXCPU})


def serve():
    """Says it is ready, then serves in the library (`crn_template_serve`: a request, the fork,
    the child's plan, descriptors and layers, and the reaping, without a turn of the
    interpreter, whose objects are not touched again). It returns only in a run's program
    process, with the length of its plan."""
    chan = socket.socket(fileno=CHANNEL)
    chan.sendall(json.dumps({"type": "template-ready", "libraryBytes": LIBRARY_BYTES}).encode())
    chan.detach()
    length = SERVE(CHANNEL)
    if length < 0:
        os._exit(1)
    try:
        program(length)
    finally:
        os._exit(NO_PLAN)


# A run's first steps once here, so what they write first is the template's (`runner.prime`).
PRIME()
del PRIME

# Every object made so far is the template's for good: a child's collector never walks them, so
# their pages stay shared with the template instead of being copied into each run.
import gc  # noqa: E402

gc.freeze()
# The pages of the C heap that importing freed go back to the kernel: 2 MiB less for the
# template to hold (bench/python-start.mjs's idle figure), and a child that allocates there
# later gets a fresh page instead of a copy of a dead one. glibc's; other C libraries skip it.
_trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
if _trim is not None:
    _trim(0)
serve()
