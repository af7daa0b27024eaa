"""`gpukit pick`: orders, filters, N/A values, the CUDA_VISIBLE_DEVICES
restriction, MIG, output formats and bad input, on the fake NVML."""
import json

import pytest

from conftest import (EXIT_DRIVER, EXIT_NO_GPU, EXIT_OK, EXIT_USAGE, run,
                      scenario_env, base_env)

EXIT_BUSY = 5
H100 = {3: "GPU-e184d64f-6a57-4c38-bb05-774e6080de8b",
        6: "GPU-41f31581-2ed2-4822-b893-267c7ee27b7b"}


def pci(indices):
    """How --format=index writes nvidia-smi's numbers: "3,0:1" -> "pci:3,pci:0:1"."""
    return ",".join(f"pci:{i}" for i in indices.split(","))


@pytest.fixture
def pick(tmp_path):
    """pick(args, scenario=..., **env); --format=index unless args name one."""
    def call(args, scenario="h100x8", **env):
        e = scenario_env(tmp_path, scenario) if scenario else base_env(tmp_path)
        e["GPUKIT_LEASE_DIR"] = str(tmp_path / "leases")
        e.update(env)
        if not any(a.startswith("--format") for a in args):
            args = [*args, "--format=index"]
        return run(["pick", *args], e)
    return call


# h100x8 free memory (GiB): 0: 40.4, 1: 40.4, 2: 8.8, 3: 79.1, 4: 64.1,
# 5: 64.1, 6: 71.7, 7: 20.5; utilization 87 85 100 0 34 31 12 99; power
# draw/limit lowest on 3, then 6; processes 1 1 2 0 1 1 1 2.
@pytest.mark.parametrize("args, expected", [
    ([], "3"),
    (["--count", "3"], "3,6,4"),
    (["-n", "8"], "3,6,4,5,0,1,7,2"),
    (["--order", "free-ratio", "-n", "2"], "3,6"),
    (["--order", "util", "-n", "4"], "3,6,5,4"),
    (["--order", "power", "-n", "2"], "3,6"),
    (["--order", "index"], "0"),
    (["--order", "index", "--min-free", "50G"], "3"),
    (["--min-free", "75G"], "3"),
    (["--min-free", "60GiB", "-n", "4"], "3,6,4,5"),
    (["--min-free-ratio", "50%", "-n", "4"], "3,6,4,5"),
    (["--max-util", "40", "-n", "4"], "3,6,4,5"),
    (["--max-util", "40%", "-n", "4"], "3,6,4,5"),  # a percentage, as --min-free-ratio
    (["--max-procs", "0"], "3"),
    (["--max-procs", "1", "-n", "6"], "3,6,4,5,0,1"),
    (["--min-total", "79G"], "3"),
    (["--gpus", "0,1,2", "--order", "index"], "0"),
    (["--gpus", "GPU-41f3"], "6"),
    (["--exclude", "3,6"], "4"),
    (["--exclude", "GPU-e184d64f"], "6"),
])
def test_orders_and_filters(pick, args, expected):
    result = pick(args)
    assert result.returncode == EXIT_OK, result.stderr
    assert result.stdout.strip() == pci(expected)


def test_random_order_is_seeded_and_varies(pick):
    picks = {pick(["--order", "random", "--seed", str(seed)]).stdout for seed in range(12)}
    assert len(picks) > 1
    assert pick(["--order", "random", "--seed", "5"]).stdout == \
        pick(["--order", "random", "--seed", "5"]).stdout


def test_not_enough_gpus(pick):
    result = pick(["--min-free", "80G"])
    assert result.returncode == EXIT_BUSY
    assert result.stdout == ""
    assert "not enough GPUs" in result.stderr
    assert "GPU 3: 79.1 GiB free, less than --min-free 80.0 GiB" in result.stderr
    result = pick(["-n", "3", "--max-util", "20"])
    assert result.returncode == EXIT_BUSY
    assert "wanted 3 device(s), 2 fit" in result.stderr


def test_unavailable_fields_sort_last_and_fail_filters(pick):
    # The vGPU has no utilization, power or temperature: it is still picked,
    # but a filter that needs utilization cannot pass.
    for order in ("free", "free-ratio", "power", "util", "index", "random"):
        result = pick(["--order", order], scenario="notsupported")
        assert result.returncode == EXIT_OK, result.stderr
        assert result.stdout.strip() == pci("0")
    result = pick(["--max-util", "50"], scenario="notsupported")
    assert result.returncode == EXIT_BUSY
    assert "utilization is unknown" in result.stderr


