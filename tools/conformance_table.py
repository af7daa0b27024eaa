"""Writes docs/CONFORMANCE.md: for each function of the array API
standard's main namespace (2025.12, read from the signature stubs vendored
in tests/conformance), each device (the cpu and PoCL's OpenCL device) and
each dtype, whether gpukit runs it on a small input (a 2x2 array) and gives
NumPy 2's result (dtype and values), or the error it raises.

    python tools/conformance_table.py           # rewrite docs/CONFORMANCE.md
    python tools/conformance_table.py --check   # fail if it is not up to date

with gpukit importable (ctest's conformance.table runs --check against the
build tree). The table is never edited by hand: a change to gpukit that
changes a cell changes the file, and the check fails until it is rewritten
and committed. Exit 77 (ctest: skipped) when there is no PoCL device and
GPUKIT_TEST_NO_GPU_DEVICE=1."""
import argparse
import difflib
import importlib
import inspect
import os
import re
import sys
from pathlib import Path

import numpy as np

import gpukit

SOURCE = Path(__file__).resolve().parents[1]
STUBS = SOURCE / "tests" / "conformance" / "array-api-tests" / "array-api" / "src"
OUTPUT = SOURCE / "docs" / "CONFORMANCE.md"
VERSION = "2025.12"
CATEGORIES = ["creation", "data_type", "elementwise", "indexing", "linear_algebra",
              "manipulation", "searching", "set", "sorting", "statistical", "utility"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
REAL_FLOATS = ["float32", "float64", "float16", "bfloat16"]
COMPLEX = ["complex64", "complex128"]
# The standard's dtypes, then the two the issue adds for GPU users.
DTYPES = ["bool", *INTS, "float32", "float64", *COMPLEX, "float16", "bfloat16"]
# What a stub's "Should have a ... data type" asks of its first array.
KINDS = {
    "boolean": ["bool"],
    "integer": INTS,
    "integer or boolean": ["bool", *INTS],
    "numeric": [*INTS, *REAL_FLOATS, *COMPLEX],
    "real-valued": [*INTS, *REAL_FLOATS],
    "floating-point": [*REAL_FLOATS, *COMPLEX],
    "real-valued floating-point": REAL_FLOATS,
    "complex floating-point": COMPLEX,
}
VALUES = [[1, 2], [3, 1]]  # small enough for int8 powers, no zero to divide by
BOOLS = [[True, False], [True, True]]
SYMBOLS = {"ok": "✓", "differs": "≠", "error": "✗", "optional": "–", "no dtype": "·"}


class Context:
    """What a recipe calls a function with, in one library (gpukit or
    NumPy): the namespace, the dtype, a 2x2 input x, device keywords."""

    def __init__(self, xp, dtype, device):
        self.xp = xp
        self.d = getattr(xp, dtype)
        self.dev = {"device": device} if xp is gpukit else {}
        self.x = self.mk(BOOLS if dtype == "bool" else VALUES)

    def mk(self, values, dtype=None):
        return self.xp.asarray(values, dtype=self.d if dtype is None else dtype, **self.dev)

    def ints(self, values):
        return self.xp.asarray(values, dtype=self.xp.int64, **self.dev)


def unary(name):
    return lambda c: getattr(c.xp, name)(c.x)


def binary(name):
    return lambda c: getattr(c.xp, name)(c.x, c.x)


# How each function that is not f(x) or f(x1, x2) is called.
RECIPES = {
    "arange": lambda c: c.xp.arange(0, 4, dtype=c.d, **c.dev),
    "asarray": lambda c: c.xp.asarray(VALUES, dtype=c.d, **c.dev),
    "empty": lambda c: c.xp.empty((2, 2), dtype=c.d, **c.dev),
    "empty_like": lambda c: c.xp.empty_like(c.x),
    "eye": lambda c: c.xp.eye(2, 3, k=1, dtype=c.d, **c.dev),
    "from_dlpack": lambda c: c.xp.from_dlpack(c.x),
    "full": lambda c: c.xp.full((2, 2), True if c.d == c.xp.bool else 3, dtype=c.d, **c.dev),
    "full_like": lambda c: c.xp.full_like(c.x, True if c.d == c.xp.bool else 3),
    "linspace": lambda c: c.xp.linspace(0, 4, 5, dtype=c.d, **c.dev),
    "meshgrid": lambda c: c.xp.meshgrid(c.x[0], c.x[1]),
    "ones": lambda c: c.xp.ones((2, 2), dtype=c.d, **c.dev),
    "ones_like": lambda c: c.xp.ones_like(c.x),
    "tril": lambda c: c.xp.tril(c.x),
    "triu": lambda c: c.xp.triu(c.x),
    "zeros": lambda c: c.xp.zeros((2, 2), dtype=c.d, **c.dev),
    "zeros_like": lambda c: c.xp.zeros_like(c.x),
    "astype": lambda c: c.xp.astype(c.ints(VALUES), c.d),
    "can_cast": lambda c: c.xp.can_cast(c.d, c.xp.int64),
    "finfo": lambda c: c.xp.finfo(c.d),
    "iinfo": lambda c: c.xp.iinfo(c.d),
    "isdtype": lambda c: c.xp.isdtype(c.d, "real floating"),
    "result_type": lambda c: c.xp.result_type(c.x, c.x),
    "clip": lambda c: c.xp.clip(c.x, c.mk(1), c.mk(2)),
    "take": lambda c: c.xp.take(c.x, c.ints([1, 0]), axis=0),
    "take_along_axis": lambda c: c.xp.take_along_axis(c.x, c.ints([[1, 0], [0, 1]]), axis=1),
    "tensordot": lambda c: c.xp.tensordot(c.x, c.x, axes=1),
    "broadcast_arrays": lambda c: c.xp.broadcast_arrays(c.x, c.x[0]),
    "broadcast_shapes": lambda c: c.xp.broadcast_shapes((2, 1), (1, 3)),
    "broadcast_to": lambda c: c.xp.broadcast_to(c.x[0], (2, 2)),
    "concat": lambda c: c.xp.concat([c.x, c.x], axis=1),
    "expand_dims": lambda c: c.xp.expand_dims(c.x, axis=0),
    "flip": lambda c: c.xp.flip(c.x, axis=0),
    "moveaxis": lambda c: c.xp.moveaxis(c.x, 0, 1),
    "permute_dims": lambda c: c.xp.permute_dims(c.x, (1, 0)),
    "repeat": lambda c: c.xp.repeat(c.x, 2, axis=0),
    "reshape": lambda c: c.xp.reshape(c.x, (4,)),
    "roll": lambda c: c.xp.roll(c.x, 1),
    "squeeze": lambda c: c.xp.squeeze(c.x[None], axis=0),
    "stack": lambda c: c.xp.stack([c.x, c.x], axis=1),
    "tile": lambda c: c.xp.tile(c.x, (2, 1)),
    "unstack": lambda c: c.xp.unstack(c.x),
    "searchsorted": lambda c: c.xp.searchsorted(c.mk([False, True] if c.d == c.xp.bool
                                                     else [1, 2, 3]), c.x),
    "where": lambda c: c.xp.where(c.mk(BOOLS, dtype=c.xp.bool), c.x, c.x[::-1]),
    "isin": lambda c: c.xp.isin(c.x, c.mk([True] if c.d == c.xp.bool else [1, 3])),
    "argsort": lambda c: c.xp.argsort(c.x, axis=1, descending=True),
    "sort": lambda c: c.xp.sort(c.x, axis=0),
    "cumulative_sum": lambda c: c.xp.cumulative_sum(c.x, axis=1),
    "cumulative_prod": lambda c: c.xp.cumulative_prod(c.x, axis=1),
    "std": lambda c: c.xp.std(c.x, axis=0, correction=1),
    "var": lambda c: c.xp.var(c.x, correction=1),
    "diff": lambda c: c.xp.diff(c.x, axis=0),
}


def load_stubs():
    """{category: [(name, required dtypes)]} from the standard's stubs."""
    sys.path.insert(0, str(STUBS))
    spec = "array_api_stubs._" + VERSION.replace(".", "_")
    functions = {}
    for category in CATEGORIES:
        module = importlib.import_module(f"{spec}.{category}_functions")
        functions[category] = [(name, required(getattr(module, name))) for name in module.__all__]
    constants = importlib.import_module(f"{spec}.constants").__all__
    info = importlib.import_module(f"{spec}.info")
    return functions, constants, [n for n in info.__all__ if n != "__array_namespace_info__"]


def required(function):
    """The dtypes the standard asks a function to take: from the first
    array parameter's "Should have a ... data type", else all of them
    (where's first array is the condition; the column is x1's dtype)."""
    if function.__name__ == "where":
        return list(DTYPES)
    if function.__name__ in ("iinfo", "finfo"):  # of the dtypes their docs name in words
        return KINDS["integer" if function.__name__ == "iinfo" else "floating-point"]
    doc = inspect.getdoc(function) or ""
    params = doc.split("Parameters", 1)[-1].split("Returns", 1)[0]
    blocks = re.split(r"\n(?=\w+: )", params)
    for block in blocks:
        if re.match(r"\w+: .*array", block):
            match = re.search(r"\*{0,2}Should\*{0,2} have (?:an? )?([\w -]+?) data type", block)
            return KINDS[match.group(1)] if match else list(DTYPES)
    return list(DTYPES)


def plain(value, device, where="result"):
    """A result in a form to compare: arrays as (dtype, shape, values) after
    checking that a gpukit array is on `device`; tuples recursively; dtypes,
    finfo/iinfo objects and scalars by value."""
    if isinstance(value, gpukit.Array):
        if str(value.device) != device:
            raise ValueError(f"{where} is on {value.device}, not {device}")
        name = str(value.dtype)
        values = np.array(value.tolist(), dtype=name if hasattr(np, name) else "float64")
        return ("array", name, value.shape, values)
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        value = np.asarray(value)
        return ("array", value.dtype.name, value.shape, value)
    if hasattr(value, "bits"):  # finfo / iinfo (maybe a named tuple): the standard's fields
        keys = ["bits", "max", "min", "eps", "smallest_normal"]
        return tuple((k, float(getattr(value, k))) for k in keys if hasattr(value, k))
    if isinstance(value, (tuple, list)):
        return tuple(plain(v, device, f"{where}[{i}]") for i, v in enumerate(value))
    if isinstance(value, (bool, int, float, complex, str)) or value is None:
        return value
    return str(value)  # a dtype


def compare(got, want, dtype):
    """None when gpukit's result matches NumPy's, else what differs."""
    if isinstance(want, tuple) and want and want[0] == "array":
        if not (isinstance(got, tuple) and got and got[0] == "array"):
            return f"gives {got!r}, NumPy an array"
        _, gdtype, gshape, gvalues = got
        _, wdtype, wshape, wvalues = want
        if gdtype != wdtype:
            return f"dtype {gdtype}, NumPy {wdtype}"
        if gshape != wshape:
            return f"shape {gshape}, NumPy {wshape}"
        if wvalues.dtype.kind in "fc":
            rtol = 1e-2 if dtype in ("float16", "bfloat16") else 1e-5
            same = np.allclose(gvalues, wvalues, rtol=rtol, atol=rtol, equal_nan=True)
        else:
            same = np.array_equal(gvalues, wvalues)
        return None if same else f"values {gvalues.tolist()}, NumPy {wvalues.tolist()}"
    if isinstance(want, tuple) and isinstance(got, tuple):
        if len(got) != len(want):
            return f"{len(got)} results, NumPy {len(want)}"
        for g, w in zip(got, want):
            problem = compare(g, w, dtype)
            if problem:
                return problem
        return None
    return None if got == want else f"gives {got!r}, NumPy {want!r}"


def message(error):
    text = f"{type(error).__name__}: {error}".splitlines()[0]
    return re.sub(r" at 0x[0-9a-f]+", "", text)


def numpy_result(name, recipe, dtype):
    """NumPy's result, or None where NumPy lacks the function or dtype or
    rejects the call."""
    if not (hasattr(np, dtype) and hasattr(np, name)):
        return None
    try:
        with np.errstate(all="ignore"):
            result = plain(recipe(Context(np, dtype, None)), "cpu")
    except Exception:  # NumPy rejects it too
        return None
    if name == "unique_values":  # in no particular order (the standard)
        result = result[:3] + (np.sort(result[3]),)
    return result


DEVICE_DTYPES = {}


def device_dtypes(device):
    """The standard's dtypes `device` has (one without double precision lacks
    float64 and complex128)."""
    if device not in DEVICE_DTYPES:
        DEVICE_DTYPES[device] = gpukit.__array_namespace_info__().dtypes(device=device)
    return DEVICE_DTYPES[device]


def cell(name, dtype, device, kinds):
    """(state, detail) of one function on one dtype and device."""
    if not hasattr(gpukit, dtype) or (dtype in device_dtypes("cpu") and
                                      dtype not in device_dtypes(device)):
        return "no dtype", None
    recipe = RECIPES.get(name)
    if recipe is None:
        # the arrays a function needs: its positional-only parameters
        parameters = inspect.signature(STUB_FUNCTIONS[name]).parameters.values()
        arity = sum(p.kind is p.POSITIONAL_ONLY for p in parameters)
        recipe = binary(name) if arity == 2 else unary(name)
    want = numpy_result(name, recipe, dtype)
    numpy_runs = want is not None
    # Asked of gpukit: what the standard asks for, unless NumPy (which has
    # the dtype) rejects it too.
    must = dtype in kinds and (numpy_runs or not hasattr(np, dtype))
    if not hasattr(gpukit, name):
        return ("error" if must else "optional"), f"AttributeError: gpukit has no {name}"
    try:
        got = plain(recipe(Context(gpukit, dtype, device)), device)
    except Exception as error:  # noqa: BLE001 -- every error is a cell's content
        return ("error" if must else "optional"), message(error)
    if not numpy_runs or not must or name in ("empty", "empty_like"):
        if name in ("empty", "empty_like") and numpy_runs:
            problem = compare(got[:3] + (want[3],), want, dtype)  # values unspecified
            return ("differs", problem) if problem else ("ok", None)
        return "ok", None
    if name == "unique_values":
        got = got[:3] + (np.sort(got[3]),)
    problem = compare(got, want, dtype)
    return ("differs", problem) if problem else ("ok", None)


STUB_FUNCTIONS = {}


def devices():
    """The cpu and the PoCL OpenCL device, or exit 77 where there is none
    and GPUKIT_TEST_NO_GPU_DEVICE=1 says that is expected."""
    for device in gpukit.devices():
        if str(device).startswith("opencl") and "Portable Computing Language" in device.describe():
            return ["cpu", str(device)]
    if os.environ.get("GPUKIT_TEST_NO_GPU_DEVICE") == "1":
        print("conformance_table: no PoCL device; the table is made on cpu and PoCL, skipped")
        sys.exit(77)
    sys.exit("conformance_table: no PoCL OpenCL device (install pocl-opencl-icd); the table "
             "is made on the cpu and PoCL")


def table():
    functions, constants, info_methods = load_stubs()
    spec = "array_api_stubs._" + VERSION.replace(".", "_")
    for category in CATEGORIES:
        module = importlib.import_module(f"{spec}.{category}_functions")
        for name in module.__all__:
            STUB_FUNCTIONS[name] = getattr(module, name)
    names = devices()
    labels = {d: ("opencl (PoCL)" if d.startswith("opencl") else d) for d in names}
    present = [d for d in DTYPES if hasattr(gpukit, d)]
    out = [
        "# Array API conformance table",
        "",
        "<!-- Generated by `python tools/conformance_table.py` from the code; ctest's",
        "     conformance.table checks that it is up to date. Do not edit. -->",
        "",
        f"Every function of the array API standard's main namespace ({VERSION}), called by",
        "`tools/conformance_table.py` on a small input (a 2x2 array of the column's dtype, or",
        "that dtype as the argument) on each device, and compared with NumPy 2 doing the same.",
        f"Devices: {', '.join(labels[d] for d in names)}. A cell shows one mark when every device",
        "agrees, else one per device in that order (`cpu/opencl`).",
        "",
        "- ✓ runs and gives NumPy's result (dtype, shape and values; for `empty*` dtype and",
        "  shape), with every array on the device asked for; or runs where NumPy has nothing",
        "  to compare with",
        "- ≠ runs but differs from NumPy (listed below)",
        "- ✗ fails for a dtype the standard asks the function to take (its \"Should have a",
        "  ... data type\") and NumPy takes (listed below)",
        "- – fails for a dtype the standard does not ask for (or NumPy rejects too)",
        "- · gpukit has no such dtype, or not on that device (float64 and complex128 need "
        "double precision)",
        "",
        "float16 and bfloat16 are not the standard's; gpukit adds them for GPU work. The",
        "function-by-function behaviour (special values, shapes, errors) is tested by",
        "tests/package and the array API test suite (docs/ARRAY_API.md).",
        "",
        f"dtypes gpukit has: {', '.join(present)}.",
        "",
    ]
    problems = {}  # (name, detail) -> [(dtype, device)]
    totals = {"ok": 0, "all": 0}
    for category in CATEGORIES:
        out += [f"## {category.replace('_', ' ')} functions", "",
                "| function | " + " | ".join(DTYPES) + " |",
                "|---|" + "---|" * len(DTYPES)]
        for name, kinds in functions[category]:
            row = []
            for dtype in DTYPES:
                states = []
                for device in names:
                    state, detail = cell(name, dtype, device, kinds)
                    states.append(SYMBOLS[state])
                    if state in ("error", "differs"):
                        problems.setdefault((name, detail), []).append((dtype, labels[device]))
                row.append(states[0] if len(set(states)) == 1 else "/".join(states))
            required_row = [c for c, dtype in zip(row, DTYPES) if dtype in kinds]
            totals["all"] += 1
            totals["ok"] += all(part in ("✓", "·") for c in required_row
                                for part in c.split("/"))
            out.append(f"| `{name}` | " + " | ".join(row) + " |")
        out.append("")
    out.insert(out.index(f"dtypes gpukit has: {', '.join(present)}.") + 1,
               f"Functions that run and match NumPy on every dtype gpukit has that the "
               f"standard asks for, on every device: {totals['ok']} of {totals['all']}.")
    out += ["## Constants, version and inspection", "",
            "| name | in gpukit |", "|---|---|",
            f"| `__array_api_version__` | "
            f"{getattr(gpukit, '__array_api_version__', '✗ missing')} |"]
    for name in constants:
        out.append(f"| `{name}` | {'✓' if hasattr(gpukit, name) else '✗ missing'} |")
    info = gpukit.__array_namespace_info__()
    for name in info_methods:
        out.append(f"| `__array_namespace_info__().{name}` | "
                   f"{'✓' if hasattr(info, name) else '✗ missing'} |")
    out += ["", "## What fails or differs", ""]
    for (name, detail), where in sorted(problems.items()):
        dtypes = [d for d in DTYPES if any(w[0] == d for w in where)]
        places = [labels[d] for d in names if any(w[1] == labels[d] for w in where)]
        scope = "all devices" if len(places) == len(names) else ", ".join(places)
        out.append(f"- `{name}` ({', '.join(dtypes)}; {scope}): {detail}")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="fail if docs/CONFORMANCE.md differs from what the code gives")
    args = parser.parse_args()
    text = table()
    if not args.check:
        OUTPUT.write_text(text)
        print(f"conformance_table: wrote {OUTPUT.relative_to(SOURCE)}")
        print(next(line for line in text.splitlines() if line.startswith("Functions that")))
        return
    committed = OUTPUT.read_text() if OUTPUT.exists() else ""
    if committed != text:
        diff = difflib.unified_diff(committed.splitlines(), text.splitlines(),
                                    "docs/CONFORMANCE.md (committed)", "(from the code)",
                                    lineterm="", n=0)
        print("\n".join(list(diff)[:80]))
        sys.exit("conformance_table: docs/CONFORMANCE.md is not what the code gives: run "
                 "`python tools/conformance_table.py` and commit it")
    print("conformance_table: docs/CONFORMANCE.md is up to date")


if __name__ == "__main__":
    main()
