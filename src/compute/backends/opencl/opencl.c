/* Placeholder until the OpenCL driver lands: no devices. */
#include "compute/gpu/driver.h"

#include "core/error.h"

static int no_devices(gk_device *devices, int max)
{
    (void)devices, (void)max;
    return 0;
}

static gk_status unavailable(gk_device device)
{
    (void)device;
    return gk_fail(GK_ERR_NOT_FOUND, "the OpenCL backend is not built yet");
}

const gk_gpu_driver gk_opencl_driver = {
    .kind = GK_DEVICE_OPENCL,
    .name = "OpenCL",
    .list = no_devices,
    .check = unavailable,
};
