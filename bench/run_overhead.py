"""Benchmark: what `gpukit run` costs a job, on the fake NVML's 8xH100 scenario.

(a) launch overhead: `gpukit run -- true` against a bare exec (`env true`,
    which starts and execs the job as gpukit run does) and `true` itself, and
    `gpukit --version` against `true`; each timed as a whole process,
    interleaved run by run, with a fresh lease directory;
(b) a burst: many `gpukit run -v --wait=120 -- sleep 0.2` started at once on
    the 8 GPUs: total wall time, and the lock wait and hold times each run's
    -v line reports.

It builds nothing and asserts nothing: it prints numbers and ratios.

    python3 bench/run_overhead.py [--gpukit PATH] [--fake-nvml PATH] [--runs 100]
                                  [--jobs 200] [--sleep 0.2]
"""
import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path

from benchlib import default_build, percentile

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SCENARIO = ROOT / "tests" / "scenarios" / "h100x8.scn"
VERBOSE_LINE = re.compile(r"gpukit run: chose (\S+) .*lock waited ([0-9.]+) ms, held ([0-9.]+) ms")


def timed_ms(command, env):
    start = time.perf_counter()
    result = subprocess.run(command, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = (time.perf_counter() - start) * 1000
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}): "
                         f"{result.stderr.decode(errors='replace').strip()}")
    return elapsed


def launch_overhead(gpukit, env, runs):
    true, wrapper = shutil.which("true"), shutil.which("env")
    contenders = [("true", [true]),
                  ("env true", [wrapper, true]),
                  ("gpukit --version", [str(gpukit), "--version"]),
                  ("gpukit run -- true", [str(gpukit), "run", "--", true])]
    for _, command in contenders:  # warm the caches (and create the lease directory)
        timed_ms(command, env)
    times = {name: [] for name, _ in contenders}
    for i in range(runs):  # interleaved, alternating which goes first
        for name, command in (contenders if i % 2 == 0 else contenders[::-1]):
            times[name].append(timed_ms(command, env))

    print(f"(a) launch overhead, {runs} runs each, interleaved")
    print(f"    {'program':<22} {'median ms':>10} {'p90 ms':>10}")
    for name, values in times.items():
        print(f"    {name:<22} {statistics.median(values):>10.2f} {percentile(values, 90):>10.2f}")
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"    gpukit --version costs {median['gpukit --version'] / median['true']:.2f}x a bare "
          f"`true` (a command that computes nothing loads no compute library)")
    # `env true` is a bare exec: a process that starts and execs the job, which
    # is what `gpukit run` does once it has reserved the GPU.
    for base in ("env true", "true"):
        added = median["gpukit run -- true"] - median[base]
        added_p90 = percentile(times["gpukit run -- true"], 90) - percentile(times[base], 90)
        print(f"    gpukit run -- true adds {added:.2f} ms to `{base}` at the median "
              f"({added_p90:.2f} ms at p90)")


def burst(gpukit, env, jobs, sleep, wait):
    command = [str(gpukit), "run", "-v", f"--wait={wait}", "--", shutil.which("sleep"),
               str(sleep)]
    start = time.perf_counter()
    procs = [subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for _ in range(jobs)]
    launched = time.perf_counter() - start
    results = [(p, p.communicate()[1]) for p in procs]  # -v output is tiny: no pipe stalls
    total = time.perf_counter() - start

    waited, held, chosen, failures = [], [], Counter(), []
    for proc, stderr in results:
        match = VERBOSE_LINE.search(stderr)
        if proc.returncode != 0 or not match:
            failures.append((proc.returncode, stderr.strip().splitlines()[-1:] or ["(no output)"]))
            continue
        chosen[match.group(1)] += 1
        waited.append(float(match.group(2)))
        held.append(float(match.group(3)))

    gpus = sum(line.startswith("gpu ") for line in SCENARIO.read_text().splitlines())
    ideal = math.ceil(jobs / gpus) * sleep
    print(f"\n(b) {jobs} x `gpukit run -v --wait={wait} -- sleep {sleep}` started at once "
          f"on {gpus} GPUs")
    print(f"    total wall time {total:.2f} s (started all in {launched:.2f} s); "
          f"{ideal:.1f} s if the GPUs never idled: {total / ideal:.2f}x that")
    print(f"    failed runs: {len(failures)}")
    for code, last in failures[:5]:
        print(f"      exit {code}: {last[0]}")
    if waited:
        print(f"    {'from the -v lines, ms':<24} {'p50':>8} {'p99':>8} {'max':>8}")
        for name, values in (("lock waited", waited), ("lock held", held)):
            print(f"    {name:<24} {percentile(values, 50):>8.2f} {percentile(values, 99):>8.2f} "
                  f"{max(values):>8.2f}")
        spread = ", ".join(str(n) for _, n in sorted(chosen.items()))
        print(f"    jobs per GPU: {spread} ({len(chosen)} GPUs used)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    build = default_build("run")
    parser.add_argument("--gpukit", type=Path, default=build / "gpukit",
                        help="the gpukit to measure (default: %(default)s)")
    parser.add_argument("--fake-nvml", type=Path,
                        default=build / "tests" / "fake_nvml" / "libnvidia-ml.so.1",
                        help="the fake libnvidia-ml.so.1 (default: %(default)s)")
    parser.add_argument("--runs", type=int, default=100, help="runs each in (a)")
    parser.add_argument("--jobs", type=int, default=200, help="jobs started at once in (b)")
    parser.add_argument("--sleep", type=float, default=0.2, help="seconds each job in (b) runs")
    parser.add_argument("--wait", default="120", help="--wait timeout of the jobs in (b)")
    args = parser.parse_args()

    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUDA_", "NVIDIA_", "GPUKIT_", "FAKE_"))}
    env.update(GPUKIT_NVML_LIBRARY=str(args.fake_nvml.resolve()),
               FAKE_NVML_SCENARIO=str(SCENARIO))
    print(f"gpukit {args.gpukit.resolve()}, fake NVML {args.fake_nvml.resolve()}, "
          f"8xH100 scenario, {os.cpu_count()} CPUs\n")
    with tempfile.TemporaryDirectory(prefix="gpukit-bench-") as scratch:
        env["GPUKIT_LEASE_DIR"] = str(Path(scratch) / "leases-a")
        launch_overhead(args.gpukit, env, args.runs)
        env["GPUKIT_LEASE_DIR"] = str(Path(scratch) / "leases-b")
        burst(args.gpukit, env, args.jobs, args.sleep, args.wait)


if __name__ == "__main__":
    main()
