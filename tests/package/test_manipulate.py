"""The array API's manipulation, indexing, searching and set functions on
every device, against NumPy 2 (the reference where the standard leaves
freedom), including views of views, empty and 0-d arrays and every error a
user can cause."""
import numpy as np
import pytest

import gpukit as gk
from conftest import host, on

DTYPES = ["bool", "int32", "int64", "uint8", "float32", "float64"]


def sample(dtype, shape, seed=0, low=-5, high=5):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("uint"):
        low = 0
    return rng.integers(low, high, shape).astype(dtype)


def same(x, expected):
    expected = np.asarray(expected)
    assert type(x) is gk.Array
    assert x.shape == expected.shape, (x.shape, expected.shape)
    assert str(x.dtype) == expected.dtype.name, (x.dtype, expected.dtype)
    np.testing.assert_array_equal(host(x), expected)


# --- joining and splitting ----------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_concat_and_stack_match_numpy(device, dtype):
    na, nb = sample(dtype, (2, 3), 1), sample(dtype, (2, 5), 2)
    a, b = on(na, device), on(nb, device)
    same(gk.concat([a, b], axis=1), np.concat([na, nb], axis=1))
    same(gk.concat((a, b), axis=-1), np.concat([na, nb], axis=-1))
    same(gk.concat([a.T, b.T]), np.concat([na.T, nb.T]))
    same(gk.concat([a, b], axis=None), np.concat([na, nb], axis=None))
    same(gk.stack([a, a[:, ::-1]], axis=1), np.stack([na, na[:, ::-1]], axis=1))
    same(gk.stack([a]), np.stack([na]))
    parts = gk.unstack(b, axis=1)
    assert isinstance(parts, tuple) and len(parts) == 5
    for part, expected in zip(parts, np.unstack(nb, axis=1)):
        same(part, expected)


def test_concat_promotes_like_numpy(device):
    na, nb = np.arange(3, dtype=np.int32), np.linspace(0, 1, 2, dtype=np.float32)
    same(gk.concat([on(na, device), on(nb, device)]), np.concat([na, nb]))
    nc = np.array([True, False])
    same(gk.concat([on(nc, device), on(na.astype(np.uint8), device)]),
         np.concat([nc, na.astype(np.uint8)]))


def test_join_errors_name_the_problem(device):
    a, b = gk.zeros((2, 3), device=device), gk.zeros((3, 3), device=device)
    with pytest.raises(ValueError, match="must match except along axis 1"):
        gk.concat([a, b], axis=1)
    with pytest.raises(ValueError, match="at least one"):
        gk.concat([])
    with pytest.raises(ValueError, match="must be equal"):
        gk.stack([a, b])
    with pytest.raises(TypeError, match="sequence of arrays"):
        gk.concat(a)
    with pytest.raises(ValueError, match="out of range"):
        gk.concat([a, a], axis=2)


# --- views ------------------------------------------------------------------

def test_views_match_numpy(device):
    na = sample("float32", (2, 3, 4), 3)
    a = on(na, device)
    same(gk.flip(a), np.flip(na))
    same(gk.flip(a, axis=1), np.flip(na, axis=1))
    same(gk.flip(a, axis=(0, -1)), np.flip(na, axis=(0, -1)))
    same(gk.flip(gk.flip(a, axis=2), axis=2), na)
    same(gk.moveaxis(a, 0, -1), np.moveaxis(na, 0, -1))
    same(gk.moveaxis(a, (0, 1), (2, 0)), np.moveaxis(na, (0, 1), (2, 0)))
    same(gk.expand_dims(a, axis=1), np.expand_dims(na, axis=1))
    same(gk.expand_dims(a, axis=(0, -1)), np.expand_dims(na, axis=(0, -1)))
    row = on(sample("int32", (1, 4, 1)), device)
    same(gk.squeeze(row, axis=(0, 2)), np.squeeze(sample("int32", (1, 4, 1)), axis=(0, 2)))
    same(gk.squeeze(row, 0), np.squeeze(sample("int32", (1, 4, 1)), 0))
    # views share memory with their base
    flipped = gk.flip(a, axis=0)
    flipped[0, 0, 0] = 99
    assert host(a)[1, 0, 0] == 99


def test_view_errors(device):
    a = gk.zeros((2, 1, 3), device=device)
    with pytest.raises(ValueError, match="not 1"):
        gk.squeeze(a, axis=0)
    with pytest.raises(ValueError, match="listed twice"):
        gk.flip(a, axis=(0, -3))
    with pytest.raises(ValueError, match="as many"):
        gk.moveaxis(a, (0, 1), 2)
    with pytest.raises(TypeError, match="int"):
        gk.squeeze(a, axis="0")
    with pytest.raises(TypeError):
        gk.squeeze(a)