def test_lost_gpus_are_never_picked(pick):
    result = pick(["-n", "2", "--order", "index"], scenario="lost")
    assert result.stdout.strip() == pci("0,2")
    assert pick(["-n", "3"], scenario="lost").returncode == EXIT_BUSY
    # A lost GPU named by --gpus (or left by --exclude) is named as the
    # cause, with the driver's word on it, not --gpus or --exclude.
    for args in (["--gpus", "1"], ["--exclude", "0,2"]):
        result = pick(args, scenario="lost")
        assert result.returncode == EXIT_BUSY
        assert "GPU 1 is lost: GPU is lost" in result.stderr, result.stderr
        assert "--gpus" not in result.stderr and "--exclude" not in result.stderr


def test_cuda_visible_devices_limits_the_choice(pick):
    assert pick([], CUDA_VISIBLE_DEVICES="1,2").stdout.strip() == pci("1")
    assert pick([], CUDA_VISIBLE_DEVICES=H100[6]).stdout.strip() == pci("6")
    assert pick(["-n", "2"], CUDA_VISIBLE_DEVICES="7,2,0").stdout.strip() == pci("0,7")
    result = pick(["-n", "3"], CUDA_VISIBLE_DEVICES="1,2")
    assert result.returncode == EXIT_BUSY
    result = pick([], CUDA_VISIBLE_DEVICES="")
    assert result.returncode == EXIT_BUSY
    assert "no device is usable by this process: CUDA_VISIBLE_DEVICES hides" in result.stderr
    assert "waiting cannot help" in result.stderr and "hint" not in result.stderr


def test_mig_devices_are_candidates(pick):
    # GPU 1 (MIG off, 19.6 GiB free) beats the biggest MIG slice (9.9 GiB).
    assert pick([], scenario="mig").stdout.strip() == pci("1")
    assert pick(["--gpus", "0"], scenario="mig").stdout.strip() == pci("0:0")
    assert pick(["--gpus", "0", "--order", "free", "--exclude", "0:0"],
                scenario="mig").stdout.strip() == pci("0:1")
    uuid = pick(["--gpus", "0", "--format", "uuid"], scenario="mig").stdout.strip()
    assert uuid == "MIG-ae01685a-5cec-43d1-baa4-e3e9ec71e542"
    result = pick(["-n", "2"], scenario="mig")
    assert result.returncode == EXIT_BUSY
    assert "only one MIG device" in result.stderr


def test_formats(pick):
    assert pick(["--format", "uuid"]).stdout.strip() == H100[3]
    assert pick(["--format", "uuid", "-n", "2"]).stdout.strip() == f"{H100[3]},{H100[6]}"
    assert pick(["--format", "env"]).stdout == f"export CUDA_VISIBLE_DEVICES={H100[3]}\n"
    data = json.loads(pick(["--format", "json", "-n", "2", "--min-free", "70G"]).stdout)
    assert data["fits"] is True
    assert [d["index"] for d in data["devices"]] == [3, 6]
    assert data["devices"][0]["memory.free"] == 81559 - 531
    assert len(data["candidates"]) == 8
    assert data["candidates"][7]["rejected"].startswith("8.8 GiB free")
    failed = pick(["--format", "json", "--min-free", "80G"])
    assert failed.returncode == EXIT_BUSY
    data = json.loads(failed.stdout)
    assert data["fits"] is False and data["devices"] == [] and "80.0 GiB" in data["why"]


def test_verbose_lists_every_candidate(pick):
    result = pick(["-v", "--min-free", "30G"])
    assert result.stdout.strip() == pci("3")
    lines = result.stderr.splitlines()
    assert len(lines) == 8
    assert "chosen" in lines[0] and "pci:3" in lines[0]
    assert "less than --min-free 30.0 GiB" in lines[-1]


@pytest.mark.parametrize("args, message", [
    (["--min-free", "20X"], "unknown unit"),
    (["--min-free", "-1G"], "not a size"),
    (["--min-free", ""], "empty size"),
    (["--min-free", "1.5"], "must be whole"),
    (["--min-total", "lots"], "not a size"),
    (["--count", "0"], "--count"),
    (["--count", "two"], "--count"),
    (["--order", "fastest"], "unknown order"),
    (["--max-util", "101"], "--max-util"),
    (["--max-procs", "-1"], "--max-procs"),
    (["--min-free-ratio", "150%"], "more than 100%"),
    (["--gpus", "9"], "no GPU 9"),
    (["--exclude", "GPU-ffff"], "not the UUID"),
    (["--gpus", "3:1"], "no MIG device"),
    (["--gpus="], "--gpus: name at least one GPU"),
    (["--gpus", " , "], "--gpus: name at least one GPU"),
    (["--format", "xml"], "--format"),
    (["--share", "--exclusive"], "--exclusive: the reservation is shared already"),
    (["--exclusive", "--share"], "--share: the reservation is exclusive already"),
    (["--frobnicate"], "gpukit pick: unrecognized option '--frobnicate'"),
    (["extra"], "unexpected argument"),
])
def test_bad_usage(pick, args, message):
    result = pick(args)
    assert result.returncode == EXIT_USAGE
    assert message in result.stderr
    assert result.stdout == ""


