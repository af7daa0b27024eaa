"""The tutorial notebooks (examples/notebooks/*.ipynb), each executed top to
bottom with nbclient on a "Python 3 [GPU]" kernel installed by `gpukit kernel
install`, as a user would run them.

Each test has a Jupyter world of its own in tmp_path (the kernelspec under
--prefix, found through JUPYTER_PATH; data, runtime, config and IPython
directories; HOME), a private lease directory and the fake NVML serving
8 x H100. The kernel starts through `gpukit run`, so it reserves a fake GPU
and gets CUDA_VISIBLE_DEVICES; there is no libcuda, so arrays run on the
CPU and on PoCL's OpenCL device. jupyter_client hands the test process's
environment to the kernel, so os.environ is swapped (monkeypatch) before the
kernel starts; PYTHONPATH in it makes the kernel import gpukit from the
build tree. The notebooks check their own results with asserts; a failing
cell fails its test with that cell's source and output."""
import json
import os
import subprocess
import sys

import pytest

import gpukit
from conftest import GPUKIT_CLI, SOURCE, child_env

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = sorted((SOURCE / "examples" / "notebooks").glob("*.ipynb"))
KERNEL_NAME = "python3-gpu"

# What the kernel reports after the notebook: proof that it ran as a
# gpukit kernel (a reserved GPU in CUDA_VISIBLE_DEVICES) on our gpukit.
PROBE_CELL = """
import json, os, gpukit
print("GPUKIT-PROBE " + json.dumps({
    "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
    "gpukit": os.path.dirname(gpukit.__file__),
}))
"""


@pytest.fixture(scope="module")
def kernel_cache(tmp_path_factory):
    """One compiled-kernel cache for all the notebooks: PoCL compiles each
    built-in kernel once, not once per notebook."""
    return tmp_path_factory.mktemp("kernel-cache")


def jupyter_env(tmp_path, scenario, kernel_cache):
    """A private Jupyter world and gpukit setup for one notebook run."""
    (tmp_path / "empty-path").mkdir(exist_ok=True)
    env = child_env(tmp_path, scenario)
    for key in [k for k in env if k.startswith(("JUPYTER", "IPYTHON", "XDG_", "CONDA_"))
                or k in ("VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONHOME")]:
        del env[key]
    dirs = {name: tmp_path / "jupyter" / name
            for name in ("home", "ipython", "data", "runtime", "config", "prefix")}
    for path in dirs.values():
        path.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(dirs["home"]), IPYTHONDIR=str(dirs["ipython"]),
               JUPYTER_DATA_DIR=str(dirs["data"]), JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
               JUPYTER_CONFIG_DIR=str(dirs["config"]),
               JUPYTER_PATH=str(dirs["prefix"] / "share" / "jupyter"),
               GPUKIT_CACHE_DIR=str(kernel_cache),
               # PoCL keeps its own cache under HOME: keep it where it was.
               POCL_CACHE_DIR=os.environ.get(
                   "POCL_CACHE_DIR", os.path.expanduser("~/.cache/pocl/kcache")),
               OMP_WAIT_POLICY="passive")
    return env, dirs["prefix"]


def install_kernel(env, prefix):
    result = subprocess.run([str(GPUKIT_CLI), "kernel", "install", "--prefix", str(prefix),
                             "--python", sys.executable], env=env, capture_output=True,
                            text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stdout + result.stderr
    spec_file = prefix / "share" / "jupyter" / "kernels" / KERNEL_NAME / "kernel.json"
    spec = json.loads(spec_file.read_text())
    assert spec["display_name"] == "Python 3 [GPU]"
    assert spec["argv"][:2] == [str(GPUKIT_CLI), "run"], spec["argv"]
    return spec


def use_environment(monkeypatch, env):
    """Makes `env` this process's environment for the test: jupyter_client
    finds the kernelspec and builds the kernel's environment from
    os.environ."""
    for key in list(os.environ):
        if key not in env:
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)


def cell_text(cell):
    """A cell's source and what it printed, for failure messages."""
    parts = [cell.source, "--- output ---"]
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type == "error":
            parts.append("\n".join(output.traceback))
        elif "text/plain" in output.get("data", {}):
            parts.append(output.data["text/plain"])
    return "\n".join(parts)


def run_notebook(path, tmp_path, monkeypatch, scenario, kernel_cache):
    env, prefix = jupyter_env(tmp_path, scenario, kernel_cache)
    install_kernel(env, prefix)
    use_environment(monkeypatch, env)

    notebook = nbformat.read(path, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(PROBE_CELL))
    client = nbclient.NotebookClient(notebook, kernel_name=KERNEL_NAME, timeout=240,
                                     startup_timeout=60,
                                     resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as error:
        failing = [c for c in notebook.cells if c.cell_type == "code" and any(
            o.output_type == "error" for o in c.get("outputs", []))]
        detail = cell_text(failing[0]) if failing else str(error)
        pytest.fail(f"{path.name}: a cell failed:\n{detail}", pytrace=False)
    probe = next(o.text for o in notebook.cells[-1].outputs if o.output_type == "stream")
    return notebook, json.loads(probe.split("GPUKIT-PROBE ", 1)[1])


def printed(notebook):
    return "".join(o.text for c in notebook.cells if c.cell_type == "code"
                   for o in c.get("outputs", []) if o.output_type == "stream")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook(path, tmp_path, monkeypatch, kernel_cache):
    notebook, probe = run_notebook(path, tmp_path, monkeypatch, "h100x8", kernel_cache)
    # Started by `gpukit run`: one fake H100 reserved for the kernel.
    assert probe["visible"] and probe["visible"].startswith("GPU-"), probe
    # The gpukit under test, not some other installed one.
    assert os.path.samefile(probe["gpukit"], os.path.dirname(gpukit.__file__)), probe


def test_nvml_notebook_without_gpus(tmp_path, monkeypatch, kernel_cache):
    """03 on a machine without NVML: the kernel starts on the CPU and the
    notebook says there are no GPUs."""
    path = SOURCE / "examples" / "notebooks" / "03_nvml_queries.ipynb"
    notebook, probe = run_notebook(path, tmp_path, monkeypatch, None, kernel_cache)
    assert probe["visible"] in (None, ""), probe
    assert "There are no NVIDIA GPUs" in printed(notebook)


def test_every_notebook_is_clean():
    """Stored without outputs or execution counts, and valid nbformat 4."""
    assert len(NOTEBOOKS) == 9, NOTEBOOKS
    for path in NOTEBOOKS:
        notebook = nbformat.read(path, as_version=4)
        nbformat.validate(notebook)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, path.name
