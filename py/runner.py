"""code-runtime-native: the body of the Python child (docs/protocol.md#order-of-a-run,
docs/python.md#the-bootstrap).

`bootstrap.py` (the entry, `__main__`) imports this module and calls `main()`, which reads `boot`,
re-asserts the limits the host applied before exec, builds the namespaces, acknowledges, reads
`run`, runs the program as the body of `async def __dsh_main__()` and sends exactly one `done`.

`main()` only puts the run together; each job is a function of its own: the channel on fd 3
(`open_channel`), the limits (`apply_limits`, `cpu_check`), the log ledger and streams
(`log_streams`), the namespaces and the calls they make (`namespace_proxies`), the program's
wrapper (`wrap`), the settle and report path (`settlement`, with `cap_text`, `cap_message` and
`render_exception`), where a run was stopped (`report_stops`), a durable run's world
(`durable_world`), the loop's polling while a call is in flight (`poll_for_replies`).

Nothing here reads a global once a program may be running: every builtin, module and function a
piece of this file uses is bound when it is made (a default argument, or a local of the function
that made it), before the program runs, so rebinding builtins, `__main__` or this module's
globals reaches none of it (__test__/py/test_runner.py checks every function for global reads). The
module is also removed from `sys.modules`.
"""

import ast
import os

import protocol as P

# The share of the CPU limit a caught SIGXCPU must find used (the host's SIGXCPU_SHARE).
SIGXCPU_SHARE = 0.5
# Past a few of the kernel's ticks before its CPU limit, so the timer's signal comes first.
CPU_MARGIN = 0.02
# The suffix of a message cut to fit maxValueBytes: 15 bytes of JSON.
TRUNCATED = "\u2026 [truncated]"
# The `done` sent when nothing else could be.
FIXED_DONE = b'{"type":"done","error":{"kind":"exception","message":"<unrenderable>"}}\n'
# A spare that has waited this long (ms) for its run rehearses one (`rehearse`); one whose run
# comes sooner (runs back to back, or a child booted on its run's own path) goes straight to it.
REHEARSE_AFTER_MS = 5
# What the rehearsal wraps: the shapes a program's first steps take (an import, a call, a
# branch, an await, a structured value).
REHEARSAL = "import time\nx = [1, 2]\nif x:\n    print(len(x), 'a')\nreturn {'k': await tools.f(x)}"
# While a binding call is in flight the event loop polls before it sleeps (`poll_for_replies`),
# for at most this long (seconds); a poll that found nothing halves the next, down to none.
POLL_FOR_REPLY = 80e-6
MIN_POLL_FOR_REPLY = 5e-6


def durable_world(
    config, in_flight, calls_made, deliver_one,
    os=os, hasattr=hasattr, int=int, getattr=getattr, max=max, RuntimeError=RuntimeError, ValueError=ValueError,
):
    """A durable run's world (docs/durable.md#determinism): what every attempt of the run sees
    the same. Randomness (`random`, `os.urandom`, `secrets`, `uuid4`) is drawn from the journal's
    seed; the clocks (`time`, `datetime`, the event loop's) are virtual: they start at the
    journal's clock, move one millisecond each time an answer reaches the program and jump to a
    timer's due time when nothing else can happen; threads are refused. `in_flight()` says a
    call awaits its answer, `calls_made()` how many calls the program made, `deliver_one()`
    hands the program the next answer that arrived (false when none did). Returns the event
    loop's factory."""
    import _thread
    import asyncio
    import datetime as _datetime
    import math
    import random
    import threading
    import time

    seed = (config["seedHigh"] << 32) | config["seedLow"]
    clock_ns = int(config["clockMs"]) * 1_000_000
    replayed = config["replayedCalls"]
    elapsed = [0]  # virtual nanoseconds since the run began

    def wall():
        return (clock_ns + elapsed[0]) / 1e9

    # ---- randomness: the module's generator seeded, and one byte source for the rest ----------
    random.seed(seed)
    source = random.Random(seed ^ 0x2545F4914F6CDD1D)

    def urandom(size):
        size = size.__index__()
        if size < 0:
            raise ValueError("negative argument not allowed")
        return source.randbytes(size)

    os.urandom = urandom
    random._urandom = urandom  # SystemRandom, and so `secrets`
    if hasattr(os, "getrandom"):
        os.getrandom = lambda size, flags=0: urandom(size)

    # ---- clocks ---------------------------------------------------------------------------------
    real = (time.localtime, time.gmtime, time.ctime, time.asctime, time.strftime)
    time.time = wall
    time.time_ns = lambda: clock_ns + elapsed[0]
    time.monotonic = time.perf_counter = lambda: elapsed[0] / 1e9
    time.monotonic_ns = time.perf_counter_ns = lambda: elapsed[0]
    time.localtime = lambda secs=None: real[0](wall() if secs is None else secs)
    time.gmtime = lambda secs=None: real[1](wall() if secs is None else secs)
    time.ctime = lambda secs=None: real[2](wall() if secs is None else secs)
    time.asctime = lambda t=None: real[3](real[0](wall()) if t is None else t)
    time.strftime = lambda format, t=None: real[4](format, real[0](wall()) if t is None else t)

    class date(_datetime.date):
        __slots__ = ()

        @classmethod
        def today(cls):
            return cls.fromtimestamp(wall())

    class datetime(_datetime.datetime, date):
        __slots__ = ()

        @classmethod
        def now(cls, tz=None):
            return cls.fromtimestamp(wall(), tz)

        @classmethod
        def utcnow(cls):
            return cls.utcfromtimestamp(wall())

        @classmethod
        def today(cls):
            return cls.fromtimestamp(wall())

    for cls, name in ((date, "date"), (datetime, "datetime")):
        cls.__name__ = cls.__qualname__ = name
        cls.__module__ = "datetime"
    _datetime.date, _datetime.datetime = date, datetime

    # ---- threads: how they interleave has no order a later attempt could replay ---------------
    def refuse(*args, **kwargs):
        raise RuntimeError(
            "threads are not available in a durable run (runDurable): how they interleave could not "
            "be replayed; use asyncio tasks"
        )

    threading.Thread.start = refuse
    _thread.start_new_thread = _thread.start_new = refuse

    # ---- the event loop: virtual time, one answer per idle point --------------------------------
    class Selector:
        """The loop's selector, waiting as virtual time says: while a call is in flight only its
        answer moves the run on; with none, the next timer's time comes (after its real delay on a
        first attempt, at once while replaying)."""

        def __init__(self, real_selector):
            self._real = real_selector

        def __getattr__(self, name):
            return getattr(self._real, name)

        def select(self, timeout=None):
            if timeout is not None and timeout <= 0:
                return self._real.select(0)
            if deliver_one():
                elapsed[0] += 1_000_000
                return self._real.select(0)
            if in_flight() or timeout is None:
                return self._real.select(None)
            if calls_made() >= replayed:
                events = self._real.select(timeout)
                if events:
                    return events
            elapsed[0] += max(1, math.ceil(timeout * 1e9))
            return []

    base = asyncio.SelectorEventLoop

    class Loop(base):
        def __init__(self):
            base.__init__(self)
            self._selector = Selector(self._selector)

        def time(self):
            return elapsed[0] / 1e9

    return Loop


