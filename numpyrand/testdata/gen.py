#!/usr/bin/python3
"""Reference values for package numpyrand, computed with numpy itself.

Must run with a Python that has numpy (on Debian: /usr/bin/python3 with
python3-numpy). Two modes:

  /usr/bin/python3 gen.py > golden.json
      Regenerates the committed golden file: a fixed program of operations
      for the seeds 0, 1, 42, 1234, 2**31-2, 2**32-1, for several
      init_by_array seeds, for a set_state round trip, plus reference values
      of the C library's log (which numpy's legacy Gaussian sampler calls).

  /usr/bin/python3 gen.py --live --seeds 3,99 --program-seed 7
      Used by TestLiveNumpy: the same kind of program with parameters drawn
      from --program-seed, for the given integer seeds. Output on stdout.

Every case names how to seed a RandomState and lists operations; each
operation records its arguments and numpy's outputs. Floats are written as
the 16 hex digits of their IEEE-754 bits so that the comparison in Go is
bit-exact; integers are JSON integers. The Go test replays the same
operations on a numpyrand.RandomState and compares.
"""

import argparse
import hashlib
import json
import math
import random
import struct
import sys

import numpy as np


def fbits(x):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def state_json(rs):
    name, key, pos, has_gauss, gauss = rs.get_state(legacy=True)
    assert name == "MT19937"
    return {
        "key": [int(k) for k in key],
        "pos": int(pos),
        "has_gauss": int(has_gauss),
        "gauss": fbits(gauss),
    }


# Single-draw operations used in "mixed" patterns; the Go test has the same
# table. Each returns a float (hex) or an int (decimal string).
MIXED = {
    "g": lambda rs: fbits(rs.standard_normal()),
    "n": lambda rs: fbits(rs.normal(0.5, 2.0)),
    "u": lambda rs: fbits(rs.uniform(-1.0, 3.0)),
    "s": lambda rs: fbits(rs.random_sample()),
    "i": lambda rs: str(int(rs.randint(0, 7))),
    "j": lambda rs: str(int(rs.randint(2**31 - 1))),
    "I": lambda rs: str(int(rs.randint(-(2**40), 2**40))),
    "b": lambda rs: str(int(rs.binomial(5, 0.3))),
    "B": lambda rs: str(int(rs.binomial(1000, 0.4))),
}


