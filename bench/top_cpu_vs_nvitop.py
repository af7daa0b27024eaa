"""Benchmark: what a live GPU view costs the machine it watches. `gpukit top`
and nvitop (the Python peer, from PyPI), each refreshing every second in a
120x40 terminal (tmux) on the fake NVML's 8xH100 scenario, side by side in
one run; and `gpukit serve` reading every second with no client. The figure
is the CPU time each process used over the window, as a share of one core.

    python3 bench/top_cpu_vs_nvitop.py [--build build-rel] [--seconds 30] [--nvitop PATH]

nvitop: `python3 -m venv /tmp/nv && /tmp/nv/bin/pip install nvitop`, then
--nvitop /tmp/nv/bin/nvitop (skipped when not given and not on PATH).
"""
import argparse
import os
import shutil
import subprocess
import time
import uuid
from pathlib import Path

from benchlib import default_build

HERE = Path(__file__).resolve().parent
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def measure_in_terminal(command, env, seconds, warmup=3):
    """Runs `command` in a tmux window of its own; its share of one core."""
    socket = f"gpukit-bench-{uuid.uuid4().hex[:8]}"
    tmux = ["tmux", "-L", socket]
    subprocess.run([*tmux, "new-session", "-d", "-s", "b", "-x", "120", "-y", "40",
                    "exec " + command], env=env, check=True)
    try:
        pid = int(subprocess.run([*tmux, "display", "-p", "-t", "b", "#{pane_pid}"],
                                 capture_output=True, text=True, check=True).stdout)
        return measure(pid, seconds, warmup)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


def measure(pid, seconds, warmup):
    time.sleep(warmup)
    start, used = time.monotonic(), cpu_seconds(pid)
    time.sleep(seconds)
    return 100 * (cpu_seconds(pid) - used) / (time.monotonic() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=None)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--nvitop", default=shutil.which("nvitop"))
    args = parser.parse_args()
    build = (args.build or default_build("top")).resolve()
    fake = build / "tests" / "fake_nvml"
    env = dict(os.environ, GPUKIT_NVML_LIBRARY=str(fake / "libnvidia-ml.so.1"),
               LD_LIBRARY_PATH=str(fake), LANG="C.UTF-8",
               FAKE_NVML_SCENARIO=str(HERE.parent / "tests" / "scenarios" / "h100x8.scn"))

    results = [("gpukit top --interval 1",
                measure_in_terminal(f"{build / 'gpukit'} top --interval 1", env, args.seconds))]
    if args.nvitop:
        results.append(("nvitop --interval 1",
                        measure_in_terminal(f"{args.nvitop} --interval 1", env, args.seconds)))
    serve = subprocess.Popen([str(build / "gpukit"), "serve", "--listen", "127.0.0.1:0"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        results.append(("gpukit serve (no client)", measure(serve.pid, args.seconds, 3)))
    finally:
        serve.terminate()
        serve.wait()
    load = os.getloadavg()
    print(f"{'program':<28} {'% of a core':>12}   ({args.seconds:g} s each, 8xH100 fake NVML)")
    for name, percent in results:
        print(f"{name:<28} {percent:>11.3f}%")
    if len(results) == 3:
        print(f"gpukit top uses {results[1][1] / max(results[0][1], 1e-9):.0f}x less CPU than "
              f"nvitop")
    print(f"(load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f})")


if __name__ == "__main__":
    main()