def test_no_gpu_and_driver_problems(pick):
    result = pick([], scenario=None)
    assert result.returncode == EXIT_NO_GPU
    assert "no GPU" in result.stderr
    result = pick([], scenario="driver_not_loaded")
    assert result.returncode == EXIT_DRIVER
    assert result.stderr.strip()


@pytest.mark.parametrize("scenario, code, words", [
    (None, EXIT_NO_GPU, "no NVIDIA driver found"),
    ("empty", EXIT_NO_GPU, "reports no GPU"),
    ("driver_not_loaded", EXIT_DRIVER, "kernel driver is not loaded"),
])
def test_json_without_a_usable_gpu(pick, scenario, code, words):
    """--format=json prints a document (the keys of every pick document, with
    ls --json's diagnosis) when there is no GPU or the driver fails."""
    result = pick(["--format=json"], scenario=scenario)
    assert result.returncode == code
    data = json.loads(result.stdout)
    assert data["fits"] is False and data["devices"] == [] and data["candidates"] == []
    assert words in data["diagnosis"] and words in data["why"]
    assert set(data) == set(json.loads(pick(["--format=json"]).stdout))
    assert json.loads(pick(["--format=json"]).stdout)["diagnosis"] is None


def test_json_when_the_lease_directory_is_unsafe(pick, tmp_path):
    """An unsafe lease directory (a file, here) is exit 7 with the document
    too, its `why` naming the problem."""
    (tmp_path / "not-a-dir").write_text("")
    result = pick(["--format=json"], GPUKIT_LEASE_DIR=str(tmp_path / "not-a-dir"))
    assert result.returncode == 7
    data = json.loads(result.stdout)
    assert data["fits"] is False and "not a directory" in data["why"]


# A machine of mixed GPUs, the one where nvidia-smi's numbers and CUDA's
# default (FASTEST_FIRST) numbers differ: PCI order T4, A100, T4; the first
# T4 has the most free memory.
MIXED = (
    'gpu name="Tesla T4" uuid=GPU-aaaaaaaa-0000-0000-0000-000000000000 pci=00000000:03:00.0 '
    'mem_total=15360 mem_used=100 cc=7.5\n'
    'gpu name="NVIDIA A100-PCIE-40GB" uuid=GPU-bbbbbbbb-0000-0000-0000-000000000000 '
    'pci=00000000:41:00.0 mem_total=40960 mem_used=39000 cc=8.0\n'
    'gpu name="Tesla T4" uuid=GPU-cccccccc-0000-0000-0000-000000000000 pci=00000000:81:00.0 '
    'mem_total=15360 mem_used=15000 cc=7.5\n')


@pytest.mark.parametrize("order", [None, "FASTEST_FIRST", "PCI_BUS_ID"])
def test_pasted_pick_is_the_gpu_cuda_uses(tmp_path, order):
    """CUDA_VISIBLE_DEVICES=$(gpukit pick) must give the job the GPU pick
    chose, whatever CUDA_DEVICE_ORDER the job runs under. Which GPU a CUDA
    program sees as cuda:0 is what `gpukit info` resolves (probe/visible.c)."""
    scenario = tmp_path / "mixed.scn"
    scenario.write_text(MIXED)
    env = scenario_env(tmp_path, str(scenario))
    env.pop("CUDA_DEVICE_ORDER", None)
    chosen = run(["pick"], env)
    assert chosen.returncode == EXIT_OK, chosen.stderr
    assert chosen.stdout.strip() == "GPU-aaaaaaaa-0000-0000-0000-000000000000"
    job = dict(env, CUDA_VISIBLE_DEVICES=chosen.stdout.strip())
    if order:
        job["CUDA_DEVICE_ORDER"] = order
    info = json.loads(run(["info", "--json"], job).stdout)
    assert [d["uuid"] for d in info["cuda_devices"]] == [chosen.stdout.strip()]


def test_index_output_says_its_numbering(tmp_path):
    """The index form is nvidia-smi's numbering and says so; pasted into
    CUDA_VISIBLE_DEVICES it names no GPU rather than a wrong one."""
    scenario = tmp_path / "mixed.scn"
    scenario.write_text(MIXED)
    env = scenario_env(tmp_path, str(scenario))
    label = run(["pick", "--format=index"], env).stdout.strip()
    assert label == "pci:0"
    again = run(["pick", "--gpus", label, "--format=uuid"], env)
    assert again.stdout.strip() == "GPU-aaaaaaaa-0000-0000-0000-000000000000"
    info = json.loads(run(["info", "--json"], dict(env, CUDA_VISIBLE_DEVICES=label)).stdout)
    assert info["cuda_devices"] == []