def open_channel(
    P, threading,
    _write=os.write, _read=os.read, bytearray=bytearray, bytes=bytes, memoryview=memoryview, type=type,
    list=list, len=len, BaseException=BaseException, OSError=OSError, BlockingIOError=BlockingIOError,
    InterruptedError=InterruptedError,
):
    """fd 3, the run's channel: one residual buffer shared by the blocking and the asynchronous
    reader. Returns `send_bytes(data, absorbing=False)`, `send(frame)`, `read_frame_blocking()`,
    `send_now(data)` (a signal handler's one frame, never waiting), `reply_reader(handle_line)`,
    which makes the reply pump over `handle_line(bytes)`: `(attach(loop), detach(loop),
    drain_replies())`, and `quiet(ms)`, whether no frame arrives within `ms`."""
    import select
    import socket

    FD = P.PROTOCOL_FD
    encode, decode = P.encode, P.decode
    state = {"buf": bytearray(), "pos": 0}
    # fd 3 is a socket: a call frame is written without blocking, taking in the host's replies
    # whenever the socket is full, and every read after boot is non-blocking, so a reader that
    # finds the replies already taken never stalls. (Not a socket: plain blocking I/O.)
    try:
        chan = socket.socket(fileno=FD)
    except OSError:
        chan = None
    DONTWAIT, POLLIN, POLLOUT, poll = socket.MSG_DONTWAIT, select.POLLIN, select.POLLOUT, select.poll
    # Held while reading fd 3 into the buffer and while taking lines out of it.
    read_lock = threading.Lock()
    read_eof = [False]
    # (loop, selector key) of the reply pump once registered. Replies are read outside the pump
    # only while it is still registered: a program that removed it has stopped reading them.
    pump = [None]

    def pump_registered():
        entry = pump[0]
        if entry is None or chan is None:
            return False
        try:
            return entry[0]._selector.get_map().get(FD) is entry[1]
        except BaseException:
            return False

    # Frames are written whole under one lock. It is re-entrant so that a signal handler which
    # logs while this thread is mid-frame cannot deadlock; its frame waits for the current one.
    write_lock = threading.RLock()
    writing = [False]
    deferred = []

    def absorb_locked():
        """Moves what the host has already sent into the buffer; never blocks. True at EOF."""
        while not read_eof[0]:
            try:
                chunk = chan.recv(65536, DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return False
            except OSError:
                chunk = b""
            if not chunk:
                read_eof[0] = True
                break
            state["buf"] += chunk
        return True

    def write_piece(data, absorbing):
        view = memoryview(data)
        while view:
            if not absorbing or not pump_registered():
                view = view[_write(FD, view):]
                continue
            try:
                view = view[chan.send(view, DONTWAIT):]
            except (BlockingIOError, InterruptedError):
                # The host is not reading now: keep taking in its replies while waiting for room,
                # so that neither side's queue grows because the other is writing.
                waiter = poll()
                waiter.register(FD, POLLOUT if read_eof[0] else POLLIN | POLLOUT)
                waiter.poll()
                if read_lock.acquire(False):
                    try:
                        absorb_locked()
                    finally:
                        read_lock.release()

    def write_frame(item, absorbing):
        if type(item) is not list:
            return write_piece(item, absorbing)
        batch, size = [], 0  # str pieces, written in writes of about 64 KiB
        for piece in item:
            data = piece.encode("utf-8")
            batch.append(data)
            size += len(data)
            if size >= 65536:
                write_piece(b"".join(batch), absorbing)
                batch, size = [], 0
        if batch:
            write_piece(b"".join(batch), absorbing)

    def send_bytes(data, absorbing=False):
        """Writes one frame: bytes, or a list of str pieces (a call frame absorbs replies)."""
        with write_lock:
            if writing[0]:
                deferred.append((data, False))
                return
            writing[0] = True
            try:
                queue = [(data, absorbing)]
                while queue:
                    write_frame(*queue.pop(0))
                    queue.extend(deferred)
                    deferred.clear()
            finally:
                writing[0] = False

    def send(frame):
        send_bytes((encode(frame) + "\n").encode("utf-8"))

    def send_now(data):
        """One frame from a signal handler: dropped rather than waited for, or cut into a frame
        this thread is in the middle of writing."""
        if write_lock.acquire(False):
            try:
                if not writing[0]:
                    chan.send(data, DONTWAIT) if chan is not None else _write(FD, data)
            finally:
                write_lock.release()

    def take_line():
        buf, pos = state["buf"], state["pos"]
        nl = buf.find(b"\n", pos)
        if nl < 0:
            if pos:
                del buf[:pos]
                state["pos"] = 0
            return None
        line = bytes(buf[pos:nl])
        state["pos"] = nl + 1
        if state["pos"] > 65536 and state["pos"] * 2 > len(buf):
            del buf[:state["pos"]]
            state["pos"] = 0
        return line

    def quiet(ms):
        """Whether no frame is buffered and fd 3 shows nothing (no bytes, no end) for `ms`."""
        if state["buf"].find(b"\n", state["pos"]) >= 0:
            return False
        waiter = poll()
        waiter.register(FD, POLLIN)
        return not waiter.poll(ms)

    def read_frame_blocking():
        """The next frame, or None at EOF (a partial line at EOF is dropped)."""
        while True:
            line = take_line()
            if line is not None:
                if line:
                    return decode(line.decode("utf-8"))
                continue
            chunk = _read(FD, 65536)
            if not chunk:
                return None
            state["buf"] += chunk

    def reply_reader(handle_line):
        def pump_lines():
            """Hands every complete line in the buffer to `handle_line` (read_lock held)."""
            while True:
                line = take_line()
                if line is None:
                    return
                handle_line(line)

        def on_readable(loop):
            """The reply pump."""
            with read_lock:
                if chan is None:
                    try:
                        chunk = _read(FD, 65536)
                    except OSError:
                        chunk = b""
                    if chunk:
                        state["buf"] += chunk
                    else:
                        read_eof[0] = True
                else:
                    absorb_locked()  # a drain may have taken the data already: then nothing is read
                pump_lines()
                if read_eof[0]:
                    loop.remove_reader(FD)

        def drain_replies():
            """After a call frame: completes the replies that have already arrived, so the host's
            reply queue does not grow while this program is busy making calls."""
            if not pump_registered() or not read_lock.acquire(False):
                return
            try:
                absorb_locked()
                pump_lines()
            finally:
                read_lock.release()

        def attach(loop):
            loop.add_reader(FD, on_readable, loop)
            try:
                pump[0] = (loop, loop._selector.get_key(FD))
            except BaseException:
                pass  # not a selector loop: replies are read by the pump alone

        def detach(loop):
            try:
                loop.remove_reader(FD)
            except BaseException:
                pass

        return attach, detach, drain_replies

    return send_bytes, send, read_frame_blocking, send_now, reply_reader, quiet


def clamped(wanted, inherited, cpu, infinity, min=min):
    """A (soft, hard) limit: `wanted` within what was `inherited` (`infinity` is no limit); the
    CPU limit's soft stays a second below its hard, so SIGXCPU comes before SIGKILL."""
    def ceil(v, limit):
        return v if limit == infinity else min(v, limit)

    hard = ceil(wanted[1], inherited[1])
    soft = min(ceil(wanted[0], inherited[0]), hard)
    if cpu and soft == hard and hard != infinity and hard >= 2:
        soft = hard - 1
    return soft, hard


def apply_limits(boot, resource, platform, int=int, RuntimeError=RuntimeError, clamped=clamped):
    """The boot frame's limits (docs/budgets-and-ledger.md#resource-limits): already applied by
    the host before exec; re-asserting them is idempotent, and the budgets' re-check needs the
    effective soft RLIMIT_AS. Returns the CPU limit in force (its soft)."""
    INF = resource.RLIM_INFINITY
    cpu, space = int(boot["cpuSeconds"]), int(boot["addressSpaceBytes"])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_CPU, clamped((cpu, cpu + 1), resource.getrlimit(resource.RLIMIT_CPU), True, INF))
    cpu_soft = resource.getrlimit(resource.RLIMIT_CPU)[0]
    if platform == "darwin":
        return cpu_soft
    resource.setrlimit(resource.RLIMIT_AS, clamped((space, space), resource.getrlimit(resource.RLIMIT_AS), False, INF))
    soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    if soft == INF:
        return cpu_soft
    for key in ("maxLogBytes", "maxValueBytes"):
        if boot[key] * 12 >= soft - 67108864:
            raise RuntimeError(
                f"config.{key} is too large for the inherited RLIMIT_AS of {soft} bytes (a near-budget "
                "output would breach it during encode); lower the budget or raise the inherited "
                "address-space limit"
            )
    return cpu_soft


