"""The fd-3 protocol between code-runtime-native's host and this child (docs/protocol.md,
docs/python.md#lossless-values).

JSON lines, one frame per line. This module declares the frames, spells numbers as ECMAScript does,
checks values for lossless JSON, meters them exactly as the host does, and encodes and decodes
iteratively (no recursion, so depth is limited only by memory).
"""

import math
import re
import sys as _sys
from typing import Any, List, Literal, TypedDict

PROTOCOL_FD = 3

# 2**53 - 1: beyond it an int must be exactly a double to cross as a JavaScript number.
MAX_SAFE = 9007199254740991


def log_truncation_marker(max_bytes):
    """The one entry that ends a truncated log, identical on both sides."""
    return f"[code-runtime-native] log capture truncated at {max_bytes} bytes"


# ---------------------------------------------------------------------------------------------
# Frames, as src/channel/table lists them (a test there reads these keys and annotations).
# `global` is a keyword, so those use the functional syntax.

class ErrorClass(TypedDict):
    name: str
    memberNameProperty: str


_NamespaceRequired = TypedDict("_NamespaceRequired", {"global": str, "names": List[str]})


class Namespace(_NamespaceRequired, total=False):
    errorClass: ErrorClass


class BootMessage(TypedDict):
    type: Literal["boot"]
    cpuSeconds: int
    addressSpaceBytes: int
    maxLogBytes: int
    maxValueBytes: int
    namespaces: List[Namespace]


class Durable(TypedDict):
    seedHigh: int
    seedLow: int
    clockMs: float
    replayedCalls: int


class _RunRequired(TypedDict):
    type: Literal["run"]
    program: str


class RunMessage(_RunRequired, total=False):
    durable: Durable


class BootAckMessage(TypedDict):
    type: Literal["boot-ack"]


CallMessage = TypedDict("CallMessage", {"type": Literal["call"], "id": int, "global": str, "name": str, "args": Any})


class _LogRequired(TypedDict):
    type: Literal["log"]
    text: str


class LogMessage(_LogRequired, total=False):
    truncated: Literal[True]
    open: Literal[True]


class DoneErrorField(TypedDict):
    kind: Literal["exception", "invalid-output", "output-limit"]
    message: str


class _DoneRequired(TypedDict):
    type: Literal["done"]


class DoneMessage(_DoneRequired, total=False):
    value: Any
    error: DoneErrorField


class _StoppedRequired(TypedDict):
    type: Literal["stopped"]
    line: int
    column: int


class StoppedMessage(_StoppedRequired, total=False):
    functionName: str


class ReplyOk(TypedDict):
    type: Literal["reply"]
    id: int
    ok: Literal[True]
    value: Any


class ReplyErr(TypedDict):
    type: Literal["reply"]
    id: int
    ok: Literal[False]
    message: str


FRAMES = (
    BootMessage, Namespace, ErrorClass, RunMessage, Durable, BootAckMessage, CallMessage, LogMessage,
    DoneErrorField, DoneMessage, StoppedMessage, ReplyOk, ReplyErr,
)


# ---------------------------------------------------------------------------------------------
# Strings. Python strings may hold surrogate code points; JavaScript sees a spelled-out pair as
# one astral character, so pairs are folded and only lone surrogates are escaped.

