/* Run-time loading of the OpenCL ICD loader: see opencl.h. */
#include "ext/opencl.h"

#include "core/error.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPENCL_LIBRARY "libOpenCL.so.1"
#define OPENCL_FIX                                                                     \
    "install an OpenCL driver: apt install pocl-opencl-icd for the CPU, or your GPU " \
    "vendor's ICD (with the ocl-icd-libopencl1 loader)"

/* Written once under pthread_once, read-only afterwards. */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static gk_opencl api_table;
static gk_status load_status;
static char load_message[768];

/* Function pointers cannot be assigned from void* in ISO C; memcpy is the
 * portable way to move a dlsym result into a typed pointer. A missing
 * entry point leaves the library unusable: the first one is named. */
#define LOAD(field)                                                           \
    do {                                                                      \
        void *sym_ = dlsym(api_table.library, "cl" #field);                   \
        memcpy(&api_table.field, &sym_, sizeof sym_);                         \
        if (!sym_ && !missing)                                                \
            missing = "cl" #field;                                            \
    } while (0)

static void load_library(void)
{
    const char *override = getenv("GPUKIT_OPENCL_LIBRARY");
    const char *target = override && *override ? override : OPENCL_LIBRARY;
    api_table.library = dlopen(target, RTLD_NOW | RTLD_LOCAL);
    if (!api_table.library) {
        const char *why = dlerror();
        load_status = GK_ERR_NOT_FOUND;
        snprintf(load_message, sizeof load_message, "cannot load the OpenCL library %s (%s): %s",
                 target, why ? why : "unknown reason", OPENCL_FIX);
        return;
    }
    snprintf(api_table.path, sizeof api_table.path, "%s", target);

    const char *missing = NULL;
    LOAD(GetPlatformIDs);
    LOAD(GetPlatformInfo);
    LOAD(GetDeviceIDs);
    LOAD(GetDeviceInfo);
    LOAD(CreateContext);
    LOAD(ReleaseContext);
    LOAD(CreateCommandQueue);
    LOAD(ReleaseCommandQueue);
    LOAD(CreateBuffer);
    LOAD(CreateSubBuffer);
    LOAD(ReleaseMemObject);
    LOAD(EnqueueWriteBuffer);
    LOAD(EnqueueReadBuffer);
    LOAD(EnqueueCopyBuffer);
    LOAD(EnqueueMapBuffer);
    LOAD(EnqueueUnmapMemObject);
    LOAD(Flush);
    LOAD(Finish);
    LOAD(CreateProgramWithSource);
    LOAD(CreateProgramWithBinary);
    LOAD(BuildProgram);
    LOAD(GetProgramInfo);
    LOAD(GetProgramBuildInfo);
    LOAD(ReleaseProgram);
    LOAD(CreateKernel);
    LOAD(ReleaseKernel);
    LOAD(GetKernelInfo);
    LOAD(GetKernelWorkGroupInfo);
    LOAD(SetKernelArg);
    LOAD(EnqueueNDRangeKernel);
    LOAD(EnqueueMarkerWithWaitList);
    LOAD(EnqueueBarrierWithWaitList);
    LOAD(ReleaseEvent);
    LOAD(GetKernelArgInfo);

    if (missing) {
        /* An OpenCL 1.1 loader lacks the 1.2 entry points (markers with
         * wait lists, barriers); gpukit needs OpenCL 1.2. */
        load_status = GK_ERR_NOT_FOUND;
        snprintf(load_message, sizeof load_message,
                 "the OpenCL library %s has no %s (gpukit needs an OpenCL 1.2 or later "
                 "ICD loader): %s",
                 target, missing, OPENCL_FIX);
        dlclose(api_table.library);
        memset(&api_table, 0, sizeof api_table);
        return;
    }
    load_status = GK_OK;
}

gk_status gk_opencl_get(const gk_opencl **api)
{
    pthread_once(&load_once, load_library);
    if (load_status != GK_OK) {
        *api = NULL;
        /* Messages are per thread, so each caller gets its own copy. */
        return gk_fail(load_status, "%s", load_message);
    }
    *api = &api_table;
    return GK_OK;
}

const char *gk_opencl_error_name(cl_int code)
{
    switch (code) {
    case 0: return "CL_SUCCESS";
    case -1: return "CL_DEVICE_NOT_FOUND";
    case -2: return "CL_DEVICE_NOT_AVAILABLE";
    case -3: return "CL_COMPILER_NOT_AVAILABLE";
    case -4: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5: return "CL_OUT_OF_RESOURCES";
    case -6: return "CL_OUT_OF_HOST_MEMORY";
    case -7: return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case -8: return "CL_MEM_COPY_OVERLAP";
    case -9: return "CL_IMAGE_FORMAT_MISMATCH";
    case -10: return "CL_IMAGE_FORMAT_NOT_SUPPORTED";
    case -11: return "CL_BUILD_PROGRAM_FAILURE";
    case -12: return "CL_MAP_FAILURE";
    case -13: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case -14: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case -15: return "CL_COMPILE_PROGRAM_FAILURE";
    case -16: return "CL_LINKER_NOT_AVAILABLE";
    case -17: return "CL_LINK_PROGRAM_FAILURE";
    case -18: return "CL_DEVICE_PARTITION_FAILED";
    case -19: return "CL_KERNEL_ARG_INFO_NOT_AVAILABLE";
    case -30: return "CL_INVALID_VALUE";
    case -31: return "CL_INVALID_DEVICE_TYPE";
    case -32: return "CL_INVALID_PLATFORM";
    case -33: return "CL_INVALID_DEVICE";
    case -34: return "CL_INVALID_CONTEXT";
    case -35: return "CL_INVALID_QUEUE_PROPERTIES";
    case -36: return "CL_INVALID_COMMAND_QUEUE";
    case -37: return "CL_INVALID_HOST_PTR";
    case -38: return "CL_INVALID_MEM_OBJECT";
    case -39: return "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR";
    case -40: return "CL_INVALID_IMAGE_SIZE";
    case -41: return "CL_INVALID_SAMPLER";
    case -42: return "CL_INVALID_BINARY";
    case -43: return "CL_INVALID_BUILD_OPTIONS";
    case -44: return "CL_INVALID_PROGRAM";
    case -45: return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46: return "CL_INVALID_KERNEL_NAME";
    case -47: return "CL_INVALID_KERNEL_DEFINITION";
    case -48: return "CL_INVALID_KERNEL";
    case -49: return "CL_INVALID_ARG_INDEX";
    case -50: return "CL_INVALID_ARG_VALUE";
    case -51: return "CL_INVALID_ARG_SIZE";
    case -52: return "CL_INVALID_KERNEL_ARGS";
    case -53: return "CL_INVALID_WORK_DIMENSION";
    case -54: return "CL_INVALID_WORK_GROUP_SIZE";
    case -55: return "CL_INVALID_WORK_ITEM_SIZE";
    case -56: return "CL_INVALID_GLOBAL_OFFSET";
    case -57: return "CL_INVALID_EVENT_WAIT_LIST";
    case -58: return "CL_INVALID_EVENT";
    case -59: return "CL_INVALID_OPERATION";
    case -60: return "CL_INVALID_GL_OBJECT";
    case -61: return "CL_INVALID_BUFFER_SIZE";
    case -62: return "CL_INVALID_MIP_LEVEL";
    case -63: return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -64: return "CL_INVALID_PROPERTY";
    case -65: return "CL_INVALID_IMAGE_DESCRIPTOR";
    case -66: return "CL_INVALID_COMPILER_OPTIONS";
    case -67: return "CL_INVALID_LINKER_OPTIONS";
    case -68: return "CL_INVALID_DEVICE_PARTITION_COUNT";
    case -69: return "CL_INVALID_PIPE_SIZE";
    case -70: return "CL_INVALID_DEVICE_QUEUE";
    case -71: return "CL_INVALID_SPEC_ID";
    case -72: return "CL_MAX_SIZE_RESTRICTION_EXCEEDED";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    }
    static _Thread_local char unknown[32];
    snprintf(unknown, sizeof unknown, "OpenCL error %d", (int)code);
    return unknown;
}