def cpu_check(cpu_soft, resource, signal, _kill=os.kill, _getpid=os.getpid, _exit=os._exit, share=SIGXCPU_SHARE):
    """`cpu_post_check()`: a program that trapped SIGXCPU, or burned CPU in reaped children, still
    times out. The limit is the one in force at boot (`cpu_soft`): each caught SIGXCPU makes Linux
    raise the soft limit by a second, so re-reading it would forgive exactly the programs this
    check is for. Only real use counts (a program that lowered or raised its own limit has not
    spent the budget): the budget is spent when the use reached it, or when the kernel raised the
    limit after a SIGXCPU and the use is past `share` of it (the kernel's limit clock counts whole
    ticks and under load runs well ahead of getrusage). The host checks the same from the
    kernel's own figures once the child has exited."""
    INF = resource.RLIM_INFINITY
    getrusage, getrlimit, SELF, CHILDREN, RLIMIT_CPU = (
        resource.getrusage, resource.getrlimit, resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN, resource.RLIMIT_CPU,
    )
    set_handler, unblock, SIGXCPU, SIG_DFL, SIG_UNBLOCK = (
        signal.signal, signal.pthread_sigmask, signal.SIGXCPU, signal.SIG_DFL, signal.SIG_UNBLOCK,
    )

    def cpu_post_check():
        if cpu_soft == INF:
            return
        me, kids = getrusage(SELF), getrusage(CHILDREN)
        used = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
        raised = getrlimit(RLIMIT_CPU)[0] > cpu_soft
        if used >= cpu_soft or (raised and used >= cpu_soft * share):
            set_handler(SIGXCPU, SIG_DFL)
            unblock(SIG_UNBLOCK, {SIGXCPU})
            _kill(_getpid(), SIGXCPU)
            _exit(1)

    return cpu_post_check


