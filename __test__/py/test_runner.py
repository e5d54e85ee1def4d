"""Unit tests of py/runner.py's pure parts, and of the rule the whole file keeps: nothing in it
reads a global, so a program that rebinds builtins or the module's globals changes none of it.
Run by __test__/python-units.test.mjs (`python3 -m unittest discover -s __test__/py`)."""

import dis
import inspect
import os
import sys
import types
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "py"))

import protocol  # noqa: E402
import runner  # noqa: E402

INF = -1  # resource.RLIM_INFINITY on Linux is -1 as a Python int too


def global_reads(code, path):
    """(function, name) for each global a function's code, or a function nested in it, reads.
    Class bodies run once, when the class is made, and are not functions."""
    if code.co_flags & inspect.CO_OPTIMIZED:
        for ins in dis.get_instructions(code):
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL"):
                yield path, ins.argval
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from global_reads(const, f"{path}.{const.co_name}")


class NoGlobals(unittest.TestCase):
    def test_no_function_reads_a_global(self):
        functions = [(name, f) for name, f in vars(runner).items() if isinstance(f, types.FunctionType)]
        self.assertGreaterEqual(len(functions), 10)
        reads = [read for name, f in functions for read in global_reads(f.__code__, name)]
        self.assertEqual(reads, [])

    def test_the_check_sees_a_global_read(self):
        def reads_len(x):
            def inner():
                return len(x)

            return inner

        self.assertEqual(list(global_reads(reads_len.__code__, "f")), [("f.inner", "len")])


class Wrap(unittest.TestCase):
    def run_wrapped(self, source):
        import asyncio

        scope = {"__builtins__": __builtins__}
        exec(runner.wrap(source), scope)
        return asyncio.run(scope["__dsh_main__"]())

    def test_the_program_is_an_async_body(self):
        self.assertEqual(self.run_wrapped("import asyncio\nawait asyncio.sleep(0)\nreturn 41 + 1"), 42)

    def test_an_empty_program_returns_none(self):
        self.assertIsNone(self.run_wrapped(""))
        self.assertIsNone(self.run_wrapped("# a comment"))

    def test_lines_are_the_users(self):
        import traceback

        try:
            self.run_wrapped("x = 1\n\ny = x / 0\n")
        except ZeroDivisionError as exc:  # (assertRaises drops the traceback)
            frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<model>"]
        self.assertEqual([(f.lineno, f.name) for f in frames], [(3, "__dsh_main__")])

    def test_future_imports_stay_first(self):
        self.assertEqual(self.run_wrapped("from __future__ import annotations\ndef f(x: Undefined): return 1\nreturn f(0)"), 1)

    def test_a_syntax_error_names_the_users_line(self):
        with self.assertRaises(SyntaxError) as caught:
            runner.wrap("x = 1\nreturn (\n")
        self.assertEqual(caught.exception.filename, "<model>")
        self.assertEqual(caught.exception.lineno, 2)


class Clamped(unittest.TestCase):
    def test_within_what_was_inherited(self):
        self.assertEqual(runner.clamped((10, 10), (5, 8), False, INF), (5, 8))
        self.assertEqual(runner.clamped((10, 10), (INF, INF), False, INF), (10, 10))
        self.assertEqual(runner.clamped((3, 20), (INF, 8), False, INF), (3, 8))

    def test_the_cpu_limit_keeps_a_second_before_its_hard(self):
        self.assertEqual(runner.clamped((5, 6), (INF, INF), True, INF), (5, 6))
        self.assertEqual(runner.clamped((9, 9), (INF, INF), True, INF), (8, 9))
        # One second is all there is: no room below it.
        self.assertEqual(runner.clamped((1, 1), (INF, INF), True, INF), (1, 1))
        self.assertEqual(runner.clamped((9, 9), (INF, INF), False, INF), (9, 9))


