"""Dask workers on GPUs that gpukit picks and reserves.

``GPUCluster`` is a ``distributed.LocalCluster`` of nanny-managed worker
processes, one per GPU that fits the selection (the keywords of
``gpukit.reserve``). Each worker reserves its GPU itself, when it starts and
before any CUDA library loads, and holds the lease for its whole life: a
killed worker frees its GPU, and the nanny's replacement reserves one
again. Workers advertise a ``GPU`` resource, so
``dask.annotate(resources={"GPU": 1})`` and ``submit(..., resources=...)``
route work to them.

On other machines (Slurm, ssh, dask-jobqueue) the same module is a worker
preload::

    dask worker tcp://scheduler:8786 --preload gpukit.dask --min-free 20G

reserves a GPU on whatever node the worker starts on.
"""
import contextlib
import inspect
import logging
import os
import warnings

from . import _gpukit

try:
    import click
    from distributed import LocalCluster, Nanny, Worker
except ImportError as error:  # pragma: no cover (the message is the point)
    raise ImportError("gpukit.dask needs Dask's distributed scheduler: "
                      "pip install 'dask[distributed]'") from error

__all__ = ["GPUCluster", "dask_setup"]

logger = logging.getLogger("gpukit.dask")

# The selection keywords of gpukit.reserve, as command-line options of the
# preload (the spelling of `gpukit run`).
_OPTIONS = {
    "order": str, "min_free": str, "min_free_ratio": str, "max_util": int,
    "min_total": str, "max_procs": int, "gpus": str, "exclude": str, "wait": str,
}


# What a gpukit job's environment holds (include/gpukit/launch.h).
_LEASE, _OUTER = "GPUKIT_LEASE", "GPUKIT_OUTER_CUDA_VISIBLE_DEVICES"


@contextlib.contextmanager
def _outside_reservation():
    """os.environ as it was outside the gpukit reservation this process runs
    under (a gpukit Jupyter kernel's, `gpukit run`'s), if any: the GPUs
    that a cluster's workers, jobs of their own, choose among."""
    saved = {name: os.environ.get(name)
             for name in (_LEASE, _OUTER, "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")}
    if not saved[_LEASE]:
        yield
        return
    for name in (_LEASE, _OUTER, "NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"):
        os.environ.pop(name, None)
    if saved[_OUTER] is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = saved[_OUTER]
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _argv(count, share, require_gpu, selection):
    """The preload's command line for these keywords."""
    argv = ["--count", str(count), "--new-lease"]
    for name, value in selection.items():
        if name not in _OPTIONS:
            raise TypeError(f"GPUCluster() got an unexpected keyword argument '{name}'")
        if value is None or value is False:
            continue
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        argv += ["--" + name.replace("_", "-"), "" if value is True else str(value)]
    if share:
        argv.append("--share")
    if require_gpu:
        argv.append("--require-gpu")
    return argv


def _selection(params):
    """gpukit.reserve's keywords from the preload's options."""
    selection = {name: params[name] for name in _OPTIONS if params.get(name) is not None}
    if "wait" in selection:
        # "" (a bare --wait): wait without limit, as reserve(wait=True)
        selection["wait"] = selection["wait"] or True
    return selection


@click.command(context_settings={"ignore_unknown_options": False})
@click.option("--count", type=int, default=1, show_default=True, help="GPUs per worker")
@click.option("--order", help="free, free-ratio, power, util, index or random")
@click.option("--min-free", "min_free", help="at least this much free memory, e.g. 20G")
@click.option("--min-free-ratio", "min_free_ratio", help="at least this share free, e.g. 50%")
@click.option("--max-util", "max_util", type=int, help="at most this busy, in percent")
@click.option("--min-total", "min_total", help="at least this much memory in all")
@click.option("--max-procs", "max_procs", type=int, help="at most this many processes there")
@click.option("--gpus", help="only these GPUs (indices or UUIDs, comma-separated)")
@click.option("--exclude", help="never these GPUs")
@click.option("--share", is_flag=True, help="share GPUs with other shared reservations")
@click.option("--wait", help="wait in line this long when nothing fits ('' : no limit)")
@click.option("--require-gpu", "require_gpu", is_flag=True,
              help="fail to start without a GPU, instead of working on the CPU")