def log_streams(
    P, send, threading, io, builtins, sys,
    isinstance=isinstance, type=type, str=str, len=len, TypeError=TypeError,
):
    """The run's logs: one LogBuffer (the ledger of both streams, its lock re-entrant), the
    line-coalescing stream class for `sys.stdout` and `sys.stderr`, and the `print` the program
    gets. Returns `(log, LogStream, atomic_print)`. Made before the boot frame says the budget
    (the classes take a spare's wait, not the run's), so `log.budget(maxLogBytes)` opens the
    ledger: until then it admits nothing."""
    string_cost = P.string_cost

    class LogBuffer:
        """One ledger for both streams. Its lock is re-entrant, and a call that re-enters on the
        same thread (a signal handler printing mid-write) is queued and run right after the
        interrupted one, so neither deadlocks nor loses or splits text."""

        def __init__(self):
            self.lock = threading.RLock()
            self.max_log_bytes = 0
            self.remaining = -1
            self.parts = []
            self.pending = 0
            self.opened = False  # the current line already has an admitted open fragment
            self.stopped = False  # the marker was sent
            self.closed = False  # the run settled
            self.busy = False
            self.nested = []

        def _serialized(self, op, arg):
            with self.lock:
                if self.busy:
                    self.nested.append((op, arg))
                    return
                self.busy = True
                try:
                    op(arg)
                    while self.nested:
                        nested_op, nested_arg = self.nested.pop(0)
                        nested_op(nested_arg)
                finally:
                    self.busy = False

        def write(self, s):
            self._serialized(self._write, s)

        def flush_line(self):
            self._serialized(self._flush_line, None)

        def settle(self):
            """Commits an unterminated tail and closes: nothing is logged after `done`."""
            self._serialized(self._settle, None)

        def _write(self, s):
            # Every character of a line costs at least one byte, so a line longer than what is
            # left cannot fit: it ends the log without being copied (no slice of a huge write).
            with self.lock:
                if self.stopped or self.closed or not s:
                    return
                start = 0
                while True:
                    nl = s.find("\n", start)
                    if nl < 0:
                        break
                    if self.pending + (nl - start) > self.remaining:
                        return self.overflow()
                    piece = s[start:nl]
                    if self.parts:
                        self.parts.append(piece)
                        piece = "".join(self.parts)
                        self.parts, self.pending = [], 0
                    self.push(piece, False)
                    start = nl + 1
                    if self.stopped:
                        return  # the ledger is exhausted: stop scanning
                if start == len(s):
                    return
                if self.pending + (len(s) - start) > self.remaining:
                    # A newline-free flood past the budget: its pending line cannot fit.
                    return self.overflow()
                rest = s[start:] if start else s
                self.parts.append(rest)
                self.pending += len(rest)
                if len(self.parts) > 64:
                    self.parts = ["".join(self.parts)]

        def budget(self, max_log_bytes):
            """The run's maxLogBytes, from its boot frame."""
            self.max_log_bytes = max_log_bytes
            self.remaining = max_log_bytes - 1

        def overflow(self):
            """An entry did not fit: the one marker, then nothing more."""
            with self.lock:
                if self.stopped or self.closed:
                    return
                self.stopped = True
                self.parts, self.pending = [], 0
                send({"type": "log", "text": P.log_truncation_marker(self.max_log_bytes), "truncated": True})

        def _flush_line(self, _):
            with self.lock:
                if self.parts and not self.stopped and not self.closed:
                    text = "".join(self.parts)
                    self.parts, self.pending = [], 0
                    self.push(text, True)

        def push(self, text, open_):
            with self.lock:
                if self.stopped or self.closed:
                    return
                text = P.replace_lone_surrogates(text)
                if self.opened:
                    fits = len(text) <= self.remaining and (cost := string_cost(text) - 2) <= self.remaining
                else:
                    fits = len(text) + 3 <= self.remaining and (cost := string_cost(text) + 1) <= self.remaining
                if not fits:
                    return self.overflow()
                self.remaining -= cost
                self.opened = open_
                send({"type": "log", "text": text, "open": True} if open_ else {"type": "log", "text": text})

        def _settle(self, _):
            with self.lock:
                if self.parts and not self.stopped and not self.closed:
                    text = "".join(self.parts)
                    self.parts, self.pending = [], 0
                    self.push(text, False)
                self.closed = True

    class LogStream(io.TextIOBase):
        def __init__(self, name):
            self._name = name

        @property
        def name(self):
            return self._name

        @property
        def encoding(self):
            return "utf-8"

        @property
        def errors(self):
            return "strict"

        def writable(self):
            return True

        def isatty(self):
            return False

        def write(self, s):
            if not isinstance(s, str):
                raise TypeError(f"write() argument must be str, not {type(s).__name__}")
            log.write(s)
            return len(s)

        def flush(self):
            log.flush_line()

    log = LogBuffer()

    # print() writes its arguments, separators and end as separate write() calls, so a daemon
    # thread mid-print when the body returns would leave half a line for settlement to commit.
    # Onto a LogStream it formats first and writes once: a print is one atomic entry, as
    # console.log is in the isolate backend. Any other target keeps the builtin untouched.
    builtin_print = builtins.print

    def atomic_print(*args, sep=None, end=None, file=None, flush=False):
        target = sys.stdout if file is None else file
        if type(target) is not LogStream:
            return builtin_print(*args, sep=sep, end=end, file=file, flush=flush)
        if sep is not None and not isinstance(sep, str):
            raise TypeError(f"sep must be None or a string, not {type(sep).__name__}")
        if end is not None and not isinstance(end, str):
            raise TypeError(f"end must be None or a string, not {type(end).__name__}")
        text = (" " if sep is None else sep).join([str(arg) for arg in args])
        target.write(text + ("\n" if end is None else end))
        if flush:
            target.flush()

    atomic_print.__name__ = atomic_print.__qualname__ = "print"
    atomic_print.__module__ = "builtins"
    atomic_print.__doc__ = builtin_print.__doc__

    return log, LogStream, atomic_print