class Caps(unittest.TestCase):
    cost = staticmethod(protocol.string_cost)

    def test_a_text_that_fits_is_kept(self):
        self.assertEqual(runner.cap_text("hello", 5, self.cost), "hello")

    def test_a_longer_text_is_cut_with_the_suffix_within_the_limit(self):
        out = runner.cap_text("x" * 100, 40, self.cost)
        self.assertEqual(out, "x" * 25 + runner.TRUNCATED)
        self.assertLessEqual(self.cost(out) - 2, 40)

    def test_escapes_count_as_their_json(self):
        out = runner.cap_text('"' * 30, 40, self.cost)  # two bytes each in JSON
        self.assertEqual(out, '"' * 12 + runner.TRUNCATED)
        self.assertLessEqual(self.cost(out) - 2, 40)

    def test_a_limit_below_the_suffix_is_the_suffix(self):
        self.assertEqual(runner.cap_text("x" * 100, 10, self.cost), runner.TRUNCATED)

    def test_a_message_says_its_chain_was_cut_and_drops_its_last_newline(self):
        self.assertEqual(runner.cap_message(["a\n", "b\n"], False, 100, self.cost), "a\nb")
        cut = runner.cap_message(["a\n"], True, 1000, self.cost)
        self.assertEqual(cut, "[code-runtime-native] exception chain truncated at 100 links\na")


class RenderException(unittest.TestCase):
    def raised(self, source):
        import traceback

        scope = {"__builtins__": __builtins__}
        try:
            exec(compile(source, "<model>", "exec"), scope)
        except BaseException as exc:
            return runner.render_exception(exc, 100_000, protocol.string_cost, traceback)
        self.fail("nothing was raised")

    def test_only_the_programs_frames(self):
        message = self.raised("import json\ndef f():\n    json.loads('{')\nf()\n")
        self.assertIn('File "<model>", line 4', message)
        self.assertIn('File "<model>", line 3, in f', message)
        self.assertNotIn("json/decoder.py", message)
        self.assertTrue(message.endswith("json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"))

    def test_a_chain_is_cut_at_a_hundred_links(self):
        source = "e = None\nfor i in range(150):\n    try:\n        raise ValueError(i) from e\n    except ValueError as x:\n        e = x\nraise e\n"
        message = self.raised(source)
        self.assertTrue(message.startswith("[code-runtime-native] exception chain truncated at 100 links\n"))
        self.assertIn("ValueError: 149", message)
        self.assertIn("ValueError: 50", message)
        self.assertNotIn("ValueError: 49\n", message)

    def test_an_exception_that_cannot_be_rendered_is_named(self):
        class Odd(Exception):
            def __str__(self):
                raise RuntimeError("no")

        import traceback

        message = runner.render_exception(Odd(), 1000, protocol.string_cost, traceback)
        self.assertIn("Odd", message)


class StopLocation(unittest.TestCase):
    def test_the_innermost_frame_of_the_program(self):
        # Where a signal handler would find it: in the call to `here()`, columns counted from 1.
        source = "def score(x):\n    return here()\n\nscore(1)\n"
        lines = source.split("\n")
        seen = []
        here = lambda: seen.append(runner.stop_location(sys._getframe(0), lines, protocol.quote))  # noqa: E731
        exec(compile(source, "<model>", "exec"), {"__builtins__": __builtins__, "here": here})
        self.assertEqual(seen, [b'{"type":"stopped","line":2,"column":12,"functionName":"score"}\n'])
        # At the program's top level (the wrapper's body) no function is named; a character of two
        # bytes before the call counts once.
        import asyncio

        seen.clear()
        lines[:] = ["\u00e9 = 1; here()"]
        scope = {"__builtins__": __builtins__, "here": here}
        exec(runner.wrap(lines[0]), scope)
        asyncio.run(scope["__dsh_main__"]())
        self.assertEqual(seen, [b'{"type":"stopped","line":1,"column":8}\n'])

    def test_no_frame_of_the_program(self):
        self.assertIsNone(runner.stop_location(sys._getframe(0), [], protocol.quote))


