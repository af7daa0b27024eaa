"""The package as `pip install .` installed it (tools/check runs this after
installing into its venv; ctest does not, as it tests the build tree)."""
import importlib.metadata
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import gpukit
from conftest import SOURCE

PACKAGE = Path(gpukit.__file__).parent
VENDOR_LIBRARIES = ("libnvidia-ml", "libcuda", "libOpenCL", "libnvrtc", "libcublas")
# Loaded on first use too (src/ext/blas.c, src/ext/openmp.c), so importing
# starts no OpenBLAS or OpenMP thread pool.
BLAS_LIBRARIES = ("libopenblas", "liblapack", "libcblas", "libblas.so", "libgomp")


def test_imported_from_the_installed_wheel():
    assert Path(sysconfig.get_paths()["purelib"]) in PACKAGE.parents or \
        Path(sysconfig.get_paths()["platlib"]) in PACKAGE.parents, PACKAGE


def test_metadata_version_is_the_cmake_version():
    cmake = (SOURCE / "CMakeLists.txt").read_text()
    version = re.search(r"project\(gpukit VERSION ([0-9.]+)", cmake).group(1)
    assert importlib.metadata.version("gpukit") == version == gpukit.__version__


def test_metadata_is_complete():
    meta = importlib.metadata.metadata("gpukit")
    assert meta["Requires-Python"] == ">=3.10"
    assert meta["License-Expression"] == "MIT"
    assert "LICENSE" in (meta.get_all("License-File") or [])
    assert "Typing :: Typed" in meta.get_all("Classifier")
    assert meta.get_all("Project-URL")
    assert meta["Summary"]


def test_type_information_ships():
    assert (PACKAGE / "py.typed").is_file()
    assert (PACKAGE / "__init__.pyi").is_file()


def test_extension_carries_libgpukit_and_links_no_vendor_library():
    extension = next(PACKAGE.glob("_gpukit*.so"))
    needed = subprocess.run(["readelf", "-d", str(extension)], capture_output=True,
                            text=True, check=True).stdout
    libraries = re.findall(r"\(NEEDED\).*\[(.+)\]", needed)
    assert libraries, needed
    assert not [lib for lib in libraries if lib.startswith("libgpukit")]
    assert not [lib for lib in libraries if lib.startswith(VENDOR_LIBRARIES + BLAS_LIBRARIES)]


def test_import_loads_no_vendor_library():
    code = ("import gpukit\n"
            "print(open('/proc/self/maps').read())")
    maps = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout
    assert not [lib for lib in VENDOR_LIBRARIES + BLAS_LIBRARIES if lib in maps]


def test_the_command_is_installed_beside_python():
    command = Path(sysconfig.get_paths()["scripts"]) / "gpukit"
    result = subprocess.run([str(command), "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and "Usage" in result.stdout