def namespace_proxies(
    P, namespaces, send_bytes, reply_reader, asyncio, threading, builtins,
    BaseException=BaseException, Exception=Exception, RuntimeError=RuntimeError, KeyError=KeyError,
    TypeError=TypeError, ValueError=ValueError, AttributeError=AttributeError, type=type, str=str,
    int=int, bool=bool, dict=dict, list=list, len=len, setattr=setattr,
):
    """The program's namespaces (the boot frame's `namespaces`): each a proxy whose members are
    the bindings, coroutines that send a `call` and await its `reply`, and each namespace's typed
    error class. Returns `(program_globals, calls)`: the globals the program starts with, and
    `calls`, `(attach(loop), detach(loop), hold_answers(), in_flight(), calls_made(),
    deliver_one())` — the reply pump on a loop, a durable run's answers held back until
    `deliver_one()` hands the program the next (docs/durable.md#determinism)."""
    encode_chunks, decode, quote, lossless_reason = P.encode_chunks, P.decode, P.quote, P.lossless_reason
    running_loop = asyncio._get_running_loop
    pending = {}
    pending_lock = threading.Lock()
    next_id = [0]
    # A durable attempt's answers that arrived, waiting for the program to have nothing else to do.
    arrived = [None]

    def complete(future, ok, payload):
        if not future.done():
            future.set_result((ok, payload))

    def handle_line(line):
        """One line from the host after `run`: frames other than known replies are ignored."""
        try:
            frame = decode(line.decode("utf-8"))
        except BaseException:
            return
        if type(frame) is not dict or frame.get("type") != "reply":
            return
        with pending_lock:
            entry = pending.pop(frame.get("id"), None) if type(frame.get("id")) is int else None
        if entry is None:
            return
        owner, future = entry
        ok = bool(frame.get("ok"))
        payload = frame.get("value") if ok else frame.get("message")
        if arrived[0] is not None:
            arrived[0].append((future, ok, payload))
            return
        if owner is running_loop():
            # Read on the loop the call awaits on (its reply pump, or a drain after a call):
            # completed here, without a trip through the loop's self-pipe.
            complete(future, ok, payload)
            return
        try:
            owner.call_soon_threadsafe(complete, future, ok, payload)
        except RuntimeError:
            pass  # that loop has closed

    attach, detach, drain_replies = reply_reader(handle_line)

    def hold_answers():
        arrived[0] = []

    def deliver_one():
        if not arrived[0]:
            return False
        complete(*arrived[0].pop(0))
        return True

    def error_factory(spec):
        error_class = spec.get("errorClass")
        if error_class is None:
            return None, lambda member, message: RuntimeError(message)
        member_property = error_class["memberNameProperty"]

        def __init__(self, member, message):
            Exception.__init__(self, message)
            setattr(self, member_property, member)

        cls = type(error_class["name"], (Exception,), {
            "__init__": __init__, "__module__": "builtins", "__qualname__": error_class["name"],
        })
        return cls, cls

    def make_binding(global_name, name, make_error):
        async def binding(args, /):
            reason = lossless_reason(args)
            if reason is not None:
                raise make_error(name, f"binding arguments must be lossless JSON ({reason})")
            loop = asyncio.get_running_loop()
            with pending_lock:
                call_id = next_id[0]
                future = loop.create_future()
                pending[call_id] = (loop, future)
                try:
                    frame = ['{"type":"call","id":' + str(call_id) + ',"global":' + quote(global_name)
                             + ',"name":' + quote(name) + ',"args":']
                    frame += encode_chunks(args)
                    frame.append("}\n")
                    send_bytes(frame, True)
                except (TypeError, ValueError) as exc:
                    del pending[call_id]
                    raise make_error(name, f"binding arguments must be lossless JSON: {exc}") from None
                next_id[0] = call_id + 1
            drain_replies()
            ok, payload = await future
            if ok:
                return payload
            raise make_error(name, payload)

        binding.__qualname__ = f"{global_name}.{name}"
        binding.__name__ = name
        return binding

    def make_namespace(global_name, names, make_error):
        members = {name: make_binding(global_name, name, make_error) for name in names}

        def missing(key):
            return f"tool {key!r} is not declared in namespace {global_name!r}"

        class Namespace:
            __slots__ = ()

            def __getattribute__(self, attr):
                binding = members.get(attr)
                if binding is None:
                    raise AttributeError(missing(attr))
                return binding

            def __getitem__(self, key):
                binding = members.get(key) if type(key) is str else None
                if binding is None:
                    raise KeyError(missing(key))
                return binding

            def __dir__(self):
                return list(members)

            def __repr__(self):
                return f"<namespace {global_name}>"

        return Namespace()

    program_globals = {"__name__": "__main__", "__builtins__": builtins}
    for spec in namespaces:
        cls, make_error = error_factory(spec)
        program_globals[spec["global"]] = make_namespace(spec["global"], spec["names"], make_error)
        if cls is not None:
            program_globals[spec["errorClass"]["name"]] = cls
    calls = (attach, detach, hold_answers, lambda: len(pending) > 0, lambda: next_id[0], deliver_one)
    return program_globals, calls