class LogBudget(unittest.TestCase):
    """The log streams are made before the boot frame says the budget (a spare makes them while it
    waits); the budget it says is the one they keep."""

    def test_the_boots_budget_is_the_ledgers(self):
        import builtins
        import io
        import threading

        sent = []
        log, LogStream, _ = runner.log_streams(protocol, sent.append, threading, io, builtins, sys)
        log.budget(24)
        stream = LogStream("<stdout>")
        stream.write("hello\n")
        stream.write("x" * 40 + "\n")
        stream.write("after\n")
        self.assertEqual(sent, [
            {"type": "log", "text": "hello"},
            {"type": "log", "text": protocol.log_truncation_marker(24), "truncated": True},
        ])


def in_child(check):
    """Runs `check()` in a forked child (it may take fd 3 and the event loop as a run would) and
    returns what it returned, or the exception it raised, as text."""
    import traceback

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        import warnings

        # What a check leaves open goes with the child.
        warnings.simplefilter("ignore", ResourceWarning)
        os.close(r)
        try:
            outcome = repr(check())
        except BaseException:
            outcome = "raised " + traceback.format_exc()
        os.write(w, outcome.encode())
        os._exit(0)
    os.close(w)
    chunks = []
    while chunk := os.read(r, 65536):
        chunks.append(chunk)
    os.close(r)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode()


def above_3(fd, fcntl):
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


def on_fd3():
    """A socket pair whose child end is fd 3, as a run's channel is; returns the host's end."""
    import fcntl
    import socket

    pair = socket.socketpair()
    # Both ends above fd 3 first: the pair itself may have been given fd 3.
    host, child = (socket.socket(fileno=above_3(end.detach(), fcntl)) for end in pair)
    os.dup2(child.fileno(), protocol.PROTOCOL_FD)
    child.close()
    return host


class PollForReplies(unittest.TestCase):
    """The loop's waits poll before they sleep only while a call is in flight, and adapt."""

    class Fake:
        """A selector whose `select(0)` finds events after `ready_after` polls and whose sleeping
        waits end after `sleeps` seconds with an event, and a clock that advances 10 µs a reading."""

        def __init__(self, ready_after=None):
            self.calls, self.ready_after, self.now, self.sleeps = [], ready_after, 0.0, 1e-3

        def select(self, timeout=None):
            self.calls.append(timeout)
            polls = sum(1 for t in self.calls if t == 0)
            if timeout != 0:
                self.now += self.sleeps
                return ["event"]
            return ["event"] if self.ready_after is not None and polls >= self.ready_after else []

        def clock(self):
            self.now += 10e-6
            return self.now

        def get_map(self):
            return {"fd": "key"}

    def polling(self, fake, in_flight=True):
        loop = types.SimpleNamespace(_selector=fake)
        runner.poll_for_replies(loop, lambda: in_flight, fake.clock)
        return loop._selector

    def test_without_a_call_in_flight_the_wait_is_the_selectors(self):
        fake = self.Fake()
        selector = self.polling(fake, in_flight=False)
        self.assertEqual(selector.select(1.5), ["event"])
        self.assertEqual(fake.calls, [1.5])
        # Everything else is the selector's own.
        self.assertEqual(selector.get_map(), {"fd": "key"})

    def test_a_reply_within_the_window_is_found_by_polling(self):
        fake = self.Fake(ready_after=3)
        self.assertEqual(self.polling(fake).select(None), ["event"])
        self.assertEqual(fake.calls, [0, 0, 0])

    def test_a_silent_window_halves_then_sleeps_and_a_prompt_reply_restores_it(self):
        fake = self.Fake()
        selector = self.polling(fake)
        self.assertEqual(selector.select(None), ["event"])
        polls = fake.calls.count(0)
        self.assertGreater(polls, 1)
        self.assertEqual(fake.calls[-1], None)
        # Halved, the next wait polls about half as long; a timeout is shortened by the polling.
        fake.calls.clear()
        selector.select(1.0)
        self.assertLess(fake.calls.count(0), polls)
        self.assertLess(fake.calls[-1], 1.0)
        # Down to no polling at all; an answer within the longest window restores it.
        for _ in range(6):
            selector.select(None)
        fake.calls.clear()
        fake.sleeps = 0
        selector.select(None)
        self.assertEqual(fake.calls, [None])
        fake.calls.clear()
        selector.select(None)
        self.assertGreater(fake.calls.count(0), 1)

    def test_a_wait_that_must_not_block_is_passed_through(self):
        fake = self.Fake()
        self.polling(fake).select(0)
        self.assertEqual(fake.calls, [0])


