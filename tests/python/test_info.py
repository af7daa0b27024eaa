"""`gpukit info`: is a GPU usable and which device is cuda:0, with
CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER applied as CUDA applies them."""
import json

from conftest import EXIT_DRIVER, EXIT_NO_GPU, EXIT_OK, parse_scenario


def info(gk, scenario, **env):
    result = gk(["info", "--json"], scenario=scenario, env=env)
    return result.returncode, json.loads(result.stdout)


def test_all_gpus_visible(gk):
    code, data = info(gk, "h100x8")
    assert code == EXIT_OK
    assert data["gpu_usable"] is True and data["gpu_count"] == 8
    assert data["device"] == "cuda:0"
    assert [d["index"] for d in data["cuda_devices"]] == list(range(8))
    assert data["driver_version"] == "550.54.15" and data["cuda_driver_version"] == "12.4"


def test_visible_devices_reorders(gk):
    _, gpus = parse_scenario("h100x8")
    code, data = info(gk, "h100x8", CUDA_VISIBLE_DEVICES="5,2")
    assert code == EXIT_OK
    assert [d["index"] for d in data["cuda_devices"]] == [5, 2]
    assert data["cuda_devices"][0]["uuid"] == gpus[5]["uuid"]
    text = gk(["info"], scenario="h100x8", env={"CUDA_VISIBLE_DEVICES": "5,2"}).stdout
    assert "cuda:0   = GPU 5" in text and "cuda:1   = GPU 2" in text
    ls = json.loads(gk(["ls", "--json"], scenario="h100x8",
                       env={"CUDA_VISIBLE_DEVICES": "5,2"}).stdout)
    assert [g["cuda_index"] for g in ls["gpus"]] == [None, None, 1, None, None, 0, None, None]


def test_visible_devices_by_uuid_prefix(gk):
    _, gpus = parse_scenario("h100x8")
    code, data = info(gk, "h100x8", CUDA_VISIBLE_DEVICES=gpus[7]["uuid"][:12])
    assert [d["index"] for d in data["cuda_devices"]] == [7]


def test_invalid_entry_ends_the_list(gk):
    code, data = info(gk, "h100x8", CUDA_VISIBLE_DEVICES="1,9,2")
    assert [d["index"] for d in data["cuda_devices"]] == [1]
    assert "entry 2" in data["note"]


def test_everything_hidden_means_cpu(gk):
    code, data = info(gk, "h100x8", CUDA_VISIBLE_DEVICES="")
    assert code == EXIT_NO_GPU
    assert data["gpu_usable"] is False and data["device"] == "cpu"
    text = gk(["info"], scenario="h100x8", env={"CUDA_VISIBLE_DEVICES": ""}).stdout
    assert "hides" in text and "Use device:    cpu" in text


def test_mig_device_is_cuda0(gk):
    _, gpus = parse_scenario("mig")
    code, data = info(gk, "mig")
    assert data["cuda_device_count"] == 1
    assert data["cuda_devices"][0]["uuid"] == gpus[0]["migs"][0]["uuid"]
    assert data["cuda_devices"][0]["mig_index"] == 0


def test_quiet_answers_with_exit_status(gk):
    assert gk(["info", "-q"], scenario="laptop").returncode == EXIT_OK
    assert gk(["info", "-q"], scenario="laptop").stdout == ""
    assert gk(["info", "-q"]).returncode == EXIT_NO_GPU


def test_no_gpu_says_use_cpu(gk):
    result = gk(["info"])
    assert result.returncode == EXIT_NO_GPU
    assert "GPU usable:    no" in result.stdout
    assert "Use device:    cpu" in result.stdout


def test_faulty_gpus_are_in_the_json(gk):
    """The text lists lost GPUs ("2 of 4 GPU(s)", "Faulty GPU:"); so does the JSON."""
    code, data = info(gk, "lost")
    assert code == EXIT_DRIVER
    assert data["gpu_count"] == 2 and data["gpu_total"] == 4
    faulty = data["faulty_gpus"]
    assert [(f["index"], f["state"]) for f in faulty] == [(1, "lost"), (3, "error")]
    assert "GPU is lost" in faulty[0]["error"] and "Unknown Error" in faulty[1]["error"]
    code, data = info(gk, "h100x8")
    assert data["gpu_total"] == 8 and data["faulty_gpus"] == []