def wrap(source, ast=ast, compile=compile, isinstance=isinstance, getattr=getattr, max=max):
    """The program as the body of `async def __dsh_main__()`, compiled (its `from __future__`
    imports stay first). Statements keep their own locations, so line numbers are the user's; the
    wrapper spans them."""
    tree = ast.parse(source, filename="<model>", mode="exec")
    futures = []
    body = tree.body
    while body and isinstance(body[0], ast.ImportFrom) and body[0].module == "__future__":
        futures.append(body.pop(0))
    fields = {"name": "__dsh_main__", "args": ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        "body": body or [ast.Pass()], "decorator_list": [], "returns": None, "type_comment": None}
    if "type_params" in ast.AsyncFunctionDef._fields:
        fields["type_params"] = []
    main_def = ast.AsyncFunctionDef(**fields)
    main_def.lineno, main_def.col_offset, main_def.end_col_offset = 1, 0, 0
    main_def.end_lineno = max([getattr(n, "end_lineno", None) or n.lineno for n in body] or [1])
    module = ast.fix_missing_locations(ast.Module(body=futures + [main_def], type_ignores=[]))
    return compile(module, "<model>", "exec", dont_inherit=True)


def cap_text(text, limit, string_cost, len=len, suffix=TRUNCATED):
    """`text` within `limit` (maxValueBytes) serialized bytes, else its longest prefix that fits
    with the suffix. Every character costs at least one byte, so only a budget-sized prefix is
    metered. `string_cost` is protocol.py's (a string's bytes of JSON, quotes included)."""
    if len(text) > limit:
        text = text[:limit + 1]
    if string_cost(text) - 2 <= limit:
        return text
    budget = limit - 15
    if budget < 0:
        return suffix
    lo, hi = 0, len(text)
    while lo < hi:  # the longest prefix within budget
        mid = (lo + hi + 1) // 2
        if string_cost(text[:mid]) - 2 <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + suffix


def cap_message(lines, chain_cut, limit, string_cost, sum=sum, cap_text=cap_text):
    """Joins lines lazily up to `limit` serialized bytes, then cuts with the suffix."""
    out = ["[code-runtime-native] exception chain truncated at 100 links\n"] if chain_cut else []
    used = sum(string_cost(x) - 2 for x in out)
    for line in lines:
        out.append(line)
        used += string_cost(line) - 2
        if used > limit + 2:  # the final newline (2 bytes escaped) is dropped below
            break
    text = "".join(out)
    if text.endswith("\n"):
        text = text[:-1]
    return cap_text(text, limit, string_cost)


def render_exception(
    exc, limit, string_cost, traceback,
    BaseException=BaseException, type=type, str=str, set=set, id=id, getattr=getattr, cap_message=cap_message,
):
    """The failure message of `exc`: its traceback with only the program's own frames (across the
    whole chain and every group member), the chain cut at 100 links, within `limit` bytes."""
    try:
        te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
        # Keep only the program's own frames, across the whole chain and every group member.
        seen, todo = set(), [te]
        while todo:
            node = todo.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            node.stack = traceback.StackSummary.from_list([f for f in node.stack if f.filename == "<model>"])
            todo.append(node.__cause__)
            todo.append(node.__context__)
            todo.extend(getattr(node, "exceptions", None) or ())
        # Cap the chain at 100 links, keeping the ones nearest the final exception. A link is
        # a rendered cause or context, or a member of an exception group: every path from the
        # final exception is cut after its 100th node.
        chain_cut, seen, todo = False, set(), [(te, 1)]
        while todo:
            node, links = todo.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if node.__cause__ is not None:
                nxt = [node.__cause__]
            elif node.__context__ is not None and not node.__suppress_context__:
                nxt = [node.__context__]
            else:
                nxt = []
            members = getattr(node, "exceptions", None)
            if members:
                nxt.extend(members)
            if links >= 100:
                if nxt:
                    node.__cause__ = node.__context__ = None
                    if members:
                        node.exceptions = []
                    chain_cut = True
                continue
            todo.extend((n, links + 1) for n in nxt)
        return cap_message(te.format(chain=True), chain_cut, limit, string_cost)
    except BaseException:
        try:
            try:
                name = type(exc).__name__
            except BaseException:
                name = None
            name = name[:200] if type(name) is str else "<unknown>"
            return f"{name}: <diagnostic rendering failed>"
        except BaseException:
            return "<diagnostic rendering failed>"


