"""code-runtime-native: the body of the Python child (docs/protocol.md#order-of-a-run,
docs/python.md#the-bootstrap).

`bootstrap.py` (the entry, `__main__`) imports this module and calls `main()`, which reads `boot`,
re-asserts the limits the host applied before exec, builds the namespaces, acknowledges, reads
`run`, runs the program as the body of `async def __dsh_main__()` and sends exactly one `done`.

Everything the settlement path uses is a local of `main()` (so a closure cell for the nested
functions) or a default argument, bound before the program runs: neither rebinding `__main__`
nor this module's globals can reach it. The module is also removed from `sys.modules`.
"""

import os

import protocol as P


def durable_world(config, in_flight, calls_made, deliver_one):
    """A durable run's world (docs/durable.md#determinism): what every attempt of the run sees
    the same. Randomness (`random`, `os.urandom`, `secrets`, `uuid4`) is drawn from the journal's
    seed; the clocks (`time`, `datetime`, the event loop's) are virtual: they start at the
    journal's clock, move one millisecond each time an answer reaches the program and jump to a
    timer's due time when nothing else can happen; threads are refused. `in_flight()` says a
    call awaits its answer, `calls_made()` how many calls the program made, `deliver_one()`
    hands the program the next answer that arrived (false when none did). Returns the event
    loop's factory and what each delivered answer calls."""
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

    class Loop(asyncio.SelectorEventLoop):
        def __init__(self):
            super().__init__()
            self._selector = Selector(self._selector)

        def time(self):
            return elapsed[0] / 1e9

    return Loop


