"""`gpukit ls --json` against gpustat's own JSON writer: gpustat (installed in
the test venv) and gpukit read the same fake NVML, and every key gpukit
shares with gpustat must have gpustat's value and unit."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import EXIT_OK, FAKE_NVML, ls_json

GPUSTAT = Path(sys.executable).with_name("gpustat")
# Keys whose values are samples of something that moves: compared by type.
SAMPLED = {"query_time", "cpu_percent"}


def gpustat_json(tmp_path, scenario):
    """gpustat --json with pynvml loading the fake NVML from LD_LIBRARY_PATH."""
    lib = tmp_path / "nvml"
    lib.mkdir()
    shutil.copy(FAKE_NVML, lib / "libnvidia-ml.so.1")
    env = dict(os.environ, LD_LIBRARY_PATH=str(lib), FAKE_NVML_SCENARIO=str(scenario))
    result = subprocess.run([str(GPUSTAT), "--json"], env=env, capture_output=True, text=True,
                            timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def compare(ours, theirs, where):
    for key, want in theirs.items():
        assert key in ours, f"{where}: gpustat's key {key!r} is missing"
        got = ours[key]
        if key in SAMPLED:
            assert type(got) is type(want), f"{where}.{key}: {got!r} vs gpustat's {want!r}"
        elif key == "cpu_memory_usage":
            # gpustat: round(memory_percent / 100 * total) = the RSS in bytes,
            # read a moment apart from ours; the unit is what matters.
            assert abs(got - want) <= max(want // 20, 1 << 20), f"{where}.{key}: {got} vs {want}"
        elif key == "processes":
            assert len(got) == len(want), where
            for proc in want:
                mine = next(p for p in got if p["pid"] == proc["pid"])
                compare(mine, proc, f"{where}.pid {proc['pid']}")
        else:
            assert got == want, f"{where}.{key}: {got!r} but gpustat writes {want!r}"


def test_every_gpustat_key_has_gpustat_value_and_unit(gk, tmp_path):
    assert GPUSTAT.exists(), f"{GPUSTAT} is missing: tools/check installs gpustat into the venv"
    # Live processes, since gpustat leaves out pids that do not exist here.
    sleepers = [subprocess.Popen(["sleep", "60"]) for _ in range(2)]
    try:
        scenario = tmp_path / "compat.scn"
        scenario.write_text(
            'system driver=550.54.15 nvml=12.550.54.15 cuda=12040\n'
            'gpu name="NVIDIA A100-SXM4-80GB" uuid=GPU-11111111-2222-3333-4444-555555555555 '
            'pci=00000000:07:00.0 mem_total=81920 mem_used=40000 mem_reserved=531 temp=55 '
            'util_gpu=40 util_mem=20 enc=3 dec=4 power=250.5 power_limit=400 fan=35\n'
            f'proc type=compute pid={sleepers[0].pid} mem=1025\n'
            f'proc type=graphics pid={sleepers[1].pid} mem=na\n'
            'gpu name="NVIDIA A100-SXM4-80GB" uuid=GPU-66666666-2222-3333-4444-555555555555 '
            'pci=00000000:0F:00.0 mem_total=81920 mem_used=2 temp=31 util_gpu=0 util_mem=0 '
            'power=61.999 power_limit=400\n')
        theirs = gpustat_json(tmp_path, scenario)
        result, ours = ls_json(gk, str(scenario))
        assert result.returncode == EXIT_OK, result.stderr
    finally:
        for s in sleepers:
            s.kill()
            s.wait()
    assert sum(len(g["processes"]) for g in theirs["gpus"]) == 2, "gpustat saw the sleepers"
    gpus = theirs.pop("gpus")
    compare(ours, theirs, "top level")
    assert len(ours["gpus"]) == len(gpus)
    for mine, want in zip(ours["gpus"], gpus):
        compare(mine, want, f"gpu {want['index']}")
