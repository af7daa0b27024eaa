"""The peer for bench/ls_vs_pynvml.py: what a user writes with nvidia-ml-py to
get what `gpukit ls --json` prints (the same fields, as JSON)."""
import json
import socket
from datetime import datetime

import pynvml as N

MIB = 1024 * 1024


def get(fn, *args):
    try:
        return fn(*args)
    except N.NVMLError:
        return None


def gpu(index):
    h = N.nvmlDeviceGetHandleByIndex(index)
    mem = get(N.nvmlDeviceGetMemoryInfo, h, N.nvmlMemory_v2)
    util = get(N.nvmlDeviceGetUtilizationRates, h)
    power = get(N.nvmlDeviceGetPowerUsage, h)
    limit = get(N.nvmlDeviceGetEnforcedPowerLimit, h)
    cc = get(N.nvmlDeviceGetCudaComputeCapability, h)
    mig = get(N.nvmlDeviceGetMigMode, h)
    procs = (get(N.nvmlDeviceGetComputeRunningProcesses, h) or []) + \
        (get(N.nvmlDeviceGetGraphicsRunningProcesses, h) or [])
    pci = get(N.nvmlDeviceGetPciInfo, h)
    return {
        "index": index, "uuid": N.nvmlDeviceGetUUID(h), "name": N.nvmlDeviceGetName(h),
        "temperature.gpu": get(N.nvmlDeviceGetTemperature, h, N.NVML_TEMPERATURE_GPU),
        "fan.speed": get(N.nvmlDeviceGetFanSpeed, h),
        "utilization.gpu": util.gpu if util else None,
        "utilization.enc": (get(N.nvmlDeviceGetEncoderUtilization, h) or [None])[0],
        "utilization.dec": (get(N.nvmlDeviceGetDecoderUtilization, h) or [None])[0],
        "power.draw": power // 1000 if power is not None else None,
        "enforced.power.limit": limit // 1000 if limit is not None else None,
        "memory.used": mem.used // MIB if mem else None,
        "memory.total": mem.total // MIB if mem else None,
        "pci.bus_id": pci.busId if pci else None,
        "memory.free": mem.free // MIB if mem else None,
        "utilization.memory": util.memory if util else None,
        "clocks.sm": get(N.nvmlDeviceGetClockInfo, h, N.NVML_CLOCK_SM),
        "clocks.mem": get(N.nvmlDeviceGetClockInfo, h, N.NVML_CLOCK_MEM),
        "clocks.max.sm": get(N.nvmlDeviceGetMaxClockInfo, h, N.NVML_CLOCK_SM),
        "clocks.max.mem": get(N.nvmlDeviceGetMaxClockInfo, h, N.NVML_CLOCK_MEM),
        "compute_capability": "%d.%d" % cc if cc else None,
        "persistence_mode": get(N.nvmlDeviceGetPersistenceMode, h),
        "mig.mode": mig[0] if mig else None,
        "processes": [{"pid": p.pid, "gpu_memory_usage":
                       p.usedGpuMemory // MIB if p.usedGpuMemory is not None else None}
                      for p in procs],
    }


def main():
    N.nvmlInit()
    out = {"hostname": socket.gethostname(),
           "driver_version": N.nvmlSystemGetDriverVersion(),
           "query_time": datetime.now().isoformat(),
           "gpus": [gpu(i) for i in range(N.nvmlDeviceGetCount())]}
    N.nvmlShutdown()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