def main(
    P=P, BaseException=BaseException, Exception=Exception, KeyError=KeyError, TypeError=TypeError,
    ValueError=ValueError, RuntimeError=RuntimeError, AttributeError=AttributeError,
    OSError=OSError, isinstance=isinstance, type=type, len=len, str=str, dict=dict, list=list,
    bool=bool, id=id, getattr=getattr,
    _write=os.write, _read=os.read, _exit=os._exit, _getpid=os.getpid, _kill=os.kill,
):
    # Everything used later is a local here (so a closure cell for the nested functions), builtins
    # included: the program may rebind builtins or any module global it can reach.
    import builtins
    import signal
    import sys

    memoryview, setattr, min, sum, set, int, bytes, exec, compile = (
        builtins.memoryview, builtins.setattr, builtins.min, builtins.sum, builtins.set,
        builtins.int, builtins.bytes, builtins.exec, builtins.compile,
    )

    import ast
    import asyncio
    import io
    import linecache
    import resource
    import threading
    import traceback

    FD = P.PROTOCOL_FD
    encode, encode_chunks, decode, quote = P.encode, P.encode_chunks, P.decode, P.quote
    string_cost = P.string_cost
    FIXED_DONE = b'{"type":"done","error":{"kind":"exception","message":"<unrenderable>"}}\n'
    TRUNCATED = "\u2026 [truncated]"  # 15 bytes

    # ---- the channel: one residual buffer shared by the blocking and the asynchronous reader --
    state = {"buf": bytearray(), "pos": 0}
    # fd 3 is a socket: a call frame is written without blocking, taking in the host's replies
    # whenever the socket is full, and every read after boot is non-blocking, so a reader that
    # finds the replies already taken never stalls. (Not a socket: plain blocking I/O.)
    import select
    import socket

    try:
        chan = socket.socket(fileno=FD)
    except OSError:
        chan = None
    DONTWAIT, POLLIN, POLLOUT, poll = socket.MSG_DONTWAIT, select.POLLIN, select.POLLOUT, select.poll
    BlockingIOError, InterruptedError = builtins.BlockingIOError, builtins.InterruptedError
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

    # ---- the program's wrapper, and its event loop made before `boot` -------------------------
    def wrap(source):
        """The program as the body of `async def __dsh_main__()`, compiled."""
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
        # Statements keep their own locations, so line numbers are the user's; the wrapper spans them.
        main_def.lineno, main_def.col_offset, main_def.end_col_offset = 1, 0, 0
        main_def.end_lineno = max([getattr(n, "end_lineno", None) or n.lineno for n in body] or [1])
        module = ast.fix_missing_locations(ast.Module(body=futures + [main_def], type_ignores=[]))
        return compile(module, "<model>", "exec", dont_inherit=True)

    # This process waits for its run here (a spare): the event loop the program will run in
    # (asyncio.Runner, what asyncio.run uses, from Python 3.11) is made now, off the run's path.
    # Measured in the sandbox: a paced `return 1` 1.2 ms sooner (docs/python.md#program-wrapping).
    loop_runner = asyncio.Runner() if hasattr(asyncio, "Runner") else None
    if loop_runner is not None:
        loop_runner.get_loop()

    boot = read_frame_blocking()
    if not isinstance(boot, dict) or boot.get("type") != "boot":
        raise RuntimeError("bootstrap: expected boot frame on fd 3")
    max_log_bytes = boot["maxLogBytes"]
    max_value_bytes = boot["maxValueBytes"]

    # ---- limits (docs/budgets-and-ledger.md#resource-limits): already applied by the host before
    # exec; re-asserting them is idempotent, and the budget re-check needs the effective soft
    # RLIMIT_AS ---------------------------------------------------------------------------------
    INF = resource.RLIM_INFINITY

    def clamped(wanted, inherited, cpu):
        def ceil(v, limit):
            return v if limit == INF else min(v, limit)

        hard = ceil(wanted[1], inherited[1])
        soft = min(ceil(wanted[0], inherited[0]), hard)
        if cpu and soft == hard and hard != INF and hard >= 2:
            soft = hard - 1
        return soft, hard

    def apply_limits():
        cpu, space = int(boot["cpuSeconds"]), int(boot["addressSpaceBytes"])
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_CPU, clamped((cpu, cpu + 1), resource.getrlimit(resource.RLIMIT_CPU), True))
        if sys.platform == "darwin":
            return
        resource.setrlimit(resource.RLIMIT_AS, clamped((space, space), resource.getrlimit(resource.RLIMIT_AS), False))
        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft == INF:
            return
        for key, budget in (("maxLogBytes", max_log_bytes), ("maxValueBytes", max_value_bytes)):
            if budget * 12 >= soft - 67108864:
                raise RuntimeError(
                    f"config.{key} is too large for the inherited RLIMIT_AS of {soft} bytes (a near-budget "
                    "output would breach it during encode); lower the budget or raise the inherited "
                    "address-space limit"
                )

    def cpu_post_check():
        """A program that trapped SIGXCPU, or burned CPU in reaped children, still times out.
        The limit is the one in force at boot: each caught SIGXCPU makes Linux raise the soft limit
        by a second, so re-reading it would forgive exactly the programs this check is for. Only
        real use counts (a program that lowered or raised its own limit has not spent the budget):
        the budget is spent when the use reached it, or when the kernel raised the limit after a
        SIGXCPU and the use is past half of it (the kernel's limit clock counts whole ticks and
        under load runs well ahead of getrusage). The host checks the same from the kernel's own
        figures once the child has exited."""
        soft = cpu_limit[0]
        if soft == INF:
            return
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        used = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
        raised = resource.getrlimit(resource.RLIMIT_CPU)[0] > soft
        if used >= soft or (raised and used >= soft * SIGXCPU_SHARE):
            signal.signal(signal.SIGXCPU, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGXCPU})
            _kill(_getpid(), signal.SIGXCPU)
            _exit(1)

    def exception_only(exc):
        return "".join(traceback.format_exception_only(type(exc), exc)).rstrip("\n")

    # The share of the limit a caught SIGXCPU must find used (the host's SIGXCPU_SHARE).
    SIGXCPU_SHARE = 0.5
    cpu_limit = [INF]
    try:
        apply_limits()
        cpu_limit[0] = resource.getrlimit(resource.RLIMIT_CPU)[0]
    except BaseException as exc:
        message = "bootstrap: applying resource limits failed\n" + exception_only(exc)
        send({"type": "done", "error": {"kind": "exception", "message": message}})
        _exit(0)

    # ---- logs: one LogBuffer, one re-entrant lock, two line-coalescing streams -----------------
    class LogBuffer:
        """One ledger for both streams. Its lock is re-entrant, and a call that re-enters on the
        same thread (a signal handler printing mid-write) is queued and run right after the
        interrupted one, so neither deadlocks nor loses or splits text."""

        def __init__(self):
            self.lock = threading.RLock()
            self.remaining = max_log_bytes - 1
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

        def overflow(self):
            """An entry did not fit: the one marker, then nothing more."""
            with self.lock:
                if self.stopped or self.closed:
                    return
                self.stopped = True
                self.parts, self.pending = [], 0
                send({"type": "log", "text": P.log_truncation_marker(max_log_bytes), "truncated": True})

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

    # ---- namespaces and typed errors ----------------------------------------------------------
    pending = {}
    pending_lock = threading.Lock()
    next_id = [0]

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
            reason = P.lossless_reason(args)
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
    for spec in boot["namespaces"]:
        cls, make_error = error_factory(spec)
        program_globals[spec["global"]] = make_namespace(spec["global"], spec["names"], make_error)
        if cls is not None:
            program_globals[spec["errorClass"]["name"]] = cls

    send({"type": "boot-ack"})

    run = read_frame_blocking()
    if not isinstance(run, dict) or run.get("type") != "run":
        raise RuntimeError("bootstrap: expected run frame on fd 3")
    source = run["program"]
    # A durable attempt (docs/durable.md#determinism): answers that arrived wait here, and reach
    # the program one at a time, when it has nothing else to do.
    durable = run.get("durable")
    arrived = [] if durable is not None else None

    # ---- completion ---------------------------------------------------------------------------
    def cap_message(lines, chain_cut):
        """Joins lines lazily up to maxValueBytes serialized bytes, then cuts with the suffix."""
        out = ["[code-runtime-native] exception chain truncated at 100 links\n"] if chain_cut else []
        used = sum(string_cost(x) - 2 for x in out)
        for line in lines:
            out.append(line)
            used += string_cost(line) - 2
            if used > max_value_bytes + 2:  # the final newline (2 bytes escaped) is dropped below
                break
        text = "".join(out)
        if text.endswith("\n"):
            text = text[:-1]
        return cap_text(text)

    def cap_text(text):
        """`text` within maxValueBytes serialized bytes, else its longest prefix that fits with the
        suffix. Every character costs at least one byte, so only a budget-sized prefix is metered."""
        if len(text) > max_value_bytes:
            text = text[:max_value_bytes + 1]
        if string_cost(text) - 2 <= max_value_bytes:
            return text
        budget = max_value_bytes - 15
        if budget < 0:
            return TRUNCATED
        lo, hi = 0, len(text)
        while lo < hi:  # the longest prefix within budget
            mid = (lo + hi + 1) // 2
            if string_cost(text[:mid]) - 2 <= budget:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo] + TRUNCATED

    def render_exception(exc):
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
            return cap_message(te.format(chain=True), chain_cut)
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

    def flush_all():
        for stream in (sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except BaseException:
                pass

    def finish(ok, payload, _send_bytes=send_bytes, _fixed=FIXED_DONE):
        """Sends exactly one `done`, then ends the process (the host tears the group down)."""
        try:
            if ok:
                cpu_post_check()
                log.settle()
                flush_all()
                problem = P.check_done_value(payload, max_value_bytes)
                if problem is None:
                    data = ['{"type": "done", "value": '] + encode_chunks(payload) + ["}\n"]
                else:
                    # A reason can quote a type name of any length: the message is capped like any other.
                    message = cap_text(problem[1])
                    data = encode({"type": "done", "error": {"kind": problem[0], "message": message}}) + "\n"
            else:
                log.settle()
                flush_all()
                message = render_exception(payload)
                data = encode({"type": "done", "error": {"kind": "exception", "message": message}}) + "\n"
            with log.lock:
                _send_bytes(data if type(data) is list else data.encode("utf-8"))
        except BaseException:
            try:
                _write(FD, _fixed)
            except BaseException:
                pass
        _exit(0)

    loop_factory = None
    if durable is not None:

        def deliver_one():
            if not arrived:
                return False
            complete(*arrived.pop(0))
            return True

        try:
            loop_factory = durable_world(durable, lambda: len(pending) > 0, lambda: next_id[0], deliver_one)
        except BaseException as exc:
            finish(False, exc)

    # ---- the program --------------------------------------------------------------------------
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
    main = program_globals["__dsh_main__"]

    def on_readable(loop):
        """The reply pump: frames other than known replies are ignored."""
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

    def pump_lines():
        """Completes the futures of the complete reply lines in the buffer (read_lock held)."""
        while True:
            line = take_line()
            if line is None:
                return
            try:
                frame = decode(line.decode("utf-8"))
            except BaseException:
                continue
            if type(frame) is not dict or frame.get("type") != "reply":
                continue
            with pending_lock:
                entry = pending.pop(frame.get("id"), None) if type(frame.get("id")) is int else None
            if entry is None:
                continue
            owner, future = entry
            ok = bool(frame.get("ok"))
            payload = frame.get("value") if ok else frame.get("message")
            if arrived is not None:
                arrived.append((future, ok, payload))
                continue
            try:
                owner.call_soon_threadsafe(complete, future, ok, payload)
            except RuntimeError:
                pass  # that loop has closed

    def complete(future, ok, payload):
        if not future.done():
            future.set_result((ok, payload))

    async def runner():
        loop = asyncio.get_running_loop()
        loop.add_reader(FD, on_readable, loop)
        try:
            pump[0] = (loop, loop._selector.get_key(FD))
        except BaseException:
            pass  # not a selector loop: replies are read by the pump alone
        try:
            value = await main()
        except BaseException as exc:
            outcome = (False, exc)
        else:
            outcome = (True, value)
        try:
            loop.remove_reader(FD)
        except BaseException:
            pass
        finish(*outcome)

    # ---- where the program was stopped (docs/tracing.md#where-a-run-stopped) -------------------
    # The host sends SIGTERM once it has decided the run's end (a deadline, an abort or dispose, a
    # protocol breach); the CPU budget's end is a timer that fires CPU_MARGIN before the kernel's
    # SIGXCPU would. Each handler reads the innermost frame of the program's own code on the
    # stack, says where it is in one `stopped` frame (never waiting for room on fd 3), and dies of
    # the signal the end is (SIGTERM; SIGXCPU, as the kernel's limit kills). Awaiting a binding or
    # a timer, no frame of the program's runs. Everything here is bound before the program runs.
    set_handler, SIGTERM, SIGXCPU, SIG_DFL = signal.signal, signal.SIGTERM, signal.SIGXCPU, signal.SIG_DFL
    unblock, SIG_UNBLOCK = signal.pthread_sigmask, signal.SIG_UNBLOCK
    program_lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")

    def stopped_frame(frame):
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
        # Spelled here, not encoded: the encoder reaches builtins the program may have rebound.
        out = '{"type":"stopped","line":%d,"column":%d' % (line or 1, column)
        if code.co_name != "__dsh_main__":
            out += ',"functionName":' + quote(code.co_name)
        return (out + "}\n").encode("utf-8")

    def stopped_then_die(frame, signum):
        try:
            data = stopped_frame(frame)
            if data is not None and write_lock.acquire(False):
                try:
                    if not writing[0]:  # mid-frame, the frame would be lost in it
                        chan.send(data, DONTWAIT) if chan is not None else _write(FD, data)
                finally:
                    write_lock.release()
        except BaseException:
            pass
        finally:
            set_handler(signum, SIG_DFL)
            unblock(SIG_UNBLOCK, {signum})
            _kill(_getpid(), signum)
            _exit(1)

    set_handler(SIGTERM, lambda signum, frame: stopped_then_die(frame, SIGTERM))
    # Past a few of the kernel's ticks before its limit, so the timer's signal comes first.
    CPU_MARGIN = 0.02
    if cpu_limit[0] != INF:
        me = resource.getrusage(resource.RUSAGE_SELF)
        left = cpu_limit[0] - CPU_MARGIN - (me.ru_utime + me.ru_stime)
        if left > 0:
            set_handler(signal.SIGPROF, lambda signum, frame: stopped_then_die(frame, SIGXCPU))
            try:
                signal.setitimer(signal.ITIMER_PROF, left)
            except (OverflowError, OSError, ValueError):
                pass  # a limit past what a timer can hold (cpuSeconds up to 2^53): the kernel's alone

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
