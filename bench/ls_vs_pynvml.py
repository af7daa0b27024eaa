"""Benchmark: `gpukit ls --json` against the equivalent nvidia-ml-py script
(bench/pynvml_ls.py), each timed as a whole process, side by side in one run.

Without a GPU both read the fake NVML's 8xH100 scenario. On a machine with a
GPU (--real), both read the real driver and `nvidia-smi --query-gpu` joins.

    python3 bench/ls_vs_pynvml.py [--build build] [--runs 40] [--real]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SMI_FIELDS = ("index,name,uuid,pci.bus_id,memory.total,memory.used,memory.free,"
              "utilization.gpu,utilization.memory,temperature.gpu,fan.speed,power.draw,"
              "enforced.power.limit,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,"
              "compute_cap,persistence_mode,mig.mode.current")


def median_ms(command, env, runs):
    subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)  # warm the caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build", help="gpukit build directory")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--real", action="store_true", help="use the real NVIDIA driver")
    args = parser.parse_args()
    build = Path(args.build).resolve()

    env = dict(os.environ)
    if not args.real:
        fake = build / "tests" / "fake_nvml"
        env.update(GPUKIT_NVML_LIBRARY=str(fake / "libnvidia-ml.so.1"),
                   LD_LIBRARY_PATH=str(fake),
                   FAKE_NVML_SCENARIO=str(HERE.parent / "tests" / "scenarios" / "h100x8.scn"))
    contenders = [
        ("gpukit ls --json", [str(build / "gpukit"), "ls", "--json"]),
        ("nvidia-ml-py script", [sys.executable, str(HERE / "pynvml_ls.py")]),
    ]
    if args.real and shutil.which("nvidia-smi"):
        contenders.append(("nvidia-smi --query-gpu",
                           ["nvidia-smi", f"--query-gpu={SMI_FIELDS}",
                            "--format=csv,noheader,nounits"]))

    print(f"{'program':<26} {'median ms':>10} {'gpukit is':>12}   "
          f"({args.runs} runs each, {'real driver' if args.real else 'fake NVML, 8xH100'})")
    results = [(name, median_ms(cmd, env, args.runs)) for name, cmd in contenders]
    ours = results[0][1]
    for name, ms in results:
        ratio = "" if name == results[0][0] else f"{ms / ours:.1f}x faster"
        print(f"{name:<26} {ms:>10.2f} {ratio:>12}")


if __name__ == "__main__":
    main()
