"""Load curlpow's libraries from Python with ctypes, the way the peers' Python users do.

    python3 test_ctypes.py dcurl PATH/libdcurl.so   # dcurl's old tests: restype c_char_p
    python3 test_ctypes.py ccurl PATH/libccurl.so   # PyOTA's pyota[pow]: POINTER(c_char), [:2673]

Prints one "RESULT <mwm> <input> <output>" line per PoW, which the Rust test that runs this
script checks again with curlpow's scalar reference, then "ok <mode>". Exits non-zero on any
failure.
"""

import ctypes
import random
import sys
import threading
import time

ALPHABET = "9ABCDEFGHIJKLMNOPQRSTUVWXYZ"
TRYTES = 2673
THREADS = 10


def transaction(seed):
    rng = random.Random(seed)
    return "".join(rng.choice(ALPHABET) for _ in range(TRYTES))


def trailing_zero_trits(hash_trytes):
    zeros = 0
    for c in reversed(hash_trytes):
        v = 0 if c == "9" else ord(c) - ord("A") + 1
        if v > 13:
            v -= 27
        trits = []
        for _ in range(3):
            r = v % 3
            t = -1 if r == 2 else r
            trits.append(t)
            v = (v - t) // 3
        for t in reversed(trits):
            if t != 0:
                return zeros
            zeros += 1
    return zeros


def check(cond, what):
    if not cond:
        print("FAILED: " + what, file=sys.stderr)
        sys.exit(1)


def report(mwm, tx, out, digest):
    check(out is not None, "no result")
    check(len(out) == TRYTES, "result length %d" % len(out))
    check(out[: TRYTES - 27] == tx[: TRYTES - 27], "only the nonce may change")
    check(trailing_zero_trits(digest(out)) >= mwm, "weight below %d" % mwm)
    print("RESULT %d %s %s" % (mwm, tx, out), flush=True)


def run_threads(pow_one, mwm):
    """THREADS calls at once on distinct transactions; returns (tx, result) pairs."""
    results = [None] * THREADS
    txs = [transaction(1000 + i) for i in range(THREADS)]

    def work(i):
        results[i] = pow_one(txs[i], mwm)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
        check(not t.is_alive(), "a PoW thread did not finish")
    return list(zip(txs, results))


def dcurl(path):
    lib = ctypes.cdll.LoadLibrary(path)
    lib.dcurl_init.argtypes = [ctypes.c_void_p]
    lib.dcurl_init.restype = ctypes.c_bool
    lib.dcurl_entry.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    # dcurl's own Python tests read the result this way: up to the first NUL. (The buffer is
    # never freed that way; a long-running caller would keep the pointer and free() it.)
    lib.dcurl_entry.restype = ctypes.c_char_p
    lib.ccurl_digest_transaction.argtypes = [ctypes.c_char_p]
    lib.ccurl_digest_transaction.restype = ctypes.c_char_p

    def digest(trytes):
        return lib.ccurl_digest_transaction(trytes.encode("ascii")).decode("ascii")

    check(lib.dcurl_entry(transaction(1).encode("ascii"), 9, 0) is None, "entry before init")
    check(lib.dcurl_init(None), "dcurl_init")
    check(lib.dcurl_init(None), "second dcurl_init")

    def pow_one(tx, mwm):
        out = lib.dcurl_entry(tx.encode("ascii"), mwm, 0)
        return None if out is None else out.decode("ascii")

    for tx, out in run_threads(pow_one, 9):
        report(9, tx, out, digest)
    check(lib.dcurl_entry(b"ABC", 9, 0) is None, "short input")
    check(lib.dcurl_entry(None, 9, 0) is None, "NULL input")
    check(lib.dcurl_entry(transaction(2).encode("ascii"), 244, 0) is None, "mwm 244")
    lib.dcurl_destroy()
    check(lib.dcurl_entry(transaction(3).encode("ascii"), 9, 0) is None, "entry after destroy")


def ccurl(path):
    lib = ctypes.CDLL(path)
    # PyOTA's pyota[pow] (ccurl.interface.py): no init call, POINTER(c_char), slice 2673.
    lib.ccurl_pow.restype = ctypes.POINTER(ctypes.c_char)
    lib.ccurl_pow.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.ccurl_digest_transaction.restype = ctypes.POINTER(ctypes.c_char)
    lib.ccurl_digest_transaction.argtypes = [ctypes.c_char_p]
    libc = ctypes.CDLL(None)
    libc.free.argtypes = [ctypes.c_void_p]

    def digest(trytes):
        p = lib.ccurl_digest_transaction(trytes.encode("utf-8"))
        check(bool(p), "digest")
        h = p[:81].decode("utf-8")
        libc.free(p)
        return h

    def pow_one(tx, mwm):
        p = lib.ccurl_pow(tx.encode("utf-8"), mwm)
        if not p:
            return None
        out = p[:TRYTES].decode("utf-8")
        check(p[TRYTES] == b"\0", "NUL after the trytes")
        libc.free(p)
        return out

    for tx, out in run_threads(pow_one, 9):
        report(9, tx, out, digest)

    # Interrupt from another thread during an endless search.
    box = {}

    def endless():
        box["out"] = lib.ccurl_pow(transaction(5).encode("utf-8"), 60)
        box["at"] = time.monotonic()

    t = threading.Thread(target=endless)
    t.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    lib.ccurl_pow_interrupt()
    t.join(10)
    check(not t.is_alive(), "interrupt did not stop the search")
    check(not box["out"], "an interrupted search returns NULL")
    print("interrupt: returned %.1f ms after ccurl_pow_interrupt" % ((box["at"] - t0) * 1e3))
    check(not lib.ccurl_pow(b"ABC", 9), "short input")
    lib.ccurl_pow_finalize()


if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    {"dcurl": dcurl, "ccurl": ccurl}[mode](path)
    print("ok " + mode)
