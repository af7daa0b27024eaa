"""User kernels from Python: gpukit.RawKernel, gpukit.ElementwiseKernel and
gpukit.Stream, on every device there is: the cpu (whose kernels run on the
OpenCL driver for the CPU, in place on its memory) and every CUDA and
OpenCL device (PoCL's opencl:0:0 here).

The five GPU-tutorial examples of examples/kernels/*.gk (double, fizzbuzz,
blur, grayscale, cpu_vs_gpu) are driven from Python as examples/*.c drive
them from C, and every result is compared with NumPy's. The on-disk kernel
cache is checked across processes, Python's and the C examples'."""
import inspect
import os
import subprocess
import threading

import numpy as np
import pytest

import gpukit
from conftest import BUILD, DEVICES, SOURCE

KERNELS = SOURCE / "examples" / "kernels"
ACCELERATORS = [d for d in DEVICES if not d.startswith("cpu")]
DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]

needs_accelerator = pytest.mark.skipif(not ACCELERATORS, reason="no CUDA or OpenCL device here")


@pytest.fixture(params=DEVICES)
def accel(request):
    """Each device in turn, as its name: the cpu, CUDA and OpenCL ones."""
    return request.param


def elsewhere(device):
    """A device other than `device`: the cpu, or for the cpu the first
    accelerator (skipping the test when there is none)."""
    if device != "cpu":
        return "cpu"
    if not ACCELERATORS:
        pytest.skip("needs a second device")
    return ACCELERATORS[0]


def source(name):
    return (KERNELS / name).read_text()


def put(array, device):
    """A copy of `array` on `device` (on the cpu asarray would share the
    NumPy array's memory, and kernels write in place)."""
    return gpukit.asarray(np.array(array, order="C"), device=device)


def host(array):
    return array.cpu().numpy()


def has_fp64(device):
    """What double.gk's has_fp64 kernel says about the device."""
    kernel = gpukit.RawKernel(source("double.gk"), "has_fp64", device=device)
    answer = gpukit.zeros((1,), dtype=gpukit.int32, device=device)
    kernel(1, 1, (answer,))
    return bool(host(answer)[0])


# ---- the five examples ------------------------------------------------------