def run_op(rs, op):
    kind = op["op"]
    if kind == "state":
        op["out"] = state_json(rs)
    elif kind == "set_state":
        s = op["state"]
        key = np.array(s["key"], dtype=np.uint32)
        gauss = struct.unpack("<d", struct.pack("<Q", int(s["gauss"], 16)))[0]
        rs.set_state(("MT19937", key, s["pos"], s["has_gauss"], gauss))
    elif kind == "seed":
        rs.seed(op["seed"])
    elif kind == "seed_array":
        rs.seed(list(op["key"]))
    elif kind == "uint32":
        # dtype uint32 over the full range: one raw MT19937 output per value.
        out = rs.randint(0, 2**32, size=op["n"], dtype=np.uint32)
        op["out"] = [int(v) for v in out]
    elif kind == "random_sample":
        op["out"] = [fbits(v) for v in rs.random_sample(op["n"])]
    elif kind == "uniform":
        op["out"] = [fbits(v) for v in rs.uniform(op["low"], op["high"], op["n"])]
    elif kind == "standard_normal":
        op["out"] = [fbits(v) for v in rs.standard_normal(op["n"])]
    elif kind == "normal":
        op["out"] = [fbits(v) for v in rs.normal(op["loc"], op["scale"], op["n"])]
    elif kind == "randint":
        out = rs.randint(op["low"], op["high"], size=op["n"])
        assert out.dtype == np.int64, out.dtype
        op["out"] = [int(v) for v in out]
    elif kind == "permutation":
        op["out"] = [int(v) for v in rs.permutation(op["n"])]
    elif kind == "shuffle":  # 1-D ndarray: the fast buffer path
        a = np.arange(op["n"])
        rs.shuffle(a)
        op["out"] = [int(v) for v in a]
    elif kind == "shuffle_list":  # Python list: the untyped path
        a = list(range(op["n"]))
        rs.shuffle(a)
        op["out"] = [int(v) for v in a]
    elif kind == "shuffle2d":  # rows of a 2-D array: skips i == j swaps
        a = np.arange(2 * op["n"]).reshape(op["n"], 2)
        rs.shuffle(a)
        op["out"] = [int(v) // 2 for v in a[:, 0]]
    elif kind == "binomial":
        out = rs.binomial(op["trials"], op["p"], size=op["n"])
        op["out"] = [int(v) for v in out]
    elif kind == "mixed":
        op["out"] = [MIXED[c](rs) for c in op["pattern"]]
    else:
        raise ValueError(kind)
    return op


def run_case(case):
    if "seed_array" in case:
        rs = np.random.RandomState(list(case["seed_array"]))
    else:
        rs = np.random.RandomState(case["seed"])
    case["ops"] = [run_op(rs, op) for op in case["ops"]]
    return case


RANDINT_RANGES = [
    (0, 2),
    (0, 10),
    (-5, 5),
    (0, 1000),
    (0, 2**31 - 1),  # randint(2**31 - 1)
    (-(2**31), 2**31 - 1),  # rng = 2**32 - 2: 32-bit masked draws
    (0, 2**32),  # rng = 2**32 - 1: raw 32-bit draws
    (0, 2**32 + 1),  # rng = 2**32: 64-bit draws
    (0, 2**40),
    (-(2**62), 2**62),
    (-(2**63), 2**63 - 1),  # rng = 2**64 - 2
    (5, 6),  # rng = 0: no draw consumed
    (-1000, -990),
]

BINOMIAL_PARAMS = [
    (1, 0.5),
    (1, 0.1),  # dropout masks
    (10, 0.5),  # inversion
    (100, 0.01),
    (20, 0.99),  # n - inversion(q)
    (0, 0.5),  # still consumes a draw
    (10, 0.0),
    (10, 1.0),
    (60, 0.5),  # p*n == 30: inversion
    (61, 0.5),  # BTPE
    (1000, 0.3),
    (100, 0.7),  # q*n just above 30: n - BTPE(q)
    (10000, 0.4),  # BTPE with the Stirling (Step 52) test
    (2**31, 0.25),
    (1000000, 0.9),
]


def fixed_program(prng):
    ops = [{"op": "state"}]
    ops.append({"op": "uint32", "n": 1000})
    ops.append({"op": "random_sample", "n": 1000})
    ops.append({"op": "uniform", "low": -3.5, "high": 2.25, "n": 1000})
    ops.append({"op": "standard_normal", "n": 1001})
    ops.append({"op": "state"})  # has_gauss == 1 here
    ops.append({"op": "normal", "loc": 0.1, "scale": 0.01, "n": 1000})
    ops.append({"op": "mixed", "pattern": "".join(prng.choice("ggnnuusijIbB") for _ in range(1000))})
    for lo, hi in RANDINT_RANGES:
        ops.append({"op": "randint", "low": lo, "high": hi, "n": 200})
    ops.append({"op": "permutation", "n": 10})
    ops.append({"op": "permutation", "n": 1000})
    ops.append({"op": "shuffle", "n": 100})
    ops.append({"op": "shuffle_list", "n": 50})
    ops.append({"op": "shuffle2d", "n": 30})
    ops.append({"op": "permutation", "n": 1})
    ops.append({"op": "permutation", "n": 0})
    for n, p in BINOMIAL_PARAMS:
        ops.append({"op": "binomial", "trials": n, "p": p, "n": 100})
    ops.append({"op": "mixed", "pattern": "g"})  # leave a cached Gaussian
    ops.append({"op": "state"})
    ops.append({"op": "seed", "seed": 12345})  # reseeding drops the cache
    ops.append({"op": "mixed", "pattern": "gggsg"})
    ops.append({"op": "seed_array", "key": [1, 2, 3]})
    ops.append({"op": "mixed", "pattern": "gsgg"})
    ops.append({"op": "state"})
    return ops


def random_program(prng, size):
    ops = [{"op": "state"}]
    ops.append({"op": "uint32", "n": size})
    ops.append({"op": "random_sample", "n": size})
    lo = prng.uniform(-100, 100)
    ops.append({"op": "uniform", "low": lo, "high": lo + prng.uniform(0, 50), "n": size})
    ops.append({"op": "standard_normal", "n": size + prng.randint(0, 1)})
    ops.append({"op": "normal", "loc": prng.uniform(-5, 5), "scale": prng.uniform(0, 3), "n": size})
    ops.append({"op": "mixed", "pattern": "".join(prng.choice("ggnnuusijIbB") for _ in range(size))})
    for _ in range(12):
        width = int(2 ** prng.uniform(0, 63.9)) + 1
        low = prng.randint(-(2**63), 2**63 - 1 - width)
        ops.append({"op": "randint", "low": low, "high": low + width, "n": 50})
    for _ in range(4):
        ops.append({"op": "randint", "low": 0, "high": prng.randint(1, 2**32 + 3), "n": 50})
    ops.append({"op": "permutation", "n": prng.randint(0, 2000)})
    ops.append({"op": "permutation", "n": prng.randint(65536, 100000)})  # 17-bit masks
    ops.append({"op": "shuffle", "n": prng.randint(0, 300)})
    ops.append({"op": "shuffle2d", "n": prng.randint(0, 300)})
    for _ in range(10):
        n = int(2 ** prng.uniform(0, 24))
        p = prng.choice([prng.random(), 30.0 / n if n else 0.5, prng.choice([0.0, 1.0, 0.5])])
        ops.append({"op": "binomial", "trials": n, "p": min(max(p, 0.0), 1.0), "n": 50})
    ops.append({"op": "state"})
    return ops


def log_inputs(prng, count):
    xs = []
    for i in range(count):
        if i % 3 == 0:
            # What legacy_gauss feeds to log: x1**2 + x2**2 on the 53-bit grid.
            x1 = 2.0 * (prng.getrandbits(53) / 2.0**53) - 1.0
            x2 = 2.0 * (prng.getrandbits(53) / 2.0**53) - 1.0
            xs.append(x1 * x1 + x2 * x2 or 0.5)
        elif i % 3 == 1:
            xs.append(prng.uniform(0.9, 1.1))  # the close-to-1 branch
        else:
            bits = prng.getrandbits(63)  # any positive double
            x = struct.unpack("<d", struct.pack("<Q", bits))[0]
            xs.append(x if math.isfinite(x) and x > 0 else 2.0)
    xs += [1.0, 2.0, 0.5, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308]
    return {"in": [fbits(x) for x in xs], "out": [fbits(math.log(x)) for x in xs]}


def log_digest(seed, count):
    """SHA-256 of the C library's log over `count` inputs derived from
    RandomState(seed).random_sample: for input i, with a, b, c the next three
    samples, i%3 == 0 gives x1*x1 + x2*x2 with x1 = 2a-1, x2 = 2b-1 (what
    legacy_gauss feeds to log; 0.5 if that is 0), i%3 == 1 gives
    0.9375 + 0.127*c (around log's close-to-1 branch) and i%3 == 2 gives
    ldexp(1 + a, int(b*2001) - 1000). The digest covers the little-endian
    bits of the outputs; far more inputs than the explicit list, so rarely
    differing roundings are caught too."""
    u = np.random.RandomState(seed).random_sample(3 * count).reshape(count, 3)
    a, b, c = u[:, 0], u[:, 1], u[:, 2]
    x1 = 2.0 * a - 1.0
    x2 = 2.0 * b - 1.0
    r2 = x1 * x1 + x2 * x2
    r2[r2 == 0] = 0.5
    near1 = 0.9375 + 0.127 * c
    wide = np.ldexp(1.0 + a, (b * 2001).astype(np.int64) - 1000)
    mode = np.arange(count) % 3
    xs = np.where(mode == 0, r2, np.where(mode == 1, near1, wide))
    out = np.array([math.log(x) for x in xs.tolist()], dtype="<f8")
    return {"seed": seed, "count": count, "sha256": hashlib.sha256(out.tobytes()).hexdigest()}


def golden():
    prng = random.Random(20240601)
    cases = []
    for seed in [0, 1, 42, 1234, 2**31 - 2, 2**32 - 1]:
        cases.append({"name": "seed=%d" % seed, "seed": seed, "ops": fixed_program(prng)})
    for key in [[0], [5], [1, 2, 3], [2**32 - 1] * 5, [prng.getrandbits(32) for _ in range(700)]]:
        ops = [{"op": "state"}, {"op": "mixed", "pattern": "".join(prng.choice("ggnuusiIbB") for _ in range(300))}]
        ops += [{"op": "permutation", "n": 100}, {"op": "state"}]
        name = "seed_array=%s" % ",".join(map(str, key[:3])) + (",...(%d)" % len(key) if len(key) > 3 else "")
        cases.append({"name": name, "seed_array": key, "ops": ops})
    # Restore a state taken mid-stream (with a cached Gaussian) from another
    # generator and continue from it.
    src = np.random.RandomState(99)
    src.random_sample(333)
    src.standard_normal(3)
    st = state_json(src)
    ops = [{"op": "set_state", "state": st}, {"op": "state"}]
    ops.append({"op": "mixed", "pattern": "".join(prng.choice("ggnuusiIbB") for _ in range(500))})
    ops.append({"op": "state"})
    cases.append({"name": "set_state", "seed": 7, "ops": ops})
    # RandomState keeps the historical BTPE whose last two Stirling terms are
    # added rather than subtracted; with seed 2 the 3253rd draw of
    # binomial(500, 0.5) is one where the two versions disagree (229 vs 251).
    ops = [{"op": "binomial", "trials": 500, "p": 0.5, "n": 3300}, {"op": "state"}]
    cases.append({"name": "btpe legacy stirling", "seed": 2, "ops": ops})
    return cases


def dump(doc):
    # One case per line group; compact but diff-friendly.
    out = sys.stdout
    out.write("{\n")
    out.write('"numpy_version": %s,\n' % json.dumps(np.__version__))
    out.write('"log": %s,\n' % json.dumps(doc["log"], separators=(",", ":")))
    out.write('"log_digest": %s,\n' % json.dumps(doc["log_digest"]))
    out.write('"cases": [\n')
    for i, case in enumerate(doc["cases"]):
        ops = case.pop("ops")
        head = json.dumps(case, separators=(",", ":"))[:-1]
        out.write(head + ',"ops":[\n')
        for j, op in enumerate(ops):
            out.write(json.dumps(op, separators=(",", ":")) + (",\n" if j + 1 < len(ops) else "\n"))
        out.write("]}" + (",\n" if i + 1 < len(doc["cases"]) else "\n"))
    out.write("]\n}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--live", action="store_true")
    ap.add_argument("--seeds", default="")
    ap.add_argument("--program-seed", type=int, default=0)
    ap.add_argument("--size", type=int, default=300)
    args = ap.parse_args()
    if args.live:
        prng = random.Random(args.program_seed)
        cases = []
        for s in args.seeds.split(","):
            seed = int(s)
            cases.append({"name": "live seed=%d" % seed, "seed": seed, "ops": random_program(prng, args.size)})
        doc = {"log": log_inputs(prng, 2000), "log_digest": log_digest(prng.getrandbits(32), 2000000),
               "cases": [run_case(c) for c in cases]}
    else:
        prng = random.Random(12345)
        doc = {"log": log_inputs(prng, 3000), "log_digest": log_digest(2024, 1000000),
               "cases": [run_case(c) for c in golden()]}
    dump(doc)


if __name__ == "__main__":
    main()