@click.option("--new-lease", "new_lease", is_flag=True,
              help="reserve GPUs of its own even when started inside a gpukit job "
                   "(GPUCluster's workers; without it, `gpukit run -- dask worker ...` "
                   "keeps the job's GPUs)")
def dask_setup(worker, count, share, require_gpu, new_lease, **params):
    """The preload: reserves GPUs for this worker process and advertises them
    as its ``GPU`` resource (Dask calls it as the worker starts, before it
    joins the scheduler and before any task could load CUDA)."""
    if new_lease and os.environ.get(_LEASE):
        # The job that started the cluster keeps its GPUs; this worker is a
        # job of its own among the GPUs that job was given.
        with _outside_reservation():
            outside = {name: os.environ.get(name)
                       for name in (_LEASE, _OUTER, "CUDA_VISIBLE_DEVICES",
                                    "NVIDIA_VISIBLE_DEVICES")}
        for name, value in outside.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    try:
        reservation = _gpukit.reserve(count, share=share, **_selection(params))
    except BaseException as error:
        # No GPU for this worker: hide every GPU from it, as `gpukit run
        # --cpu-fallback` does (unset, CUDA_VISIBLE_DEVICES means all of
        # them, other jobs' reserved ones too). Also when the preload fails:
        # distributed logs a preload's exception and starts the worker anyway.
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
        if require_gpu or not isinstance(error, (_gpukit.NoGPUError, TimeoutError)):
            raise
        logger.warning("gpukit: no GPU for worker %s, it works on the CPU: %s", worker.name,
                       error)
        return
    worker.gpukit_reservation = reservation  # held as long as the worker lives
    for resources in (worker.state.total_resources, worker.state.available_resources):
        resources["GPU"] = count  # what it holds, whatever --resources said
    logger.info("gpukit: worker %s holds %s (CUDA_VISIBLE_DEVICES=%s)", worker.name,
                ", ".join(f"GPU {g.index}" for g in reservation.gpus),
                os.environ.get("CUDA_VISIBLE_DEVICES"))


