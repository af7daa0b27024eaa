"""What the benchmarks share: which build to time, and percentiles."""
import math
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def default_build(command):
    """./build-rel (optimized) when its gpukit knows `command`, else ./build."""
    for name in ("build-rel", "build"):
        gpukit = ROOT / name / "gpukit"
        if gpukit.exists() and subprocess.run([str(gpukit), command, "--help"],
                                              capture_output=True).returncode == 0:
            return ROOT / name
    return ROOT / "build"


def percentile(values, p):
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]
