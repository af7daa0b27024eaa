"""What the gpukit command loads: commands that do not compute (--version,
ls, pick, run) map no compute library, since the CPU backend's threads
(libgomp, src/ext/openmp.c), its BLAS and LAPACKE (src/ext/blas.c), its
vector math and the GPU drivers are all loaded on first use; a command that
computes on more than one thread does load OpenMP's runtime.

The dynamic loader itself reports every library it initialises
(LD_DEBUG=libs, one file per process under LD_DEBUG_OUTPUT), dlopen'ed ones
included, so the check sees a library however it came in."""
import os
import re

from conftest import BUILD, EXIT_OK, run, scenario_env

# File names (their starts) of the libraries a non-computing command must
# not load: OpenMP, every BLAS and LAPACKE (and OpenBLAS's gfortran), SLEEF,
# the OpenCL loader and the CUDA libraries.
COMPUTE_LIBRARIES = ("libgomp", "libopenblas", "libblas", "libcblas", "liblapack",
                     "libgfortran", "libsleef", "libOpenCL", "libcuda", "libnvrtc",
                     "libcublas")
FAKE_CUDA = BUILD / "tests" / "fake_cuda" / "libcuda.so.1"


def loaded_libraries(args, tmp_path, **extra):
    """(result, names of the libraries every process of `gpukit args`
    initialised)."""
    env = scenario_env(tmp_path, "h100x8")
    # A libcuda that exists, so that loading one would show.
    env["GPUKIT_CUDA_LIBRARY"] = str(FAKE_CUDA)
    env["PATH"] = "/usr/bin:/bin"
    trace = tmp_path / "trace"
    trace.mkdir(exist_ok=True)
    for old in trace.iterdir():
        old.unlink()
    env.update(LD_DEBUG="libs", LD_DEBUG_OUTPUT=str(trace / "ld"), **extra)
    result = run(args, env)
    names = set()
    for log in trace.iterdir():
        for path in re.findall(r"calling init: (\S+)", log.read_text()):
            names.add(os.path.basename(path))
    assert names, "the loader wrote no trace: the check would see nothing"
    return result, names


def test_commands_that_do_not_compute_load_no_compute_library(tmp_path):
    for args in (["--version"], ["ls"], ["ls", "--json"], ["pick"], ["run", "--", "true"]):
        result, names = loaded_libraries(args, tmp_path)
        assert result.returncode == EXIT_OK, (args, result.stderr)
        loaded = sorted(n for n in names if n.startswith(COMPUTE_LIBRARIES))
        assert not loaded, f"gpukit {' '.join(args)} loaded {loaded}"
        if args == ["ls"]:
            assert "libnvidia-ml.so.1" in names  # the trace does show dlopen'ed libraries


def test_computing_on_threads_loads_openmp(tmp_path):
    # A sum of 2^20 floats is as large as threads need by default
    # (src/compute/backends/cpu/parallel.h).
    result, names = loaded_libraries(
        ["bench", "--device", "cpu", "--size", str(1 << 20), "--matmul", "16",
         "--repeat", "1", "--json"], tmp_path, OMP_NUM_THREADS="2",
        OMP_WAIT_POLICY="passive")
    assert result.returncode == EXIT_OK, result.stderr
    assert "libgomp.so.1" in names, sorted(names)


def test_without_openmp_computing_runs_on_one_thread(tmp_path):
    # (tests/package/test_import.py checks the results and the description.)
    result, names = loaded_libraries(
        ["bench", "--device", "cpu", "--size", str(1 << 20), "--matmul", "16",
         "--repeat", "1"], tmp_path, OMP_NUM_THREADS="2",
        GPUKIT_OPENMP_LIBRARY=str(tmp_path / "no-such-dir" / "libgomp.so.1"))
    assert result.returncode == EXIT_OK, result.stderr
    assert not [n for n in names if n.startswith("libgomp")]
