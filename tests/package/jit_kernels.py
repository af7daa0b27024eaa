"""@gpukit.jit kernels the tests share: the tutorial's Numba labs as a
Numba user writes them, with gpukit's names. At module level so that they
pickle by reference."""
import math

import gpukit


@gpukit.jit
def copy(src, dst):
    i = gpukit.grid(1)
    if i < src.size:
        dst[i] = src[i]


@gpukit.jit
def double(x):
    i = gpukit.grid(1)
    if i < x.size:
        x[i] = x[i] * 2


@gpukit.jit
def fizzbuzz(out):
    i = gpukit.grid(1)
    if i < out.size:
        n = i + 1
        if n % 15 == 0:
            out[i] = 3
        elif n % 5 == 0:
            out[i] = 2
        elif n % 3 == 0:
            out[i] = 1
        else:
            out[i] = 0


@gpukit.jit
def blur(src, dst):
    x, y, c = gpukit.grid(3)
    height, width, channels = src.shape
    if x < height and y < width and c < channels:
        total = 0.0
        count = 0
        for dx in range(-1, 2):
            for dy in range(-1, 2):
                xx = x + dx
                yy = y + dy
                if 0 <= xx < height and 0 <= yy < width:
                    total += src[xx, yy, c]
                    count += 1
        dst[x, y, c] = total / count


@gpukit.jit
def grayscale(rgb, out):
    row, col = gpukit.grid(2)
    if row < out.shape[0] and col < out.shape[1]:
        out[row, col] = 0.299 * rgb[row, col, 0] + 0.587 * rgb[row, col, 1] + 0.114 * rgb[row, col, 2]


THREADS = 128


@gpukit.jit
def block_sum(values, partial):
    buffer = gpukit.shared.array(THREADS, gpukit.float32)
    t = gpukit.threadIdx.x
    i = gpukit.grid(1)
    buffer[t] = values[i] if i < values.size else 0
    gpukit.syncthreads()
    step = THREADS // 2
    while step > 0:
        if t < step:
            buffer[t] += buffer[t + step]
        gpukit.syncthreads()
        step //= 2
    if t == 0:
        partial[gpukit.blockIdx.x] = buffer[0]


@gpukit.jit
def histogram(values, bins):
    i = gpukit.grid(1)
    if i < values.size:
        gpukit.atomic.add(bins, values[i] % bins.shape[0], 1)


@gpukit.jit
def extremes(values, result, total):
    i = gpukit.grid(1)
    if i < values.size:
        gpukit.atomic.max(result, 0, values[i])
        gpukit.atomic.min(result, 1, values[i])
        gpukit.atomic.add(total, 0, values[i])


@gpukit.jit(device=True)
def clamp(v, low, high):
    return max(low, min(v, high))


@gpukit.jit(device=True)
def clamp_unit(v):
    return clamp(v, -1.0, 1.0)


@gpukit.jit
def clamp_all(a):
    i = gpukit.grid(1)
    if i < a.size:
        a[i] = clamp_unit(a[i]) + math.sqrt(4.0)


@gpukit.jit(device=True)
def store_seven(a, i):
    a[i] = 7


@gpukit.jit
def seven_through_a_device_function(a):
    i = gpukit.grid(1)
    if i < a.size:
        store_seven(a, i)