def settlement(
    P, max_value_bytes, send_bytes, log, cpu_post_check, traceback, sys,
    _write=os.write, _exit=os._exit, BaseException=BaseException, type=type, list=list, fixed=FIXED_DONE,
    cap_text=cap_text, render_exception=render_exception,
):
    """`finish(ok, payload)`: the settle and report path. Sends exactly one `done` (the value, or
    the failure's message, within maxValueBytes), then ends the process (the host tears the
    group down)."""
    encode, encode_chunks, string_cost, check_done_value = P.encode, P.encode_chunks, P.string_cost, P.check_done_value
    FD = P.PROTOCOL_FD

    def flush_all():
        for stream in (sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except BaseException:
                pass

    def finish(ok, payload):
        try:
            if ok:
                cpu_post_check()
                log.settle()
                flush_all()
                problem = check_done_value(payload, max_value_bytes)
                if problem is None:
                    data = ['{"type": "done", "value": '] + encode_chunks(payload) + ["}\n"]
                else:
                    # A reason can quote a type name of any length: the message is capped like any other.
                    message = cap_text(problem[1], max_value_bytes, string_cost)
                    data = encode({"type": "done", "error": {"kind": problem[0], "message": message}}) + "\n"
            else:
                log.settle()
                flush_all()
                message = render_exception(payload, max_value_bytes, string_cost, traceback)
                data = encode({"type": "done", "error": {"kind": "exception", "message": message}}) + "\n"
            with log.lock:
                send_bytes(data if type(data) is list else data.encode("utf-8"))
        except BaseException:
            try:
                _write(FD, fixed)
            except BaseException:
                pass
        _exit(0)

    return finish


def stop_location(frame, program_lines, quote, code_name="__dsh_main__", getattr=getattr, len=len):
    """The `stopped` frame (docs/tracing.md#where-a-run-stopped) for the innermost frame of the
    program's own code on `frame`'s stack, as bytes; None when no frame of the program's runs
    (awaiting a binding or a timer). Spelled here, not encoded: the encoder reaches builtins the
    program may have rebound."""
    while frame is not None and frame.f_code.co_filename != "<model>":
        frame = frame.f_back
    if frame is None:
        return None
    code, line, column = frame.f_code, frame.f_lineno, None
    positions = getattr(code, "co_positions", None)  # 3.11+: the instruction's own columns
    if positions is not None and frame.f_lasti >= 0:
        at, wanted = 0, frame.f_lasti // 2
        for pos in positions():
            if at == wanted:
                if pos[0] is not None and pos[2] is not None:
                    line, column = pos[0], pos[2]
                break
            at += 1
    text = program_lines[line - 1] if line is not None and 0 < line <= len(program_lines) else ""
    if column is None:  # the statement's first character
        column = len(text.encode("utf-8")) - len(text.lstrip().encode("utf-8"))
    # Columns count characters from 1; the compiler counts UTF-8 bytes from 0.
    column = len(text.encode("utf-8")[:column].decode("utf-8", "replace")) + 1
    out = '{"type":"stopped","line":%d,"column":%d' % (line or 1, column)
    if code.co_name != code_name:
        out += ',"functionName":' + quote(code.co_name)
    return (out + "}\n").encode("utf-8")


def report_stops(
    source, cpu_soft, P, send_now, signal, resource,
    _kill=os.kill, _getpid=os.getpid, _exit=os._exit, BaseException=BaseException,
    OverflowError=OverflowError, OSError=OSError, ValueError=ValueError, margin=CPU_MARGIN,
    stop_location=stop_location,
):
    """Where the program was stopped (docs/tracing.md#where-a-run-stopped). The host sends SIGTERM
    once it has decided the run's end (a deadline, an abort or dispose, a protocol breach); the
    CPU budget's end is a timer that fires `margin` before the kernel's SIGXCPU would. Each
    handler says where the program is in one `stopped` frame (never waiting for room on fd 3),
    and dies of the signal the end is (SIGTERM; SIGXCPU, as the kernel's limit kills)."""
    set_handler, SIGTERM, SIGXCPU, SIG_DFL = signal.signal, signal.SIGTERM, signal.SIGXCPU, signal.SIG_DFL
    unblock, SIG_UNBLOCK = signal.pthread_sigmask, signal.SIG_UNBLOCK
    program_lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    quote = P.quote

    def stopped_then_die(frame, signum):
        try:
            data = stop_location(frame, program_lines, quote)
            if data is not None:
                send_now(data)
        except BaseException:
            pass
        finally:
            set_handler(signum, SIG_DFL)
            unblock(SIG_UNBLOCK, {signum})
            _kill(_getpid(), signum)
            _exit(1)

    set_handler(SIGTERM, lambda signum, frame: stopped_then_die(frame, SIGTERM))
    if cpu_soft != resource.RLIM_INFINITY:
        me = resource.getrusage(resource.RUSAGE_SELF)
        left = cpu_soft - margin - (me.ru_utime + me.ru_stime)
        if left > 0:
            set_handler(signal.SIGPROF, lambda signum, frame: stopped_then_die(frame, SIGXCPU))
            try:
                signal.setitimer(signal.ITIMER_PROF, left)
            except (OverflowError, OSError, ValueError):
                pass  # a limit past what a timer can hold (cpuSeconds up to 2^53): the kernel's alone


def poll_for_replies(
    loop, in_flight, clock, getattr=getattr, max=max, longest=POLL_FOR_REPLY, shortest=MIN_POLL_FOR_REPLY,
):
    """Has `loop`'s waits poll for up to `longest` seconds before they sleep while a binding call
    is in flight (`in_flight()`): a host that answers at once is heard without the wake-up from
    the sleep, which on a virtual machine costs more than the call (docs/python.md#binding-calls).
    A poll that found nothing halves the next one; an answer that came within `longest` of the
    wait's start restores it. The polls are this process's CPU time, inside its limit."""
    real = loop._selector
    window = [longest]

    class Polling:
        __slots__ = ()

        def __getattr__(self, name):
            return getattr(real, name)

        def select(self, timeout=None):
            if (timeout is not None and timeout <= 0) or not in_flight():
                return real.select(timeout)
            start = clock()
            if window[0] >= shortest:
                until = start + window[0]
                while True:
                    events = real.select(0)
                    if events:
                        return events
                    if clock() >= until:
                        break
                window[0] /= 2
                if timeout is not None:
                    timeout = max(0, timeout - (clock() - start))
            events = real.select(timeout)
            if events and clock() - start < longest:
                window[0] = longest
            return events

    loop._selector = Polling()


def rehearse(loop_runner, wrap=wrap, program=REHEARSAL, Exception=Exception):
    """A run's first steps, once, by a spare waiting for its run: a program wrapped and compiled,
    and a turn of the event loop. The pages they write are then this process's
    own copies of the template's, which the run would otherwise fault in on its way to the
    program's first statement (docs/python.md#the-rehearsal). Only the runner's own code runs,
    and everything it makes is dropped. It only saves time: should any of it fail, the run goes on
    as it would have without."""
    try:
        wrap(program)
        if loop_runner is not None:
            async def turn():
                return None

            loop_runner.run(turn())
    except Exception:
        pass


def prime(rehearse=rehearse, P=P, hasattr=hasattr, Exception=Exception):
    """The template's own rehearsal, once, before it forks anything (docs/python.md#the-template):
    a program wrapped and compiled and an event loop's turn (`rehearse`, in a loop made and closed
    here), and the protocol's decoder and encoder on frames and values of a run's shape. What
    they write the first time (the type and method caches, the code they run quickened, the
    allocator's first blocks) is then written in the template, whose pages every child shares,
    instead of in each child's own copy. Only the runner's own code runs; what it makes is
    dropped, and its loop's epoll and wake-up pair closed."""
    import asyncio

    try:
        P.decode('{"type": "boot", "maxLogBytes": 1024, "maxValueBytes": 1024, "namespaces": []}')
        P.decode('{"type": "run", "program": "return 1"}')
        for value in ({"k": [1, 2.5, "x", None, True]}, 1, "x"):
            P.check_done_value(value, 1 << 20)
            P.encode_chunks(value)
        P.encode({"type": "done", "error": {"kind": "exception", "message": "m"}})
        P.encode({"type": "log", "text": "t"})
        if not hasattr(asyncio, "Runner"):
            return rehearse(None)
        loop_runner = asyncio.Runner()
        try:
            rehearse(loop_runner)
        finally:
            loop_runner.close()
    except Exception:
        pass


def main(
    P=P, BaseException=BaseException, RuntimeError=RuntimeError, isinstance=isinstance, type=type,
    len=len, dict=dict, hasattr=hasattr, exec=exec, _exit=os._exit,
    open_channel=open_channel, apply_limits=apply_limits, cpu_check=cpu_check, log_streams=log_streams,
    namespace_proxies=namespace_proxies, wrap=wrap, settlement=settlement, durable_world=durable_world,
    report_stops=report_stops, rehearse=rehearse, rehearse_after=REHEARSE_AFTER_MS,
    poll_for_replies=poll_for_replies,
):
    """One run, put together from the functions above, each made before the program runs."""
    import builtins
    import signal
    import sys
    from time import perf_counter as clock

    import asyncio
    import io
    import linecache
    import resource
    import threading
    import traceback

    send_bytes, send, read_frame_blocking, send_now, reply_reader, quiet = open_channel(P, threading)

    # This process waits for its run here (a spare): the event loop the program will run in
    # (asyncio.Runner, what asyncio.run uses, from Python 3.11) is made now, off the run's path.
    # Measured in the sandbox: a paced `return 1` 1.2 ms sooner (docs/python.md#program-wrapping).
    loop_runner = asyncio.Runner() if hasattr(asyncio, "Runner") else None
    if loop_runner is not None:
        loop_runner.get_loop()
    log, LogStream, atomic_print = log_streams(P, send, threading, io, builtins, sys)
    if quiet(rehearse_after):
        rehearse(loop_runner)

    # ---- boot ---------------------------------------------------------------------------------
    boot = read_frame_blocking()
    if not isinstance(boot, dict) or boot.get("type") != "boot":
        raise RuntimeError("bootstrap: expected boot frame on fd 3")
    max_log_bytes = boot["maxLogBytes"]
    max_value_bytes = boot["maxValueBytes"]
    try:
        cpu_soft = apply_limits(boot, resource, sys.platform)
    except BaseException as exc:
        reason = "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n")
        send({"type": "done", "error": {"kind": "exception", "message": "bootstrap: applying resource limits failed\n" + reason}})
        _exit(0)
    cpu_post_check = cpu_check(cpu_soft, resource, signal)
    log.budget(max_log_bytes)
    program_globals, calls = namespace_proxies(P, boot["namespaces"], send_bytes, reply_reader, asyncio, threading, builtins)
    attach, detach, hold_answers, in_flight, calls_made, deliver_one = calls
    send({"type": "boot-ack"})

    # ---- the run ------------------------------------------------------------------------------
    run = read_frame_blocking()
    if not isinstance(run, dict) or run.get("type") != "run":
        raise RuntimeError("bootstrap: expected run frame on fd 3")
    source = run["program"]
    finish = settlement(P, max_value_bytes, send_bytes, log, cpu_post_check, traceback, sys)
    # A durable attempt (docs/durable.md#determinism): answers that arrive wait, and reach the
    # program one at a time, when it has nothing else to do.
    durable = run.get("durable")
    loop_factory = None
    if durable is not None:
        hold_answers()
        try:
            loop_factory = durable_world(durable, in_flight, calls_made, deliver_one)
        except BaseException as exc:
            finish(False, exc)

    try:
        code = wrap(source)
    except BaseException as exc:
        finish(False, exc)

    linecache.cache["<model>"] = (len(source), None, source.splitlines(True), "<model>")
    sys.stdout = LogStream("<stdout>")
    sys.stderr = LogStream("<stderr>")
    builtins.print = atomic_print
    try:
        exec(code, program_globals)
    except BaseException as exc:
        finish(False, exc)
    program = program_globals["__dsh_main__"]

    async def runner():
        loop = asyncio.get_running_loop()
        attach(loop)
        if durable is None:
            poll_for_replies(loop, in_flight, clock)
        try:
            value = await program()
        except BaseException as exc:
            outcome = (False, exc)
        else:
            outcome = (True, value)
        detach(loop)
        finish(*outcome)

    report_stops(source, cpu_soft, P, send_now, signal, resource)
    try:
        if loop_factory is not None and hasattr(asyncio, "Runner"):
            asyncio.Runner(loop_factory=loop_factory).run(runner())
        elif loop_factory is not None:
            loop = loop_factory()
            asyncio.set_event_loop(loop)
            loop.run_until_complete(runner())
        elif loop_runner is None:
            asyncio.run(runner())
        else:
            loop_runner.run(runner())
    except BaseException as exc:
        finish(False, exc)
    finish(False, RuntimeError("bootstrap: the program's event loop ended before it settled"))