def _fitting(count_per_worker, share, selection):
    """How many workers' worth of GPUs fit the selection now."""
    pick = {k: v for k, v in selection.items() if k != "wait"}
    usable = sum(1 for gpu in _gpukit.gpus() if gpu.state == "ok")
    for workers in range(usable // count_per_worker, 0, -1):
        try:
            _gpukit.pick(workers * count_per_worker, share=share, **pick)
            return workers
        except _gpukit.NoGPUError:
            continue
    return 0


def _check_keywords(kwargs):
    """A keyword neither gpukit's nor LocalCluster's, Nanny's or Worker's
    is a TypeError here (LocalCluster would pass it on to each worker, which
    fails to start with a message far from the cause)."""
    known = set()
    for cls in (LocalCluster, Nanny, Worker):
        known |= set(inspect.signature(cls.__init__).parameters)
    for name in kwargs:
        if name not in known:
            raise TypeError(f"GPUCluster() got an unexpected keyword argument '{name}'")


class GPUCluster(LocalCluster):
    """A Dask cluster on this machine with one worker per GPU that fits.

    ``GPUCluster(n_workers=None, *, gpus_per_worker=1, threads_per_worker=1,
    require_gpu=False, share=False, order=..., min_free=..., wait=..., ...)``

    n_workers: how many workers; by default as many as there are GPUs that
    fit the selection now. The selection keywords are gpukit.reserve's
    (``order``, ``min_free``, ``min_free_ratio``, ``max_util``,
    ``min_total``, ``max_procs``, ``gpus``, ``exclude``, ``share``,
    ``wait``). Each worker is a separate process with its own nanny, which
    reserves its GPU(s) as it starts and holds them for its whole life.

    Without a GPU that fits, the workers run on the CPU (n_workers, or one
    per core) with every GPU hidden (``CUDA_VISIBLE_DEVICES`` empty), and a
    ``RuntimeWarning`` says why, as it does for the workers past the GPUs
    that fit when n_workers asks for more; with ``require_gpu=True`` it
    raises ``gpukit.NoGPUError`` instead. With ``wait``, workers whose GPUs
    are not free yet wait in line for them instead, and the cluster is
    returned once they have them, as ``reserve(wait=...)`` returns (when
    none fits now, n_workers defaults to every usable GPU); a bad ``wait``
    is a ValueError here, before any worker starts. Other keywords go to
    ``distributed.LocalCluster`` (``dashboard_address``, ``memory_limit``,
    ``silence_logs``, ...).
    """

    def __init__(self, n_workers=None, *, gpus_per_worker=1, threads_per_worker=1,
                 require_gpu=False, share=False, **kwargs):
        selection = {name: kwargs.pop(name) for name in list(kwargs) if name in _OPTIONS}
        _check_keywords(kwargs)
        if not isinstance(gpus_per_worker, int) or isinstance(gpus_per_worker, bool):
            raise TypeError(f"gpus_per_worker must be an int, not {gpus_per_worker!r}")
        if gpus_per_worker < 1:
            raise ValueError(f"gpus_per_worker must be at least 1, not {gpus_per_worker}")
        if "wait" in selection:
            # Read here as reserve() reads it, so a bad value fails in the
            # client, not in each worker's log; then as the preload takes it.
            seconds = _gpukit._wait_seconds(selection.pop("wait"))
            if seconds != 0:
                selection["wait"] = True if seconds is None else repr(seconds)
        with _outside_reservation():
            fitting = _fitting(gpus_per_worker, share, selection)
            usable = sum(1 for gpu in _gpukit.gpus() if gpu.state == "ok")
        # With wait=, workers wait in line for GPUs that do not fit yet.
        waits = "wait" in selection and usable >= gpus_per_worker
        if fitting == 0 and not waits:
            with _outside_reservation():
                why = "no GPU fits the selection" if _gpukit.gpus() else "this machine has no GPU"
            if require_gpu:
                raise _gpukit.NoGPUError(f"GPUCluster: {why} (require_gpu=True)")
            warnings.warn(f"GPUCluster: {why}; its workers work on the CPU", RuntimeWarning,
                          stacklevel=2)
        if n_workers is not None and 0 < fitting < n_workers and not waits:
            # The workers past those GPUs would find none (they do not wait).
            why = (f"n_workers={n_workers}, but GPUs for only {fitting} fit the selection "
                   f"(gpus_per_worker={gpus_per_worker})")
            if require_gpu:
                raise _gpukit.NoGPUError(f"GPUCluster: {why} (require_gpu=True)")
            warnings.warn(f"GPUCluster: {why}; the other {n_workers - fitting} work on the CPU",
                          RuntimeWarning, stacklevel=2)
        if n_workers is None:
            n_workers = fitting or (usable // gpus_per_worker if waits else os.cpu_count() or 1)
        kwargs.setdefault("host", "127.0.0.1")
        kwargs.setdefault("dashboard_address", None)
        kwargs.setdefault("worker_class", Nanny)
        super().__init__(n_workers=n_workers, threads_per_worker=threads_per_worker,
                         processes=True, preload=["gpukit.dask"],
                         preload_argv=_argv(gpus_per_worker, share,
                                            require_gpu and fitting > 0, selection),
                         **kwargs)


# Public under gpukit.dask (help(gpukit.dask) lists them there).
GPUCluster.__module__ = "gpukit.dask"
