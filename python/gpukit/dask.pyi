from typing import Any

from distributed import LocalCluster

__all__ = ["GPUCluster", "dask_setup"]

# The worker preload: a click command that Dask calls with the worker.
dask_setup: Any

class GPUCluster(LocalCluster):
    def __init__(
        self,
        n_workers: int | None = None,
        *,
        gpus_per_worker: int = 1,
        threads_per_worker: int = 1,
        require_gpu: bool = False,
        share: bool = False,
        **kwargs: Any,
    ) -> None: ...