def test_broadcasting_functions(device):
    assert gk.broadcast_shapes((8, 1, 6, 1), (7, 1, 5)) == np.broadcast_shapes((8, 1, 6, 1),
                                                                               (7, 1, 5))
    assert gk.broadcast_shapes() == ()
    with pytest.raises(ValueError, match="do not broadcast"):
        gk.broadcast_shapes((2, 3), (4,))
    na, nb = sample("int64", (3, 1)), sample("int64", (4,))
    arrays = gk.broadcast_arrays(on(na, device), on(nb, device))
    assert isinstance(arrays, tuple)  # the standard's 2025.12 return type
    for x, expected in zip(arrays, np.broadcast_arrays(na, nb)):
        same(x, expected)


def test_broadcast_views_refuse_writes(device):
    """A broadcast view's elements stand for many: writing it, or any view
    of it, is a ValueError (NumPy makes it read-only), and nothing changes."""
    base = on(np.array([1.0, 2.0]), device)
    x = gk.broadcast_to(base, (3, 2))
    for write in [lambda: x.__setitem__(0, 5), lambda: x.__setitem__((1, 1), 5),
                  lambda: x[::2].__setitem__(Ellipsis, 5), lambda: x.__iadd__(1),
                  lambda: x.T.__setitem__(0, 5)]:
        with pytest.raises(ValueError, match="broadcast"):
            write()
    assert host(base).tolist() == [1.0, 2.0]
    copy = gk.asarray(x, copy=True)
    copy[0] = 5  # a copy is writable
    assert host(copy)[0].tolist() == [5.0, 5.0]
    one = gk.broadcast_to(base, (1, 2))  # nothing stretched: a plain view
    one[0, 0] = 7
    assert host(base).tolist() == [7.0, 2.0]


# --- copies -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["bool", "int32", "float64"])
def test_roll_tile_repeat_match_numpy(device, dtype):
    na = sample(dtype, (3, 4), 4)
    a = on(na, device)
    for shift, axis in [(2, None), (-1, 1), (7, 0), ((1, 2), (0, 1)), (1, (0, 1))]:
        same(gk.roll(a, shift, axis=axis), np.roll(na, shift, axis=axis))
    same(gk.roll(a[::-1], 1, axis=1), np.roll(na[::-1], 1, axis=1))
    for reps in [2, (2, 1), (1, 2, 3), ()]:
        same(gk.tile(a, reps), np.tile(na, reps))
    for repeats, axis in [(2, None), (3, 0), (0, 1)]:
        same(gk.repeat(a, repeats, axis=axis), np.repeat(na, repeats, axis=axis))
    counts = np.array([1, 0, 2, 3])
    same(gk.repeat(a, on(counts, device), axis=1), np.repeat(na, counts, axis=1))
    same(gk.repeat(a[0], on(counts, device)), np.repeat(na[0], counts))


def test_copy_errors(device):
    a = gk.zeros((2, 3), device=device)
    with pytest.raises(ValueError, match=">= 0"):
        gk.repeat(a, -1)
    with pytest.raises(ValueError, match="one per element"):
        gk.repeat(a, gk.asarray([1, 2], device=device), axis=1)
    with pytest.raises(ValueError, match="tuple of axes"):
        gk.roll(a, (1, 2))


# --- indexing and searching -------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_take_matches_numpy(device, dtype):
    na = sample(dtype, (3, 4, 5), 5)
    a = on(na, device)
    for indices, axis in [([0, 2, -1], 0), ([3, 3, 0], 1), ([[4, 0], [1, -5]], 2),
                          ([], 1), ([7, -12], None)]:
        ni = np.array(indices, dtype=np.int64)
        same(gk.take(a, on(ni, device), axis=axis), np.take(na, ni, axis=axis))
    ni = np.array([2, 0], dtype=np.int32)
    same(gk.take(a[:, ::-1], on(ni, device), axis=1), np.take(na[:, ::-1], ni, axis=1))


def test_take_errors(device):
    a = gk.zeros((3, 4), device=device)
    with pytest.raises(IndexError, match="index 4 is out of range for axis 1 of length 4"):
        gk.take(a, gk.asarray([1, 4], device=device), axis=1)
    with pytest.raises(IndexError, match="-4"):
        gk.take(a, gk.asarray([-4], device=device), axis=0)
    with pytest.raises(ValueError, match="integer"):
        gk.take(a, gk.asarray([1.0], device=device), axis=0)