class Rehearsal(unittest.TestCase):
    def test_quiet_until_a_frame_or_the_end_arrives(self):
        def check():
            import threading

            host = on_fd3()
            # Kept whole: the channel's socket lives in its writers, and closes fd 3 with them.
            channel = runner.open_channel(protocol, threading)
            read_frame, quiet = channel[2], channel[5]
            seen = [quiet(5)]
            host.sendall(b'{"type":"boot"}\n')
            seen += [quiet(5), read_frame(), quiet(5)]
            host.sendall(b'{"type":')
            seen.append(quiet(5))
            host.close()
            seen.append(quiet(5))
            return seen

        self.assertEqual(in_child(check), repr([True, False, {"type": "boot"}, True, False, False]))

    def test_a_frame_already_buffered_is_not_quiet(self):
        def check():
            import threading

            host = on_fd3()
            channel = runner.open_channel(protocol, threading)
            read_frame, quiet = channel[2], channel[5]
            host.sendall(b'{"type":"boot"}\n{"type":"run"}\n')
            return [read_frame(), quiet(5), read_frame()]

        self.assertEqual(in_child(check), repr([{"type": "boot"}, False, {"type": "run"}]))

    def test_it_leaves_nothing_a_run_sees(self):
        def check():
            import asyncio
            import builtins
            import linecache
            import signal
            import threading

            loop_runner = asyncio.Runner() if hasattr(asyncio, "Runner") else None
            if loop_runner is not None:
                loop_runner.get_loop()

            def state():
                return (sys.stdout, sys.stderr, builtins.print, sorted(linecache.cache), signal.getsignal(signal.SIGINT),
                        threading.active_count(), asyncio._get_running_loop())

            before = state()
            runner.rehearse(loop_runner)
            runner.rehearse(None)
            after = state()

            async def seven():
                return len(asyncio.all_tasks())

            ran = loop_runner.run(seven()) if loop_runner is not None else asyncio.run(seven())
            return [after == before, ran]

        self.assertEqual(in_child(check), repr([True, 1]))


class Prime(unittest.TestCase):
    def test_the_template_keeps_nothing_of_it_but_what_it_wrote(self):
        """`prime` runs in the template, whose every child a run then is: it leaves no descriptor
        (its loop's epoll and wake-up pair closed), no thread, no event loop set or running, no
        signal handler or wake-up descriptor, no module or line cached, and stdout, stderr and
        print as they were."""

        def check():
            import asyncio
            import builtins
            import linecache
            import signal
            import threading

            def state():
                wakeup = signal.set_wakeup_fd(-1)
                signal.set_wakeup_fd(wakeup)
                policy_loop = getattr(asyncio.get_event_loop_policy()._local, "_loop", None)
                return (sorted(os.listdir("/proc/self/fd")), threading.active_count(), asyncio._get_running_loop(),
                        policy_loop, [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD)],
                        wakeup, sorted(sys.modules), sorted(linecache.cache), sys.stdout, sys.stderr, builtins.print)

            before = state()
            runner.prime()
            return state() == before or (before, state())

        self.assertEqual(in_child(check), "True")


if __name__ == "__main__":
    unittest.main()
