"""The data-apis array API test suite (tests/conformance/array-api-tests,
pinned, see README.md there) on gpukit's cpu device, on its first OpenCL
device (PoCL in CI) and on NumPy 2, in one run: the main namespace's tests
and those of the extensions gpukit has (array_api_plugin.py: LEFT_OUT),
three pytest processes side by side.

It prints each one's share of the tests that pass, and fails when
- gpukit fails a test that tests/conformance/baseline.txt does not list as
  failing for that device (a regression), or passes one that it lists (the
  baseline, and so the list of failures in docs/ARRAY_API.md, would no
  longer be true: run with --update-baseline and commit both files);
- docs/ARRAY_API.md is not the one the baseline makes;
- with --require-numpy-share (the CMake option GPUKIT_ARRAY_API_NUMPY_SHARE,
  on by default): gpukit's share on a device is below NumPy's.

Shares are over the union of the tests collected for the three: a test that
is not collected for gpukit (a dtype the device lacks, such as float64
without double precision) counts as not passing.

    python tests/conformance/array_api.py [--max-examples N] [--update-baseline]

with gpukit importable (ctest puts the build tree's python/ on PYTHONPATH).
GPUKIT_TEST_NO_GPU_DEVICE=1 leaves out the OpenCL device where there is none."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from array_api_plugin import LEFT_OUT  # the extensions not run

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parents[1]
SUITE = HERE / "array-api-tests"
BASELINE = HERE / "baseline.txt"
DOCS = SOURCE / "docs" / "ARRAY_API.md"
API_VERSION = "2025.12"
# The suite's pinned commit (README.md there); written into the baseline and docs.
SUITE_PIN = "array-api-tests 2026.02.26 (41379d15d26d67a1e66c840e775d41a8a7fb1516)"
STANDARD_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                   "uint64", "float32", "float64", "complex64", "complex128")
GPUKIT_TARGETS = ("cpu", "opencl")


def fail(message):
    print(f"conformance: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def targets(requested):
    """The runs: each a name, the module the suite tests and the device
    gpukit makes arrays on (GPUKIT_DEFAULT_DEVICE) or None for NumPy."""
    import gpukit
    names = requested.split(",")
    have_opencl = any(str(d).startswith("opencl") for d in gpukit.devices())
    if "opencl" in names and not have_opencl:
        if os.environ.get("GPUKIT_TEST_NO_GPU_DEVICE") != "1":
            fail("gpukit finds no OpenCL device (install pocl-opencl-icd, or set "
                 "GPUKIT_TEST_NO_GPU_DEVICE=1 to run without one)")
        print("conformance: no OpenCL device; GPUKIT_TEST_NO_GPU_DEVICE=1, so only the cpu")
        names.remove("opencl")
    # The suite draws every standard dtype the namespace has; those gpukit
    # or the run's device lacks (float64 and complex128 where a device has
    # no double precision) are skipped (it cannot even start otherwise).
    info = gpukit.__array_namespace_info__()
    runs = []
    for name in names:
        if name == "numpy":
            runs.append(("numpy", "numpy", None, []))
        elif name in GPUKIT_TARGETS:
            has = info.dtypes(device=name)
            runs.append((name, "gpukit", name, [d for d in STANDARD_DTYPES if d not in has]))
        else:
            fail(f"unknown target {name!r} (cpu, opencl, numpy)")
    return runs


def scope():
    """What the run covers, for the printout, the baseline and the docs."""
    if not LEFT_OUT:
        return "the main namespace and its extensions (linalg, fft)"
    return f"the main namespace and its extensions but {', '.join(LEFT_OUT)}"


def start(run, max_examples, workdir):
    name, module, device, skip_dtypes = run
    env = dict(os.environ)
    env.update({
        "ARRAY_API_TESTS_MODULE": module,
        "ARRAY_API_TESTS_VERSION": API_VERSION,
        "GPUKIT_CONFORMANCE_OUTCOMES": str(workdir / f"{name}.json"),
        # Absolute, since pytest runs in the suite's directory.
        "PYTHONPATH": os.pathsep.join([str(HERE)] + [os.path.abspath(p) for p in
                                                     env.get("PYTHONPATH", "").split(os.pathsep) if p]),
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_WAIT_POLICY": "passive",
    })
    env.pop("ARRAY_API_TESTS_SKIP_DTYPES", None)
    if skip_dtypes:
        env["ARRAY_API_TESTS_SKIP_DTYPES"] = ",".join(skip_dtypes)
    if device:
        env["GPUKIT_DEFAULT_DEVICE"] = device
    command = [sys.executable, "-m", "pytest", "array_api_tests", "-q", "-p", "array_api_plugin",
               "-p", "no:cacheprovider", "-p", "no:warnings", f"--max-examples={max_examples}",
               "--disable-deadline", "--derandomize",
               *(["--disable-extension", *LEFT_OUT] if LEFT_OUT else [])]
    log = open(workdir / f"{name}.log", "w")
    return subprocess.Popen(command, cwd=SUITE, env=env, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL), log


def collect(run, process, workdir):
    """A run's {test id: (outcome, reason)} after checking that pytest ran
    the suite to the end on the device asked for."""
    name, _, device, _ = run
    log_path = workdir / f"{name}.log"
    # 0: all passed, 1: some failed; anything else means the suite did not run.
    if process.returncode not in (0, 1) or not (workdir / f"{name}.json").exists():
        tail = log_path.read_text(errors="replace")[-4000:]
        fail(f"the {name} run did not complete (pytest exit {process.returncode}):\n{tail}")
    result = json.loads((workdir / f"{name}.json").read_text())
    want = device or "cpu"
    if not result["device"].startswith(want):
        fail(f"the {name} run made its arrays on {result['device']}, not {want}")
    return {k: tuple(v) for k, v in result["outcomes"].items()}


def read_baseline():
    """{(target, test id): reason} of the tests gpukit is known not to pass."""
    known = {}
    for line in BASELINE.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        target, test, reason = line.split("\t", 2)
        known[(target, test)] = reason
    return known


def header_lines(path):
    return [line for line in path.read_text().splitlines() if line.startswith("#")]


def write_baseline(results, shares, max_examples):
    import hypothesis
    lines = [
        "# gpukit's failures in the array API test suite, one per line: device<TAB>test<TAB>reason.",
        "# Written by `python tests/conformance/array_api.py --update-baseline`; never edit by hand.",
        "# ctest's conformance.array_api fails when a test fails that is not listed here, or passes",
        "# while listed here. docs/ARRAY_API.md is made from this file.",
        f"# suite: {SUITE_PIN}, standard {API_VERSION}",
        f"# run: {scope()}, hypothesis {hypothesis.__version__}, --max-examples={max_examples} "
        "--derandomize",
        "# shares at this update: " + ", ".join(f"{n} {p}/{t}" for n, (p, t) in shares.items()),
    ]
    for target in GPUKIT_TARGETS:
        for test, (outcome, reason) in sorted(results.get(target, {}).items()):
            if outcome != "passed":
                lines.append(f"{target}\t{test}\t{outcome}: {reason}")
    BASELINE.write_text("\n".join(lines) + "\n")


def docs_text():
    """docs/ARRAY_API.md from the baseline: every failure left, grouped by
    test file and reason, with the devices it fails on."""
    known = read_baseline()
    meta = [line[2:] for line in header_lines(BASELINE) if line.startswith(("# suite", "# run",
                                                                              "# shares"))]
    groups = {}  # file -> reason -> test -> [targets]
    for (target, test), reason in known.items():
        path, _, name = test.partition("::")
        groups.setdefault(path, {}).setdefault(reason, {}).setdefault(name, []).append(target)
    out = [
        "# gpukit and the array API test suite",
        "",
        "<!-- Generated by `python tests/conformance/array_api.py --update-baseline` from",
        "     tests/conformance/baseline.txt; ctest's conformance.array_api checks it. Do not edit. -->",
        "",
        "ctest's `conformance.array_api` runs the data-apis array API test suite, pinned and vendored",
        "in `tests/conformance/array-api-tests/`, on gpukit's `cpu` device, on its first OpenCL device",
        f"(PoCL in CI) and on NumPy 2 in the same run, over {scope()} of the standard. It prints",
        "each share of passing tests and fails on any change against the baseline. Shares count",
        "over the tests collected for any of the three, so a test gpukit cannot collect (a dtype",
        "it lacks) counts as not passing. Each reason is the",
        "first line of the failure as pytest reports it; in test_special_cases.py,",
        "`'NoneType' object is not callable` means the function is missing from gpukit.",
        "",
        *(f"- {line}" for line in meta),
        f"- tests gpukit does not pass: {sum(1 for t, _ in known if t == 'cpu')} on cpu, "
        f"{sum(1 for t, _ in known if t == 'opencl')} on opencl",
        "",
        "## The failures left, by test file and reason",
    ]
    for path in sorted(groups):
        out += ["", f"### {path.removeprefix('array_api_tests/')}"]
        for reason in sorted(groups[path]):
            tests = groups[path][reason]
            out += ["", f"`{reason}`", ""]
            for name in sorted(tests):
                where = ", ".join(t for t in GPUKIT_TARGETS if t in tests[name])
                out.append(f"- `{name}` ({where})")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-examples", type=int, default=20)
    parser.add_argument("--targets", default="cpu,opencl,numpy")
    parser.add_argument("--update-baseline", action="store_true",
                        help="write baseline.txt and docs/ARRAY_API.md from this run")
    parser.add_argument("--require-numpy-share", action="store_true",
                        help="fail when gpukit passes a smaller share than NumPy")
    args = parser.parse_args()

    if not args.update_baseline and DOCS.read_text() != docs_text():
        fail("docs/ARRAY_API.md is not the one tests/conformance/baseline.txt makes: run "
             "`python tests/conformance/array_api.py --update-baseline` and commit both")

    runs = targets(args.targets)
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gpukit-array-api-") as tmp:
        workdir = Path(tmp)
        started = [(run, *start(run, args.max_examples, workdir)) for run in runs]
        for run, process, log in started:
            process.wait()
            log.close()
        results = {run[0]: collect(run, process, workdir) for run, process, _ in started}
    seconds = time.monotonic() - began

    union = set().union(*(r.keys() for r in results.values()))
    shares = {name: (sum(1 for o, _ in r.values() if o == "passed"), len(union))
              for name, r in results.items()}
    print(f"array API test suite, {SUITE_PIN}, standard {API_VERSION}, {scope()}, "
          f"--max-examples={args.max_examples}: {len(union)} tests, {seconds:.0f} s")
    for name, (passed, total) in shares.items():
        result = results[name]
        failed = sum(1 for o, _ in result.values() if o == "failed")
        skipped = sum(1 for o, _ in result.values() if o == "skipped")
        label = "NumPy " if name == "numpy" else "gpukit "
        print(f"  {label + name:14} {passed:5} passed ({100.0 * passed / total:5.1f}%), "
              f"{failed} failed, {skipped} skipped, {total - len(result)} not collected")

    if args.update_baseline:
        write_baseline(results, shares, args.max_examples)
        DOCS.write_text(docs_text())
        print(f"conformance: wrote {BASELINE.relative_to(SOURCE)} and {DOCS.relative_to(SOURCE)}")
        return

    known = read_baseline()
    problems = []
    for target in GPUKIT_TARGETS:
        if target not in results:
            continue
        for test, (outcome, reason) in sorted(results[target].items()):
            if outcome != "passed" and (target, test) not in known:
                problems.append(f"regression on {target}: {test}: {outcome}: {reason}")
        for (known_target, test) in sorted(known):
            if known_target != target:
                continue
            if test not in results[target]:
                problems.append(f"no longer collected on {target} (listed in the baseline): {test}")
            elif results[target][test][0] == "passed":
                problems.append(f"now passes on {target} (listed in the baseline): {test}")
    behind = []
    if args.require_numpy_share and "numpy" in shares:
        behind = [f"gpukit {t} passes {shares[t][0]} tests, NumPy {shares['numpy'][0]}"
                  for t in GPUKIT_TARGETS if t in shares and shares[t][0] < shares["numpy"][0]]
    for line in problems + behind:
        print(line)
    if problems:
        fail(f"{len(problems)} differences from the baseline; if they are improvements, run "
             "`python tests/conformance/array_api.py --update-baseline` and commit "
             "tests/conformance/baseline.txt and docs/ARRAY_API.md")
    if behind:
        fail("gpukit passes a smaller share of the suite than NumPy (--require-numpy-share, "
             "the CMake option GPUKIT_ARRAY_API_NUMPY_SHARE)")
    print("conformance: as the baseline says")


if __name__ == "__main__":
    main()
