"""Benchmark: the CPU a process burns while it sits idle between ops, gpukit
against NumPy in the same run, on this machine.

Worker threads that spin after an op before they sleep take the cores from
whatever runs next: another library's threads, the next notebook cell, the
other users of a shared server. Each case runs an op, then sleeps PAUSE
seconds (--pause, default 20 ms), --repeat times, in a fresh process per side (so that one side's
threads cannot spin on the other's time); the figure is the CPU time the
process used while its one thread slept, divided by the time it slept:
the cores its other threads kept busy while idle (0 is ideal; the
machine's core count is the worst). The op's own time is printed too, to show that
sleeping sooner costs the op nothing.

    .venv/bin/python bench/idle_cpu_vs_numpy.py [--build DIR] [--repeat 40] [--pause 0.02]

Run it with the cores quiet (taskset -c 0,1 on an otherwise idle machine).
It asserts nothing: it prints numbers.
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path


CASES = {
    # name: (setup, op), for xp = gpukit or numpy
    "matmul 512 float64": ("a = xp.asarray(np.random.default_rng(0).standard_normal((512, 512)))",
                           "a @ a"),
    "add 2^22 float32": ("a = xp.asarray(np.ones(1 << 22, dtype=np.float32))", "a + a"),
    "sum 2^24 float32": ("a = xp.asarray(np.ones(1 << 24, dtype=np.float32))", "xp.sum(a)"),
}

CHILD = """
import json, os, resource, sys, time
import numpy as np
side, setup, op, repeat, pause = sys.argv[1:6]
if side == "gpukit":
    import gpukit as xp
else:
    xp = np
exec(setup)
run = compile(op, "op", "eval")
for _ in range(3):
    eval(run)
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
op_wall, slept, burnt = 0.0, 0.0, 0.0
for _ in range(int(repeat)):
    start = time.perf_counter()
    eval(run)
    op_wall += time.perf_counter() - start
    # this thread sleeps: what the process burns now is other threads'
    start, used = time.perf_counter(), cpu()
    time.sleep(float(pause))
    burnt += cpu() - used
    slept += time.perf_counter() - start
busy_idle = burnt / slept
print(json.dumps({"idle_cores": busy_idle, "op_ms": op_wall / int(repeat) * 1e3}))
"""


def measure(side, setup, op, repeat, pause, env):
    out = subprocess.run([sys.executable, "-c", CHILD, side, setup, op, str(repeat), str(pause)],
                         env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", type=Path, default=Path("build-rel"))
    parser.add_argument("--repeat", type=int, default=40, help="ops (and pauses) per case")
    parser.add_argument("--pause", type=float, default=0.02, help="seconds idle after each op")
    args = parser.parse_args()
    env = dict(os.environ)
    env["PYTHONPATH"] = str((args.build / "python").resolve())
    print("load average before:", " ".join(f"{x:.2f}" for x in os.getloadavg()))
    print(f"cores kept busy while the process sleeps {args.pause * 1e3:g} ms after each op "
          f"(0 is ideal); {len(os.sched_getaffinity(0))} cores")
    print(f"{'case':22s} {'gpukit idle':>12s} {'NumPy idle':>11s} {'gpukit op ms':>13s} "
          f"{'NumPy op ms':>12s}")
    for name, (setup, op) in CASES.items():
        ours = measure("gpukit", setup, op, args.repeat, args.pause, env)
        theirs = measure("numpy", setup, op, args.repeat, args.pause, env)
        print(f"{name:22s} {ours['idle_cores']:12.2f} {theirs['idle_cores']:11.2f} "
              f"{ours['op_ms']:13.2f} {theirs['op_ms']:12.2f}")
    print("load average after:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