def test_take_along_axis_matches_numpy(device):
    na = sample("float64", (3, 4), 6)
    order = np.argsort(na, axis=1)
    same(gk.take_along_axis(on(na, device), on(order, device), axis=1),
         np.take_along_axis(na, order, axis=1))
    first = np.array([[0], [3], [1]])
    same(gk.take_along_axis(on(na, device), on(first, device), axis=1),
         np.take_along_axis(na, first, axis=1))
    with pytest.raises(ValueError, match="as many axes"):
        gk.take_along_axis(on(na, device), gk.asarray([0], device=device), axis=1)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64"])
def test_searchsorted_matches_numpy(device, dtype):
    sorted_ = np.array([0, 1, 1, 1, 3, 4, 4], dtype=dtype)
    values = np.array([[-1, 0, 1], [2, 4, 9]]).clip(0 if dtype == "uint8" else -9).astype(dtype)
    for side in ("left", "right"):
        same(gk.searchsorted(on(sorted_, device), on(values, device), side=side),
             np.searchsorted(sorted_, values, side=side))
    shuffled = np.array([4, 1, 0, 3, 1], dtype=dtype)
    sorter = np.argsort(shuffled, kind="stable")
    same(gk.searchsorted(on(shuffled, device), on(values, device), sorter=on(sorter, device)),
         np.searchsorted(shuffled, values, sorter=sorter))
    with pytest.raises(ValueError, match="'left' or 'right'"):
        gk.searchsorted(on(sorted_, device), on(values, device), side="middle")


def test_searchsorted_checks_its_sorter(device):
    # a sorter of another length searched a different array, and a negative
    # index wrapped, without a word; NumPy refuses both
    x1 = on(np.array([3.0, 1.0, 2.0, 0.0]), device)
    values = on(np.array([1.5, 2.5]), device)
    for bad in ([3, 1], [3, 1, 2, -4], [3, 1, 2, 7], [[3, 1], [2, 0]]):
        with pytest.raises(ValueError, match="searchsorted: the sorter"):
            gk.searchsorted(x1, values, sorter=on(np.array(bad), device))
    with pytest.raises(TypeError, match="searchsorted: the sorter is float64"):
        gk.searchsorted(x1, values, sorter=on(np.array([3.0, 1, 2, 0]), device))
    same(gk.searchsorted(x1, values, sorter=on(np.array([3, 1, 2, 0], np.uint8), device)),
         [2, 3])
    empty = on(np.zeros(0), device)
    same(gk.searchsorted(empty, values, sorter=on(np.zeros(0, np.int64), device)), [0, 0])


def test_searchsorted_nan_sorts_last(device):
    sorted_ = np.array([1.0, 2.0, np.nan, np.nan])
    values = np.array([np.nan, 2.0, np.inf])
    for side in ("left", "right"):
        same(gk.searchsorted(on(sorted_, device), on(values, device), side=side),
             np.searchsorted(sorted_, values, side=side))


def test_nonzero_and_count_nonzero(device):
    na = np.array([[0, 1.5, np.nan], [-0.0, 0, 2]])
    a = on(na, device)
    for got, expected in zip(gk.nonzero(a), np.nonzero(na)):
        same(got, expected)
    nb = sample("bool", (2, 3, 4), 7)
    for got, expected in zip(gk.nonzero(on(nb, device)), np.nonzero(nb)):
        same(got, expected)
    same(gk.count_nonzero(a), np.count_nonzero(na))
    same(gk.count_nonzero(on(nb, device), axis=(0, 2), keepdims=True),
         np.count_nonzero(nb, axis=(0, 2), keepdims=True))
    # bools whose bytes are not 0 or 1 (a view of other memory) count as
    # True, as NumPy counts them, summed without a comparison pass
    odd = np.array([[0, 2, 1], [255, 0, 7]], dtype=np.uint8).view(np.bool_)
    same(gk.count_nonzero(gk.asarray(odd, device=device), axis=1), np.count_nonzero(odd, axis=1))
    assert bool(gk.any(gk.asarray(odd[:, :1], device=device)))
    with pytest.raises(ValueError, match="0-d"):
        gk.nonzero(gk.asarray(1.0, device=device))


# --- sets ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int32", "uint8", "float64", "bool"])
def test_unique_matches_numpy(device, dtype):
    nx = sample(dtype, (4, 5), 8, low=0, high=4)
    x = on(nx, device)
    result = gk.unique_all(x)
    expected = np.unique_all(nx)
    assert type(result).__name__ == "UniqueAllResult"
    for field in ("values", "indices", "inverse_indices", "counts"):
        same(getattr(result, field), getattr(expected, field))
    counts = gk.unique_counts(x)
    same(counts.values, np.unique_counts(nx).values)
    same(counts.counts, np.unique_counts(nx).counts)
    inverse = gk.unique_inverse(x)
    same(inverse.inverse_indices, np.unique_inverse(nx).inverse_indices)
    # (NumPy 2.4's unique_values need not sort; ours is ascending)
    same(gk.unique_values(x), np.sort(np.unique_values(nx)))