def test_double(accel):
    """Lab 1: one thread per element, the grid rounded up to whole blocks."""
    if not has_fp64(accel):
        pytest.skip(f"{accel} has no float64")
    n = 100_003
    values = np.arange(n, dtype=np.float64) / 3
    x = put(values, accel)
    double = gpukit.RawKernel(source("double.gk"), "double_values", device=accel)
    assert double.device == accel and double.name == "double_values"
    double(((n + 255) // 256,), (256,), (x, n))  # n: a Python int is int64
    np.testing.assert_array_equal(host(x), values * 2)


def test_fizzbuzz(accel):
    """Lab 2: a grid-stride loop, any n with a fixed grid."""
    n = 1_000_003
    codes = gpukit.empty((n,), dtype=gpukit.uint8, device=accel)
    fizzbuzz = gpukit.RawKernel(source("fizzbuzz.gk"), "fizzbuzz", device=accel)
    fizzbuzz(64, 128, (codes, np.int64(n)))
    number = np.arange(1, n + 1)
    expected = ((number % 3 == 0) * 1 + (number % 5 == 0) * 2).astype(np.uint8)
    result = host(codes)
    np.testing.assert_array_equal(result, expected)
    assert list(result[:15]) == [0, 0, 1, 0, 2, 1, 0, 0, 1, 2, 0, 1, 0, 0, 3]


HEIGHT, WIDTH = 116, 434


def blur_image():
    """examples/blur.c's test image, with its pseudo-random noise."""
    image = np.zeros((HEIGHT, WIDTH, 4), dtype=np.uint8)
    noise = 12345
    for y in range(HEIGHT):
        for x in range(WIDTH):
            noise = (noise * 1103515245 + 12345) & 0xFFFFFFFF
            image[y, x] = (x * 255 // (WIDTH - 1), y * 255 // (HEIGHT - 1),
                           (180 if (x // 16 + y // 16) % 2 else 40) + (noise >> 26), 255)
    return image


def blur_numpy(image):
    """One 3x3 box-blur pass: the mean of the neighbours inside the image,
    rounded to the nearest integer (halves up)."""
    padded = np.pad(image.astype(np.int32), ((1, 1), (1, 1), (0, 0)))
    inside = np.pad(np.ones(image.shape[:2], dtype=np.int32), 1)
    total = np.zeros(image.shape, dtype=np.int32)
    count = np.zeros(image.shape[:2], dtype=np.int32)
    for dy in range(3):
        for dx in range(3):
            total += padded[dy:dy + HEIGHT, dx:dx + WIDTH]
            count += inside[dy:dy + HEIGHT, dx:dx + WIDTH]
    count = count[:, :, None]
    return ((total + count // 2) // count).astype(np.uint8)


def test_blur(accel):
    """Lab 3: a 2-D grid of 16 x 16 blocks, 5 passes between two device
    buffers that swap places."""
    image = blur_image()
    front = put(image, accel)
    back = gpukit.empty(image.shape, dtype=gpukit.uint8, device=accel)
    blur = gpukit.RawKernel(source("blur.gk"), "blur", device=accel)
    grid = ((WIDTH + 15) // 16, (HEIGHT + 15) // 16)
    for _ in range(5):
        blur(grid, (16, 16), (front, back, np.int32(HEIGHT), np.int32(WIDTH)))
        front, back = back, front
    expected = image
    for _ in range(5):
        expected = blur_numpy(expected)
    np.testing.assert_array_equal(host(front), expected)
    assert not np.array_equal(expected, image)


def test_grayscale(accel):
    """Lab 4: one thread per pixel, alpha kept."""
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    image = np.stack([x * 255 // (WIDTH - 1), y * 255 // (HEIGHT - 1),
                      np.where((x // 10) % 2 == 1, 250, 10), 128 + (x + y) % 128],
                     axis=-1).astype(np.uint8)
    colour = put(image, accel)
    gray = gpukit.empty(image.shape, dtype=gpukit.uint8, device=accel)
    kernel = gpukit.RawKernel(source("grayscale.gk"), "grayscale", device=accel)
    kernel(((WIDTH + 15) // 16, (HEIGHT + 15) // 16, 1), (16, 16, 1),
           (colour, gray, np.int32(HEIGHT), np.int32(WIDTH)))
    mean = (image[..., :3].astype(np.int32).sum(axis=-1) // 3).astype(np.uint8)
    expected = np.stack([mean, mean, mean, image[..., 3]], axis=-1)
    np.testing.assert_array_equal(host(gray), expected)
    np.testing.assert_array_equal(host(colour), image)  # the input is untouched


def test_cpu_vs_gpu(accel):
    """Lab 5: the same work as an elementwise kernel, against NumPy in
    float32 (the device's sin and cos may round differently)."""
    n = 1_000_000
    values = (np.arange(n) % 10000).astype(np.float32) / np.float32(1000)
    work = gpukit.ElementwiseKernel("float32 x", "float32 y",
                                    "y = sqrt(x * x + 1.0f) * sin(x) + cos(x) / 2.0f;", "work")
    result = work(put(values, accel))
    assert result.dtype == gpukit.float32 and result.shape == (n,)
    assert result.device == accel
    expected = np.sqrt(values * values + 1) * np.sin(values) + np.cos(values) / 2
    np.testing.assert_allclose(host(result), expected, rtol=1e-5, atol=1e-5)


# ---- raw kernels ------------------------------------------------------------

INDEX_KERNEL = r"""
GK_KERNEL void where_am_i(GK_GLOBAL gk_i64 *out, gk_i64 nx, gk_i64 ny, gk_i64 nz)
{
    gk_i64 x = GK_GLOBAL_ID(0), y = GK_GLOBAL_ID(1), z = GK_GLOBAL_ID(2);
    if (x < nx && y < ny && z < nz)
        out[(z * ny + y) * nx + x] = x + 1000 * y + 1000000 * z
            + 100000000 * (GK_LOCAL_SIZE(0) + 10 * GK_LOCAL_SIZE(1) + 100 * GK_LOCAL_SIZE(2));
}
"""


@pytest.mark.parametrize("grid, block, shape", [
    (5, 4, (17, 1, 1)),                   # ints
    ((5,), (4,), (17, 1, 1)),             # 1-D tuples
    ((3, 4), (8, 2), (21, 7, 1)),         # 2-D
    ((2, 3, 4), (4, 2, 2), (7, 5, 6)),    # 3-D
])
def test_raw_kernel_grids(accel, grid, block, shape):
    nx, ny, nz = shape
    out = gpukit.full((nz, ny, nx), -1, dtype=gpukit.int64, device=accel)
    kernel = gpukit.RawKernel(INDEX_KERNEL, "where_am_i", device=accel)
    kernel(grid, block, (out, nx, ny, nz))
    block3 = (tuple(block) if isinstance(block, tuple) else (block,)) + (1, 1)
    z, y, x = np.mgrid[0:nz, 0:ny, 0:nx]
    sizes = block3[0] + 10 * block3[1] + 100 * block3[2]
    np.testing.assert_array_equal(host(out), x + 1000 * y + 1000000 * z + 100000000 * sizes)


@pytest.mark.parametrize("bad, error", [
    (0, ValueError), (-1, ValueError), ((1, 2, 3, 4), ValueError), ((), ValueError),
    (2 ** 32, ValueError), (1.5, TypeError), ("8", TypeError), ((1, "2"), TypeError),
])
def test_raw_kernel_bad_sizes(accel, bad, error):
    out = gpukit.zeros((8,), dtype=gpukit.int64, device=accel)
    kernel = gpukit.RawKernel(INDEX_KERNEL, "where_am_i", device=accel)
    with pytest.raises(error, match="grid"):
        kernel(bad, 1, (out, 8, 1, 1))
    with pytest.raises(error, match="block"):
        kernel(1, bad, (out, 8, 1, 1))


SCALARS_KERNEL = r"""
GK_KERNEL void scalars(GK_GLOBAL gk_i64 *ints, GK_GLOBAL float *floats, gk_i32 a, gk_i64 b,
                       float c)
{
    ints[0] = a;
    ints[1] = b;
    floats[0] = c;
}
"""

DOUBLE_KERNEL = r"""
#ifdef GK_HAS_FP64
GK_KERNEL void store(GK_GLOBAL double *out, double value)
{
    out[0] = value;
}
#endif
"""


def run_scalars(accel, *scalars):
    ints = gpukit.zeros((2,), dtype=gpukit.int64, device=accel)
    floats = gpukit.zeros((1,), dtype=gpukit.float32, device=accel)
    gpukit.RawKernel(SCALARS_KERNEL, "scalars", device=accel)(1, 1, (ints, floats, *scalars))
    return list(host(ints)), float(host(floats)[0])


def test_raw_kernel_scalar_kinds(accel):
    # NumPy scalars have exact types; a Python int is int64.
    assert run_scalars(accel, np.int32(-7), 2 ** 40 + 3, np.float32(0.25)) == \
        ([-7, 2 ** 40 + 3], 0.25)
    assert run_scalars(accel, np.int32(2 ** 31 - 1), np.int64(-2 ** 62), np.float32(-1.5)) == \
        ([2 ** 31 - 1, -2 ** 62], -1.5)
    # 0-d arrays pass their value with their dtype.
    a = gpukit.asarray(np.int32(11), device=accel)
    b = gpukit.asarray(np.int64(12), device=accel)
    c = gpukit.asarray(np.float32(13.5), device="cpu")  # a value: any device
    assert a.ndim == 0
    assert run_scalars(accel, a, b, c) == ([11, 12], 13.5)


UNSIGNED_KERNEL = r"""
GK_KERNEL void unsigned_scalars(GK_GLOBAL gk_u64 *out, gk_u32 a, gk_u64 b)
{
    out[0] = a;
    out[1] = b;
}
"""


def test_raw_kernel_unsigned_scalars(accel):
    """uint32 and uint64 pass as the int of their width with the same bits,
    which the kernel's unsigned parameters read back whole."""
    kernel = gpukit.RawKernel(UNSIGNED_KERNEL, "unsigned_scalars", device=accel)
    out = gpukit.zeros((2,), dtype=gpukit.uint64, device=accel)
    for a, b in [(2 ** 32 - 1, 2 ** 64 - 1), (2 ** 31, 2 ** 63), (0, 1)]:
        kernel(1, 1, (out, np.uint32(a), np.uint64(b)))
        assert out.tolist() == [a, b]
        kernel(1, 1, (out, gpukit.asarray(a, dtype=gpukit.uint32),
                      gpukit.asarray(b, dtype=gpukit.uint64, device=accel)))
        assert out.tolist() == [a, b]
    with pytest.raises(TypeError, match="uint16"):
        kernel(1, 1, (out, np.uint16(1), np.uint64(1)))
    with pytest.raises(TypeError, match="0-d int8"):
        kernel(1, 1, (out, gpukit.asarray(1, dtype=gpukit.int8), np.uint64(1)))


def test_elementwise_integer_extremes(accel):
    """Scalar inputs of every integer dtype arrive exactly, up to uint64's
    top; a value out of the declared range is an OverflowError."""
    for name in ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]:
        info = np.iinfo(name)
        copy = gpukit.ElementwiseKernel(f"{name} x", f"{name} y", "y = x;", f"copy_{name}")
        for value in [int(info.min), int(info.max)]:
            out = gpukit.zeros((), dtype=name, device=accel)
            assert copy(value, out=out) is out
            assert out.item() == value, name
        with pytest.raises(OverflowError, match=name):
            copy(int(info.max) + 1, out=gpukit.zeros((), dtype=name, device=accel))


def test_raw_kernel_python_float_is_float64(accel):
    if not has_fp64(accel):
        pytest.skip(f"{accel} has no float64")
    out = gpukit.zeros((1,), dtype=gpukit.float64, device=accel)
    store = gpukit.RawKernel(DOUBLE_KERNEL, "store", device=accel)
    store(1, 1, (out, 1 / 3))
    assert host(out)[0] == 1 / 3  # all 53 bits arrived
    store(1, 1, (out, np.float64(2.5)))
    assert host(out)[0] == 2.5


@pytest.mark.parametrize("scalar, error, match", [
    (True, TypeError, "bool"),
    (np.uint8(3), TypeError, "uint8"),
    (np.int16(3), TypeError, "int16"),
    ("3", TypeError, "str"),
    (None, TypeError, "NoneType"),
    (np.zeros(3, dtype=np.int32), TypeError, "asarray"),
    (2 ** 63, OverflowError, "int64"),
])
def test_raw_kernel_bad_scalars(accel, scalar, error, match):
    with pytest.raises(error, match=match):
        run_scalars(accel, np.int32(1), scalar, np.float32(1))


def test_raw_kernel_bool_array_value(accel):
    ints = gpukit.zeros((2,), dtype=gpukit.int64, device=accel)
    floats = gpukit.zeros((1,), dtype=gpukit.float32, device=accel)
    kernel = gpukit.RawKernel(SCALARS_KERNEL, "scalars", device=accel)
    with pytest.raises(TypeError, match="bool"):
        kernel(1, 1, (ints, floats, gpukit.asarray(True, device=accel), 1, np.float32(1)))


def test_raw_kernel_arrays_checked(accel):
    kernel = gpukit.RawKernel(SCALARS_KERNEL, "scalars", device=accel)
    floats = gpukit.zeros((1,), dtype=gpukit.float32, device=accel)
    other = elsewhere(accel)
    misplaced = gpukit.zeros((2,), dtype=gpukit.int64, device=other)
    with pytest.raises(ValueError, match=f"is on {other}"):
        kernel(1, 1, (misplaced, floats, np.int32(1), 2, np.float32(3)))
    # A bare pointer to a strided view would be read wrongly: refused.
    grid = gpukit.zeros((4, 4), dtype=gpukit.int64, device=accel)
    with pytest.raises(ValueError, match="contiguous"):
        kernel(1, 1, (grid.T, floats, np.int32(1), 2, np.float32(3)))
    with pytest.raises(TypeError, match="tuple"):
        kernel(1, 1, floats)
    with pytest.raises(TypeError):
        kernel(1, 1)
    with pytest.raises(TypeError, match="unexpected keyword"):
        kernel(1, 1, (floats,), bogus=1)
    with pytest.raises(TypeError, match="multiple values"):
        kernel(1, 1, (floats,), grid=2)
    # A list works as well as a tuple, and keywords as well as positions.
    ints = gpukit.zeros((2,), dtype=gpukit.int64, device=accel)
    kernel(grid=1, block=1, args=[ints, floats, np.int32(4), 5, np.float32(6)])
    assert list(host(ints)) == [4, 5]


def test_raw_kernel_arguments_match_parameters(accel):
    """Where the driver describes the parameters (OpenCL, the cpu), an
    argument of the wrong kind is refused before the driver reads it: an
    int taken for a buffer handle crashed the process, and a scalar of the
    wrong width or kind was read as other bits. A scalar whose value the
    parameter's type holds is converted to it, as C converts a call's
    arguments (a Python int for a gk_i32, a Python float for a float)."""
    if gpukit.device(accel).type == "cuda":
        pytest.skip("CUDA does not describe a kernel's parameters")
    kernel = gpukit.RawKernel(SCALARS_KERNEL, "scalars", device=accel)
    ints = gpukit.zeros((2,), dtype=gpukit.int64, device=accel)
    floats = gpukit.zeros((1,), dtype=gpukit.float32, device=accel)
    cases = [
        ((12345, floats, np.int32(1), 2, np.float32(3)), "argument 0 is a scalar.*pointer"),
        ((ints, floats, ints, 2, np.float32(3)), "argument 2 is an array.*gk_i32.*int32"),
        ((ints, floats, 2**31, 2, np.float32(3)),
         "argument 2 is an int64.*gk_i32.*cannot hold its value.*numpy.int32"),
        ((ints, floats, np.int32(1), 2, 1e300), "argument 4 is a float64.*cannot hold"),
        ((ints, floats, np.int32(1), 2.5, np.float32(3)), "argument 3 is a float64.*gk_i64"),
        ((ints, floats, np.int32(1), 2, 2**25 + 1), "argument 4 is an int64.*float"),
    ]
    for args, match in cases:
        with pytest.raises(ValueError, match=match):
            kernel(1, 1, args)
    kernel(1, 1, (ints, floats, np.int32(1), 2, np.float32(3)))
    assert host(ints).tolist() == [1, 2] and host(floats).tolist() == [3.0]
    # values the parameters hold: converted (int64 -> gk_i32, int32 -> gk_i64,
    # float64 and int -> float)
    kernel(1, 1, (ints, floats, -7, np.int32(8), 0.5))
    assert host(ints).tolist() == [-7, 8] and host(floats).tolist() == [0.5]
    with pytest.raises(ValueError, match="argument 3 is an int32.*cannot hold"):
        kernel(1, 1, (ints, floats, -7, np.int32(-8), 0.5))  # or a uint32's bits?
    kernel(1, 1, (ints, floats, np.int64(4), 5, 6))
    assert host(ints).tolist() == [4, 5] and host(floats).tolist() == [6.0]


BIG_LOCAL_KERNEL = r"""
GK_KERNEL void big_local(GK_GLOBAL float *out)
{
    GK_LOCAL float buffer[1 << 24];
    buffer[GK_LOCAL_ID(0)] = 1.0f;
    GK_BARRIER();
    out[0] = buffer[0];
}
"""


def test_raw_kernel_local_memory_over_the_device(accel):
    """64 MiB of GK_LOCAL arrays is more than any device has per group:
    a ValueError, where PoCL used to abort the process. On CUDA, NVRTC's
    ptxas says so (a ValueError) where it makes the GPU's code; where it
    makes PTX (a GPU newer than it), the driver's JIT does when loading it:
    a GPUError, naming the shared memory too."""
    out = gpukit.zeros((1,), dtype=gpukit.float32, device=accel)
    refused = (ValueError, gpukit.GPUError) if accel.startswith("cuda") else ValueError
    with pytest.raises(refused, match="local memory|shared"):
        gpukit.RawKernel(BIG_LOCAL_KERNEL, "big_local", device=accel)(1, 1, (out,))
        gpukit.synchronize()


def test_raw_kernel_object(accel):
    text = source("fizzbuzz.gk")
    kernel = gpukit.RawKernel(text, "fizzbuzz", device=accel, options="-DUNUSED=1")
    assert kernel.source == text and kernel.options == "-DUNUSED=1"
    assert kernel.language == "portable"
    assert kernel.device == gpukit.device(accel)
    assert "fizzbuzz" in repr(kernel) and accel in repr(kernel)
    with pytest.raises(AttributeError):
        kernel.name = "other"
    params = inspect.signature(gpukit.RawKernel).parameters
    assert list(params) == ["source", "name", "device", "options", "language"]
    assert "grid" in gpukit.RawKernel.__doc__ and "ValueError" in gpukit.RawKernel.__doc__


def test_raw_kernel_options_reach_the_compiler(accel):
    text = r"""
    GK_KERNEL void set_value(GK_GLOBAL gk_i32 *out) { out[0] = VALUE; }
    """
    out = gpukit.zeros((1,), dtype=gpukit.int32, device=accel)
    for value in (3, 42):
        gpukit.RawKernel(text, "set_value", device=accel, options=f"-DVALUE={value}")(1, 1, (out,))
        assert host(out)[0] == value
    with pytest.raises(ValueError, match="VALUE"):
        gpukit.RawKernel(text, "set_value", device=accel)


def test_raw_kernel_default_device():
    """device=None with the CPU as the default device: the accelerator,
    else the cpu."""
    assert gpukit.default_device() == "cpu"
    if not ACCELERATORS:
        assert gpukit.RawKernel(source("fizzbuzz.gk"), "fizzbuzz").device == "cpu"
        return
    kernel = gpukit.RawKernel(source("fizzbuzz.gk"), "fizzbuzz")
    assert kernel.device.type in ("cuda", "opencl")
    with gpukit.device(ACCELERATORS[-1]):
        assert gpukit.RawKernel(source("fizzbuzz.gk"), "fizzbuzz").device == ACCELERATORS[-1]


# ---- compile errors and the CPU ---------------------------------------------

def test_compile_errors_carry_the_log(accel):
    broken = "GK_KERNEL void broken(GK_GLOBAL float *x) { x[0] = no_such_variable_here; }"
    with pytest.raises(ValueError, match="no_such_variable_here"):
        gpukit.RawKernel(broken, "broken", device=accel)
    with pytest.raises(ValueError, match="no kernel named 'elsewhere'"):
        gpukit.RawKernel(source("fizzbuzz.gk"), "elsewhere", device=accel)
    with pytest.raises(ValueError, match="C identifier"):
        gpukit.RawKernel(source("fizzbuzz.gk"), "not a name", device=accel)
    with pytest.raises(ValueError, match="'portable'"):
        gpukit.RawKernel(source("fizzbuzz.gk"), "fizzbuzz", device=accel, language="fortran")
    if gpukit.device(accel).type == "opencl":
        with pytest.raises(ValueError, match="CUDA devices only"):
            gpukit.RawKernel(source("fizzbuzz.gk"), "fizzbuzz", device=accel, language="cuda")
    # Elementwise kernels compile when first run on a device...
    bad = gpukit.ElementwiseKernel("float32 x", "float32 y", "y = x + undefined_name_xyz;", "bad")
    x = gpukit.zeros((4,), dtype=gpukit.float32, device=accel)
    with pytest.raises(ValueError, match="undefined_name_xyz"):
        bad(x)
    # ... or at once with device=.
    with pytest.raises(ValueError, match="undefined_name_xyz"):
        gpukit.ElementwiseKernel("float32 x", "float32 y", "y = x + undefined_name_xyz;", "bad",
                                 device=accel)


def test_compile_errors_name_the_users_line(accel):
    """The compiler's messages count the lines of the source as given (of
    the operation, for elementwise kernels), not of the text gpukit
    compiles, which has dialect.h in front ("source:4:12:" from OpenCL's
    clang, "source(4):" from NVRTC)."""
    broken = "GK_KERNEL void broken(GK_GLOBAL float *x)\n{\n    x[0] = 1.0f;\n    x[1] = oops;\n}\n"
    with pytest.raises(ValueError, match=r"source[:(]4\b[\s\S]*oops"):
        gpukit.RawKernel(broken, "broken", device=accel)
    with pytest.raises(ValueError, match=r"operation[:(]2\b[\s\S]*oops"):
        gpukit.ElementwiseKernel("float32 x", "float32 y", "float t = x;\ny = t + oops;", "bad",
                                 device=accel)


NO_CPU_DRIVER = """
    import gpukit
    checks = [
        lambda: gpukit.RawKernel("GK_KERNEL void k(GK_GLOBAL float *x) {}", "k", device="cpu"),
        lambda: gpukit.ElementwiseKernel("float32 x", "float32 y", "y = 2 * x;", "twice",
                                         device="cpu"),
        lambda: gpukit.Stream("cpu"),
    ]
    for check in checks:
        try:
            check()
        except gpukit.GPUError as error:
            print(type(error).__name__, error)
        else:
            print("no error")
"""


def test_cpu_kernels_without_an_opencl_cpu_driver(py):
    """No OpenCL driver for the CPU: the cpu device's kernels say which
    package to install (gpukit.GPUError, like any missing driver)."""
    lines = py(NO_CPU_DRIVER, GPUKIT_OPENCL_LIBRARY="/nonexistent/libOpenCL.so.1"
               ).stdout.splitlines()
    assert len(lines) == 3, lines
    for line in lines:
        assert line.startswith("GPUError"), line
        assert "apt-get install pocl-opencl-icd" in line, line


def test_unknown_device_named():
    with pytest.raises(ValueError, match="is not a device name"):
        gpukit.RawKernel(source("fizzbuzz.gk"), "fizzbuzz", device="tpu:0")


# ---- elementwise kernels ----------------------------------------------------

def numpy_add(dtype, x, y):
    if dtype == "bool":
        return np.logical_or(x, y)
    return (x + y).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_elementwise_every_dtype_broadcasts(accel, dtype):
    if dtype == "float64" and not has_fp64(accel):
        pytest.skip(f"{accel} has no float64")
    rng = np.random.default_rng(7)
    if dtype == "bool":
        a, b = rng.random((3, 1, 4)) < 0.5, rng.random((5, 1)) < 0.5
    elif dtype.startswith("float"):
        a, b = rng.standard_normal((3, 1, 4)), rng.standard_normal((5, 1))
    else:
        a, b = rng.integers(0, 120, (3, 1, 4)), rng.integers(0, 120, (5, 1))
    a, b = a.astype(dtype), b.astype(dtype)
    add = gpukit.ElementwiseKernel(f"{dtype} x, {dtype} y", f"{dtype} z", "z = x + y;",
                                   f"add_{dtype}")
    z = add(put(a, accel), put(b, accel))
    assert z.shape == (3, 5, 4) and z.dtype == dtype and z.device == accel
    np.testing.assert_array_equal(host(z), numpy_add(dtype, a, b))
    # A scalar becomes a 0-d array of the declared dtype.
    scalar = True if dtype == "bool" else (2.5 if dtype.startswith("float") else 7)
    z = add(put(a, accel), scalar)
    assert z.shape == a.shape and z.dtype == dtype
    np.testing.assert_array_equal(host(z), numpy_add(dtype, a, np.array(scalar, dtype=dtype)))


def test_elementwise_index_and_numpy_scalars(accel):
    kernel = gpukit.ElementwiseKernel("int64 x, int32 k, float32 f", "int64 y, float32 g",
                                      "y = x * k + i; g = f * 2.0f;", "indexed")
    x = put(np.arange(12, dtype=np.int64).reshape(3, 4), accel)
    y, g = kernel(x, np.int32(3), np.float32(0.25))
    np.testing.assert_array_equal(host(y), np.arange(12).reshape(3, 4) * 4)
    assert g.shape == (3, 4)
    np.testing.assert_array_equal(host(g), np.full((3, 4), 0.5, dtype=np.float32))
    assert (kernel.nin, kernel.nout) == (3, 2)


def test_elementwise_numpy_0d_and_complex_scalars(accel):
    """Scalar inputs may be NumPy 0-d arrays (a float one raised NumPy's
    "only integer scalar arrays can be converted to a scalar index") and
    complex numbers (Python's were refused as "not a scalar"; NumPy's
    complex128 was stored, 16 bytes, into an 8-byte variable)."""
    scale = gpukit.ElementwiseKernel("float32 x, float32 f", "float32 y", "y = x * f;", "scale0d")
    x = put(np.arange(4, dtype=np.float32), accel)
    assert host(scale(x, np.array(2.5))).tolist() == [0.0, 2.5, 5.0, 7.5]
    assert host(scale(x, np.array(3, dtype=np.int64))).tolist() == [0.0, 3.0, 6.0, 9.0]
    shift = gpukit.ElementwiseKernel("int32 x, int32 k", "int32 y", "y = x + k;", "shift0d")
    assert shift(np.array(4, dtype=np.int32), np.array(5)).item() == 9
    with pytest.raises(TypeError, match="takes an int, not float"):
        shift(1, np.array(2.5))
    if not has_fp64(accel):
        return
    copy = gpukit.ElementwiseKernel("complex128 a, complex128 b", "complex128 c", "c = a;",
                                    "copy_c128")
    sentinel = np.complex128(-1e300 + 7j)
    for value in (np.complex128(1 + 2j), 3 - 4j):
        out = gpukit.zeros((), dtype=gpukit.complex128, device=accel)
        assert copy(value, sentinel, out=out).item() == value


def test_elementwise_several_outputs(accel):
    sum_diff = gpukit.ElementwiseKernel("float32 x, float32 y", "float32 s, float32 d",
                                        "s = x + y; d = x - y;", "sum_diff")
    a = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    b = np.float32(0.5) * np.arange(6, dtype=np.float32)
    x, y = put(a, accel), put(b, accel)
    s, d = sum_diff(x, y)
    np.testing.assert_array_equal(host(s), a + b)
    np.testing.assert_array_equal(host(d), a - b)
    # out=: given arrays are written and returned as themselves; None is made.
    given = gpukit.zeros((4, 6), dtype=gpukit.float32, device=accel)
    s2, d2 = sum_diff(x, y, out=(None, given))
    assert d2 is given and s2 is not given
    np.testing.assert_array_equal(host(given), a - b)
    with pytest.raises(TypeError, match="tuple of 2"):
        sum_diff(x, y, out=given)
    with pytest.raises(TypeError, match="tuple of 1 but the kernel has 2 outputs.*tuple of 2"):
        sum_diff(x, y, out=(given,))
    with pytest.raises(TypeError, match=r"out\[0\]"):
        sum_diff(x, y, out=(np.zeros((4, 6), np.float32), None))


def test_elementwise_out(accel):
    twice = gpukit.ElementwiseKernel("float32 x", "float32 y", "y = 2.0f * x;", "twice")
    x = put(np.arange(6, dtype=np.float32), accel)
    out = gpukit.zeros((6,), dtype=gpukit.float32, device=accel)
    assert twice(x, out=out) is out
    np.testing.assert_array_equal(host(out), np.arange(6) * 2)
    twice(out, out=out)  # in place
    np.testing.assert_array_equal(host(out), np.arange(6) * 4)
    with pytest.raises(ValueError, match="shape"):
        twice(x, out=gpukit.zeros((5,), dtype=gpukit.float32, device=accel))
    with pytest.raises(TypeError, match="declared float32"):
        twice(x, out=gpukit.zeros((6,), dtype=gpukit.float64, device=accel))
    # No inputs: the shape comes from the outputs.
    fill = gpukit.ElementwiseKernel("", "int64 y", "y = i * i;", "squares")
    squares = gpukit.zeros((2, 3), dtype=gpukit.int64, device=accel)
    assert fill(out=squares) is squares
    np.testing.assert_array_equal(host(squares), (np.arange(6) ** 2).reshape(2, 3))
    with pytest.raises(ValueError, match="no inputs"):
        fill(out=(None,))


def test_elementwise_wrong_dtypes(accel):
    twice = gpukit.ElementwiseKernel("float32 x", "float32 y", "y = 2.0f * x;", "twice")
    with pytest.raises(TypeError, match="declared float32 but the array is int64"):
        twice(put(np.arange(3), accel))
    ints = gpukit.ElementwiseKernel("uint8 x", "uint8 y", "y = x + 1;", "inc")
    with pytest.raises(TypeError, match="takes an int"):
        ints(2.5)
    with pytest.raises(OverflowError, match="uint8"):
        ints(300, out=gpukit.zeros((1,), dtype=gpukit.uint8, device=accel))
    with pytest.raises(TypeError, match="asarray"):
        twice(np.zeros(3, dtype=np.float32))
    with pytest.raises(TypeError, match="asarray"):
        twice([1.0, 2.0])


def test_elementwise_wrong_devices_and_calls(accel):
    add = gpukit.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x + y;", "add2")
    x = gpukit.ones((3,), dtype=gpukit.float32, device=accel)
    other = elsewhere(accel)
    misplaced = gpukit.ones((3,), dtype=gpukit.float32, device=other)
    with pytest.raises(ValueError, match=rf"on {other} but the kernel runs on .*\.to\("):
        add(x, misplaced)
    with pytest.raises(ValueError, match=f"on {other}"):
        add(x, x, out=gpukit.zeros((3,), dtype=gpukit.float32, device=other))
    with pytest.raises(TypeError, match="takes 2 inputs"):
        add(x)
    with pytest.raises(TypeError, match="unexpected keyword"):
        add(x, x, size=3)
    with pytest.raises(ValueError, match="dtype"):
        gpukit.ElementwiseKernel("float128 x", "float32 y", "y = x;", "complex_in")
    with pytest.raises(ValueError, match="dtypes and names"):
        gpukit.ElementwiseKernel("float32", "float32 y", "y = 1;", "no_name")


def test_elementwise_compiles_once_per_device(accel):
    add = gpukit.ElementwiseKernel("float32 x", "float32 y", "y = x + 1.0f;", "plus_one")
    assert add.compiled_devices == [] and add.device is None
    x = gpukit.zeros((2,), dtype=gpukit.float32, device=accel)
    for _ in range(3):
        add(x)
    assert add.compiled_devices == [accel]
    eager = gpukit.ElementwiseKernel("float32 x", "float32 y", "y = x + 1.0f;", "plus_one",
                                     device=accel)
    assert eager.device == accel and eager.compiled_devices == [accel]
    # Only scalars: the kernel's device= decides.
    y = eager(1.5)
    assert y.ndim == 0 and y.device == accel and float(host(y)) == 2.5
    assert "plus_one" in repr(eager)


def test_elementwise_threads(accel):
    """Calls from several threads (the GIL is released while compiling and
    running) all get the right answers, and the kernel compiles once."""
    kernel = gpukit.ElementwiseKernel("int64 x", "int64 y", "y = x * 3;", "triple_threads")
    inputs = [put(np.arange(1000) + k, accel) for k in range(8)]
    results = [None] * len(inputs)

    def work(k):
        results[k] = host(kernel(inputs[k]))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(inputs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for k, result in enumerate(results):
        np.testing.assert_array_equal(result, (np.arange(1000) + k) * 3)
    assert kernel.compiled_devices == [accel]


# ---- streams ----------------------------------------------------------------

def test_streams(accel):
    stream = gpukit.Stream(accel)
    assert stream.device == accel and accel in repr(stream)
    n = 200_000
    codes = gpukit.zeros((n,), dtype=gpukit.uint8, device=accel)
    fizzbuzz = gpukit.RawKernel(source("fizzbuzz.gk"), "fizzbuzz", device=accel)
    fizzbuzz(32, 64, (codes, n), stream=stream)
    stream.synchronize()
    number = np.arange(1, n + 1)
    np.testing.assert_array_equal(host(codes), (number % 3 == 0) * 1 + (number % 5 == 0) * 2)
    # Array work after a launch on a stream sees its results without a wait.
    other = gpukit.Stream(device=accel)
    twice = gpukit.ElementwiseKernel("uint8 x", "uint8 y", "y = x * 2;", "twice_u8")
    doubled = twice(codes, stream=other)
    np.testing.assert_array_equal(host(doubled), ((number % 3 == 0) * 1 + (number % 5 == 0) * 2) * 2)
    del other  # freed after its work
    with pytest.raises(TypeError, match="Stream"):
        twice(codes, stream="default")
    default_stream = gpukit.Stream()
    assert default_stream.device.type in ("cuda", "opencl")


@pytest.mark.skipif(len(ACCELERATORS) < 2, reason="needs two CUDA or OpenCL devices")
def test_stream_of_another_device():
    stream = gpukit.Stream(ACCELERATORS[1])
    kernel = gpukit.RawKernel(source("fizzbuzz.gk"), "fizzbuzz", device=ACCELERATORS[0])
    codes = gpukit.zeros((10,), dtype=gpukit.uint8, device=ACCELERATORS[0])
    with pytest.raises(ValueError, match="stream belongs to"):
        kernel(1, 1, (codes, 10), stream=stream)


# ---- the disk cache, across processes ---------------------------------------

COMPILE_DOUBLE_GK = """
    import os, gpukit
    source = open(os.environ["KERNEL_FILE"]).read()
    device = os.environ["KERNEL_DEVICE"]
    gpukit.RawKernel(source, "has_fp64", device=device)
    gpukit.RawKernel(source, "double_values", device=device)
    gpukit.ElementwiseKernel("float32 x", "float32 y", "y = x * 0.5f;", "halve", device=device)
    print("compiled")
"""


def cache_files(directory):
    """{name: (inode, mtime)} of the cache entries: a compile that writes
    an entry renames a new file in, which changes both."""
    return {entry.name: (entry.stat().st_ino, entry.stat().st_mtime_ns)
            for entry in os.scandir(directory) if entry.is_file()}


def test_cache_shared_across_processes(py, tmp_path, accel):
    cache = tmp_path / "kernel-cache"
    env = dict(KERNEL_FILE=KERNELS / "double.gk", KERNEL_DEVICE=accel,
               PATH=os.environ.get("PATH", ""))  # PoCL's compiler needs ld
    assert "compiled" in py(COMPILE_DOUBLE_GK, **env).stdout
    first = cache_files(cache)
    assert len(first) == 2, first  # double.gk's module, the elementwise kernel's
    assert "compiled" in py(COMPILE_DOUBLE_GK, **env).stdout
    assert cache_files(cache) == first, "the second process compiled again"
    # The entries are those kernels': gone, they come back under the same names.
    for name in first:
        (cache / name).unlink()
    py(COMPILE_DOUBLE_GK, **env)
    assert set(cache_files(cache)) == set(first)


def test_cache_shared_with_c(py, tmp_path, accel):
    """examples/double.c compiles double.gk through the C API; Python then
    finds that entry and writes nothing."""
    example = BUILD / "examples" / "example_double"
    if not example.exists():
        pytest.skip(f"{example} is not built")
    alone = tmp_path / "python-alone"
    env = dict(KERNEL_FILE=KERNELS / "double.gk", KERNEL_DEVICE=accel,
               PATH=os.environ.get("PATH", ""))
    py(COMPILE_DOUBLE_GK, GPUKIT_CACHE_DIR=alone, **env)
    python_entries = set(cache_files(alone))

    shared = tmp_path / "shared"
    c_env = {k: v for k, v in os.environ.items() if not k.startswith("GPUKIT_CACHE")}
    c_env.update(GPUKIT_CACHE_DIR=str(shared), GPUKIT_EXAMPLES_DIR=str(KERNELS))
    result = subprocess.run([str(example), accel], env=c_env, capture_output=True, text=True,
                            timeout=300, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stdout + result.stderr
    after_c = cache_files(shared)
    module = python_entries & set(after_c)
    assert len(module) == 1, "the C example and Python key double.gk alike"
    py(COMPILE_DOUBLE_GK, GPUKIT_CACHE_DIR=shared, **env)
    after_python = cache_files(shared)
    for name in module:
        assert after_python[name] == after_c[name], "Python compiled double.gk again"


CUDA_C_KERNEL = r"""
extern "C" __global__ void offsets(long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = i + 7;
}
"""


def test_cuda_c_kernels(accel):
    """language='cuda': CUDA C for NVRTC, on CUDA devices only."""
    if gpukit.device(accel).type != "cuda":
        with pytest.raises(ValueError, match="CUDA devices only"):
            gpukit.RawKernel(CUDA_C_KERNEL, "offsets", device=accel, language="cuda")
        return
    kernel = gpukit.RawKernel(CUDA_C_KERNEL, "offsets", device=accel, language="cuda")
    assert kernel.language == "cuda"
    out = gpukit.zeros((1000,), dtype=gpukit.int64, device=accel)
    kernel(4, 256, (out, np.int32(1000)))
    np.testing.assert_array_equal(host(out), np.arange(1000) + 7)