_SURROGATE = re.compile("[\ud800-\udfff]")
_NEEDS_ESCAPE = re.compile('[\x00-\x1f"\\\\\ud800-\udfff]')
_ASCII_ESCAPE = re.compile('[\x00-\x1f"\\\\]')
_SHORT = '"\\\b\f\n\r\t'
_ESCAPES = {i: "\\u%04x" % i for i in range(0x20)}
_ESCAPES.update({0x22: '\\"', 0x5C: "\\\\", 0x08: "\\b", 0x0C: "\\f", 0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"})
_ESCAPES.update({s: "\\u%04x" % s for s in range(0xD800, 0xE000)})


def fold_surrogates(s):
    """Combines spelled-out surrogate pairs into astral characters; lone surrogates stay."""
    if _SURROGATE.search(s) is None:
        return s
    return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def replace_lone_surrogates(s):
    """For log text: pairs folded, lone surrogates replaced with U+FFFD."""
    if _SURROGATE.search(s) is None:
        return s
    return _SURROGATE.sub("\ufffd", fold_surrogates(s))


def quote(s):
    """`JSON.stringify` of a (folded) string: raw UTF-8, lone surrogates as \\uXXXX."""
    if _NEEDS_ESCAPE.search(s) is None:
        return '"' + s + '"'
    return '"' + fold_surrogates(s).translate(_ESCAPES) + '"'


_COST_CHUNK = 1 << 20
_SHORT_BYTES = _SHORT.encode("ascii")
_ESCAPE_BYTES = bytes(range(0x20)) + b'"\\'
_LONE_BYTES = re.compile(b"\xed[\xa0-\xbf]")


def _long_string_cost(s):
    """string_cost for a long string, in bounded memory: one UTF-8 chunk at a time, counting
    escapes with bytes.translate (UTF-8 never puts an ASCII byte inside a multi-byte character,
    and surrogatepass spells each surrogate as ED A0..BF xx)."""
    if _SURROGATE.search(s) is not None:
        s = fold_surrogates(s)
    total = 2
    for i in range(0, len(s), _COST_CHUNK):
        b = s[i:i + _COST_CHUNK].encode("utf-8", "surrogatepass")
        n = len(b)
        escapes = n - len(b.translate(None, _ESCAPE_BYTES))
        short = n - len(b.translate(None, _SHORT_BYTES))
        total += n + short + 5 * (escapes - short)
        if b.find(b"\xed") >= 0:
            total += 3 * len(_LONE_BYTES.findall(b))
    return total


def string_cost(s):
    """Quoted JSON size in bytes (docs/budgets-and-ledger.md#metering): escapes 2 or 6, a lone
    surrogate 6, a folded pair 4, other characters their UTF-8 width."""
    if len(s) > _COST_CHUNK:
        return _long_string_cost(s)
    extra = 0
    if _ASCII_ESCAPE.search(s) is not None:
        for c in _ASCII_ESCAPE.findall(s):
            extra += 1 if c in _SHORT else 5
    if s.isascii():
        return len(s) + 2 + extra
    try:
        return len(s.encode("utf-8")) + 2 + extra
    except UnicodeEncodeError:
        folded = fold_surrogates(s)
        lone = len(_SURROGATE.findall(folded))
        return len(folded.encode("utf-8", "surrogatepass")) + 3 * lone + 2 + extra


# ---------------------------------------------------------------------------------------------
# Numbers, spelled as ECMAScript Number::toString, except that an integral value beyond 2**53 - 1
# is written as its exact integer digits.

def _ecma_float(x):
    r = repr(x)
    sign = ""
    if r[0] == "-":
        sign, r = "-", r[1:]
    mantissa, _, exp = r.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    e10 = (int(exp) if exp else 0) - len(frac)
    stripped = digits.rstrip("0")
    e10 += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = k + e10
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = (digits if k == 1 else digits[0] + "." + digits[1:]) + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + body


def number_text(x):
    """The wire spelling of a lossless int or float."""
    if type(x) is int:
        return str(x)
    if x == 0:
        return "0"
    if x.is_integer() and abs(x) > MAX_SAFE:
        return str(int(x))
    return _ecma_float(x)


def _int_problem(x):
    if -MAX_SAFE <= x <= MAX_SAFE:
        return None
    try:
        if int(float(x)) == x:
            return None
    except OverflowError:
        pass
    return "integer not exactly representable as a JavaScript number"


def _float_problem(x):
    if math.isinf(x) or math.isnan(x):
        return "non-finite float"
    if x == 0 and math.copysign(1.0, x) < 0:
        return "negative zero"
    return None


# ---------------------------------------------------------------------------------------------
# Lossless JSON (docs/python.md#lossless-values) and exact metering
# (docs/budgets-and-ledger.md#value-budget), in one iterative walk.

OVER_BUDGET = object()

# Wide lists of one scalar type that is lossless for every member (safe ints, finite non-zero
# floats, strings, None and bools) are checked, metered and encoded with C-level passes instead of
# one step per member; the results are exactly the member-by-member ones.
_FLAT_MIN = 8
_FLAT_SLICE = 65536
_NONE_TYPE = type(None)
_LITERAL_TEXT = {None: "null", True: "true", False: "false"}


def _flat_kind(v):
    """The member type of a list whose every member is a lossless scalar of that type (None and
    bool count as one kind), else None."""
    kinds = set(map(type, v))
    if len(kinds) == 1:
        kind = kinds.pop()
        if kind is int:
            return int if -MAX_SAFE <= min(v) and max(v) <= MAX_SAFE else None
        if kind is float:
            # No zero at all (so no -0.0), and no inf or nan.
            return float if v.count(0.0) == 0 and all(map(math.isfinite, v)) else None
        if kind is str:
            return str
    if kinds and kinds <= {_NONE_TYPE, bool}:
        return bool
    return None


def _flat_size(v, kind, room):
    """The members' total compact size; past `room` (when given), any size beyond it."""
    if kind is int:
        return sum(map(len, map(str, v)))
    if kind is float:
        return sum(map(len, map(number_text, v)))
    if kind is bool:
        return 4 * v.count(None) + 4 * v.count(True) + 5 * v.count(False)
    least = sum(map(len, v)) + 2 * len(v)  # every character costs at least one byte
    if room is not None and least > room:
        return least
    return sum(map(string_cost, v))


def _flat_pieces(v, kind):
    """The list's compact JSON, as pieces of at most _FLAT_SLICE members each."""
    spell = {int: str, float: number_text, str: quote, bool: _LITERAL_TEXT.__getitem__}[kind]
    pieces = ["["]
    for i in range(0, len(v), _FLAT_SLICE):
        if i:
            pieces.append(",")
        pieces.append(",".join(map(spell, v[i:i + _FLAT_SLICE])))
    pieces.append("]")
    return pieces


def _walk(value, budget, measure=True):
    """Returns (reason, size): a reason string for the first lossy member, OVER_BUDGET as soon as
    the size (or a container's or string's lower bound, before it is metered) passes `budget`,
    else (None, exact compact size). `budget` None means unbounded; `measure` False skips the
    size (it is then meaningless)."""
    size = 0
    path = set()
    # Each entry: (id of the container or None, iterator over its child values).
    stack = [(None, iter((value,)))]
    while stack:
        cid, it = stack[-1]
        v = next(it, stack)
        if v is stack:
            stack.pop()
            path.discard(cid)
            continue
        t = type(v)
        if v is None:
            size += 4
        elif t is bool:
            size += 4 if v else 5
        elif t is int:
            problem = _int_problem(v)
            if problem:
                return problem, size
            if measure:
                size += len(str(v))
        elif t is float:
            problem = _float_problem(v)
            if problem:
                return problem, size
            if measure:
                size += len(number_text(v))
        elif t is str:
            # Every character costs at least one byte: a string that cannot fit is not metered.
            if budget is not None and size + len(v) + 2 > budget:
                return OVER_BUDGET, size
            if measure:
                size += string_cost(v)
        elif t is list:
            if id(v) in path:
                return "circular reference", size
            n = len(v)
            # Brackets and commas; each element adds at least one more byte.
            if budget is not None and size + 2 + max(2 * n - 1, 0) > budget:
                return OVER_BUDGET, size
            size += 2 + max(n - 1, 0)
            flat = _flat_kind(v) if n >= _FLAT_MIN else None
            if flat is None:
                path.add(id(v))
                stack.append((id(v), iter(v)))
            elif measure:
                room = None if budget is None else budget - size
                size += _flat_size(v, flat, room)
        elif t is dict:
            if id(v) in path:
                return "circular reference", size
            n = len(v)
            # Each member is at least `"":0`.
            if budget is not None and size + 2 + max(5 * n - 1, 0) > budget:
                return OVER_BUDGET, size
            folded = set()
            keys_cost = 0
            for k in v:
                if type(k) is not str:
                    return f"non-string dict key ({type(k).__name__})", size
                f = fold_surrogates(k)
                folded.add(f)
                if measure:
                    keys_cost += string_cost(f) + 1
            if len(folded) != n:
                return "duplicate dict key after surrogate-pair combining", size
            size += 2 + max(n - 1, 0) + keys_cost
            path.add(id(v))
            stack.append((id(v), iter(list(v.values()))))
        else:
            return f"unsupported type ({t.__name__})", size
        if budget is not None and size > budget:
            return OVER_BUDGET, size
    return None, size


def lossless_reason(value):
    """None when `value` is lossless JSON, else the reason."""
    reason, _ = _walk(value, None, False)
    return reason


def check_done_value(value, max_value_bytes):
    """None when the completion fits, else (kind, message)."""
    reason, _ = _walk(value, max_value_bytes)
    if reason is OVER_BUDGET:
        return "output-limit", f"completion value exceeded {max_value_bytes} bytes"
    if reason is not None:
        # The caller caps the message to the budget; a longer reason (a type name can be any
        # length) would be cut anyway, so only a budget-sized prefix of it is copied.
        return "invalid-output", f"program completion must be lossless JSON ({reason[:max_value_bytes + 1]})"
    return None


def encoded_size(value):
    """Exact compact size of a lossless value."""
    reason, size = _walk(value, None)
    if reason is not None:
        raise ValueError(reason)
    return size


# ---------------------------------------------------------------------------------------------
# Encoding and decoding, iteratively.

_PIECES = 4096


def encode(value):
    """Compact JSON text (the encoder also accepts tuples; the validators reject them)."""
    return "".join(encode_chunks(value))


def encode_chunks(value):
    """`encode(value)` as a list of strings to write in order. Tokens are joined every few
    thousand, so a wide value is held as about one copy of its text, never as one object per
    token, and the caller need not join the pieces into a second copy."""
    chunks = []
    out = []
    add = out.append
    stack = []
    v = value
    while True:
        if len(out) >= _PIECES:
            chunks.append("".join(out))
            out.clear()
        t = type(v)
        if v is None:
            add("null")
        elif v is True:
            add("true")
        elif v is False:
            add("false")
        elif t is str:
            add(quote(v))
        elif t is int or t is float:
            problem = _int_problem(v) if t is int else _float_problem(v)
            if problem:
                raise ValueError(problem)
            add(number_text(v))
        elif t is list and len(v) >= _FLAT_MIN and (flat := _flat_kind(v)) is not None:
            chunks.append("".join(out))
            out.clear()
            chunks.extend(_flat_pieces(v, flat))
        elif t is list or t is tuple:
            add("[")
            stack.append([iter(v), False, 0])
        elif t is dict:
            add("{")
            stack.append([iter(v.items()), True, 0])
        else:
            raise TypeError(f"unsupported type ({t.__name__})")
        while stack:
            top = stack[-1]
            item = next(top[0], stack)
            if item is stack:
                stack.pop()
                add("}" if top[1] else "]")
                continue
            if top[2]:
                add(",")
            top[2] += 1
            if top[1]:
                k, v = item
                if type(k) is not str:
                    raise TypeError(f"non-string dict key ({type(k).__name__})")
                add(quote(k))
                add(":")
            else:
                v = item
            break
        else:
            chunks.append("".join(out))
            return chunks


_TOKEN = re.compile(
    r'[ \t\n\r]*(?:([\[\]{},:])|(")|(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)|(true|false|null))'
)
_CHUNK = re.compile(r'([^"\\]*)(["\\])')
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_LITERALS = {"true": True, "false": False, "null": None}
_NO_KEY = object()


def _read_string(s, pos):
    parts = []
    while True:
        m = _CHUNK.match(s, pos)
        if m is None:
            raise ValueError("unterminated string")
        parts.append(m.group(1))
        pos = m.end()
        if m.group(2) == '"':
            return "".join(parts), pos
        c = s[pos]
        pos += 1
        if c != "u":
            parts.append(_SIMPLE[c])
            continue
        cp = int(s[pos:pos + 4], 16)
        pos += 4
        if 0xD800 <= cp <= 0xDBFF and s.startswith("\\u", pos):
            lo = int(s[pos + 2:pos + 6], 16)
            if 0xDC00 <= lo <= 0xDFFF:
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00)
                pos += 6
        parts.append(chr(cp))


def decode(s):
    """Parses host JSON: with the C scanner of the json module where that provably gives the
    exact decoder's result, else with the exact decoder."""
    if _scan is not None and (_SCAN_DEPTH_BOUNDED or _getrecursionlimit() <= 4000
                              or s.count("[") + s.count("{") <= 900):
        try:
            value, end = _scan(s, 0)
        except Exception:  # invalid for strict JSON, NaN/Infinity, too deep, too many digits
            pass
        else:
            if end == len(s):
                return value
    return exact_decode(s)


# The C scanner (what json.loads runs, without its leading-whitespace skip) in strict mode, with
# float() and int() for numbers exactly as the exact decoder, and NaN, Infinity and -Infinity
# refused. Whenever it accepts a whole line, that line is standard JSON, on which both decoders
# agree: the same \uXXXX pair folding and lone surrogates, the same int/float split and parse
# (1e400 is inf in both, a 5000-digit int fails in both), the last duplicate key's value at the
# first key's position, `__proto__` a plain key. Anything it refuses goes to the exact decoder.
# Its recursion is bounded by the interpreter from 3.12; before that by the recursion limit, which
# a program may raise, so a deep line is scanned only under a modest limit.
def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


class _ScanContext:
    def __init__(self):
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = _reject_constant
        self.memo = {}


try:
    from _json import make_scanner as _make_scanner

    _scan = _make_scanner(_ScanContext())
except Exception:  # no C accelerator: the exact decoder alone
    _scan = None
_SCAN_DEPTH_BOUNDED = _sys.version_info >= (3, 12)
_getrecursionlimit = _sys.getrecursionlimit


def exact_decode(s):
    """Parses host JSON (trusted, well-formed) without recursion."""
    pos = 0
    stack = []
    keys = []
    while True:
        m = _TOKEN.match(s, pos)
        if m is None:
            raise ValueError(f"invalid JSON at {pos}")
        pos = m.end()
        punct, q, num, lit = m.group(1, 2, 3, 4)
        if q is not None:
            v, pos = _read_string(s, pos)
        elif num is not None:
            v = float(num) if ("." in num or "e" in num or "E" in num) else int(num)
        elif lit is not None:
            v = _LITERALS[lit]
        elif punct == "[":
            stack.append([])
            keys.append(None)
            continue
        elif punct == "{":
            stack.append({})
            keys.append(_NO_KEY)
            continue
        elif punct == "]" or punct == "}":
            v = stack.pop()
            keys.pop()
        else:
            continue  # , and :
        if not stack:
            if s[pos:].strip(" \t\n\r"):
                raise ValueError("trailing data")
            return v
        top = stack[-1]
        if keys[-1] is None:
            top.append(v)
        elif keys[-1] is _NO_KEY:
            keys[-1] = v
        else:
            top[keys[-1]] = v
            keys[-1] = _NO_KEY