def test_unique_keeps_each_nan(device):
    nx = np.array([np.nan, 1.0, np.nan, -0.0, 0.0])
    values = host(gk.unique_values(on(nx, device)))
    assert values.shape == (4,) and np.isnan(values[2:]).all()
    np.testing.assert_array_equal(values[:2], [0.0, 1.0])
    same(gk.unique_counts(on(nx, device)).counts, [2, 1, 1, 1])


@pytest.mark.parametrize("invert", [False, True])
def test_isin_matches_numpy(device, invert):
    n1 = np.array([[1, 5, -2], [7, 5, 0]])
    n2 = np.array([5.0, 0.0, 9.0, -2.0])
    same(gk.isin(on(n1, device), on(n2, device), invert=invert),
         np.isin(n1, n2, invert=invert))
    same(gk.isin(on(n1, device), gk.zeros(0, dtype="int32", device=device)),
         np.isin(n1, np.zeros(0, dtype=np.int32)))


@pytest.mark.parametrize("invert", [False, True])
def test_isin_of_complex_matches_numpy(device, invert):
    # complex numbers have no order to search, but equality is defined;
    # each NaN is in nothing, -0 is 0, and a real x meets complex test values
    n1 = np.array([[1 + 1j, complex(np.nan, 0), 1 - 1j, 0j],
                   [complex(0, np.nan), -1, 1 + 1j, complex(-0.0, 0)]])
    n2 = np.array([1 + 1j, complex(np.nan, 0), 0j, 5], dtype=np.complex64)
    same(gk.isin(on(n1, device), on(n2, device), invert=invert),
         np.isin(n1, n2, invert=invert))
    same(gk.isin(on(np.array([1.0, 2.0]), device), on(np.array([1 + 0j]), device)),
         [True, False])


def test_python_ints_searched_beside_uint64(device):
    # an int that fits the array's dtype is of it (exactly, beyond int64);
    # one that does not is compared by value
    top = gk.asarray([0, 2 ** 63, 2 ** 64 - 1], dtype="uint64", device=device)
    assert int(gk.searchsorted(top, 2 ** 63)) == 1
    assert gk.isin(top, 2 ** 63).tolist() == [False, True, False]
    small = gk.asarray([1, 2], dtype="uint8", device=device)
    assert int(gk.searchsorted(small, 300)) == 2
    assert gk.isin(small, 300).tolist() == [False, False]


# --- x[key] and x[key] = v with integer arrays and boolean masks -------------

def advanced_keys(na):
    mask2 = na.sum(axis=2) > 0
    return [
        np.array([0, -1, 1]),                      # one integer array
        [[1, 0], [2, 2]],                          # a nested list: 2-d indices
        (slice(None), [3, 0]),                     # after a slice
        (1, slice(None, None, -1), [0, 4, 2]),     # an int, a reversed slice, an array
        ([0, 2], [1, 3]),                          # two arrays, adjacent: pairs
        ([0, 2], slice(1, 3), [1, 3]),             # two arrays apart: their axes first
        (Ellipsis, [1, -1]),                       # after an ellipsis
        (None, [2, 1]),                            # after a new axis
        na > 0,                                    # a full mask
        mask2,                                     # a mask over the leading axes
        (slice(None), mask2[0]),                   # a mask after a slice
        (na[:, 0, 0] > 0, slice(None), [1]),       # a mask, a slice and an array
    ]


@pytest.mark.parametrize("dtype", ["int32", "float64", "bool"])
def test_advanced_indexing_matches_numpy(device, dtype):
    na = sample(dtype, (3, 4, 5), 9)
    x = on(na, device)
    for key in advanced_keys(na):
        gkey = tuple(on(k, device) if isinstance(k, np.ndarray) else k for k in key) \
            if isinstance(key, tuple) else (on(key, device) if isinstance(key, np.ndarray)
                                            else key)
        same(x[gkey], na[key])


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_advanced_assignment_matches_numpy(device, dtype):
    base = sample(dtype, (3, 4, 5), 10)
    for key in advanced_keys(base):
        na = base.copy()
        x = on(na, device)
        na[key] = 7
        x[key] = 7
        same(x, na)
        # values that broadcast to the selection
        na = base.copy()
        x = on(na, device)
        shape = na[key].shape
        values = np.arange(int(np.prod(shape[-1:])) if shape else 1, dtype=dtype).reshape(shape[-1:])
        na[key] = values
        x[key] = on(values, device)
        same(x, na)
    # a non-contiguous target: a transposed view written through
    na = base.copy()
    x = on(na, device)
    xt, nt = x.mT, np.swapaxes(na, -1, -2)
    nt[nt > 0] = -1
    xt[xt > 0] = -1
    same(x, na)
