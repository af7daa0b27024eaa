/* OpenCL, through the ICD loader (libOpenCL.so.1), loaded at run time.
 *
 * Only the few types, enum values and entry points gpukit uses are declared
 * here (they are facts of the OpenCL 1.2 ABI, which later versions keep).
 * The loader forwards every call to the vendor driver (PoCL, NVIDIA, AMD,
 * Intel) that owns the object, so one binary serves them all and needs no
 * OpenCL package at build time.
 *
 * The library is loaded once per process, on first use, by whichever thread
 * gets there first (pthread_once); GPUKIT_OPENCL_LIBRARY, when set, names
 * the file to load instead (tests use it). The table never changes after
 * that, so it is read without locks. */
#ifndef GK_EXT_OPENCL_H
#define GK_EXT_OPENCL_H

#include <gpukit/status.h>

#include <stddef.h>
#include <stdint.h>

typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef cl_uint cl_bool;
typedef cl_ulong cl_bitfield;
typedef cl_bitfield cl_device_type;
typedef cl_bitfield cl_mem_flags;
typedef cl_bitfield cl_map_flags;
typedef cl_bitfield cl_command_queue_properties;
typedef cl_bitfield cl_device_fp_config;
typedef intptr_t cl_context_properties;
typedef cl_uint cl_platform_info;
typedef cl_uint cl_device_info;
typedef cl_uint cl_program_info;
typedef cl_uint cl_program_build_info;
typedef cl_uint cl_buffer_create_type;
typedef cl_uint cl_kernel_info;

typedef struct _cl_platform_id *cl_platform_id;
typedef struct _cl_device_id *cl_device_id;
typedef struct _cl_context *cl_context;
typedef struct _cl_command_queue *cl_command_queue;
typedef struct _cl_mem *cl_mem;
typedef struct _cl_program *cl_program;
typedef struct _cl_kernel *cl_kernel;
typedef struct _cl_event *cl_event;

/* The argument of clCreateSubBuffer(CL_BUFFER_CREATE_TYPE_REGION). */
typedef struct cl_buffer_region {
    size_t origin;
    size_t size;
} cl_buffer_region;

/* Error codes (the names are what gk_opencl_error_name returns). */
enum {
    CL_SUCCESS = 0,
    CL_DEVICE_NOT_FOUND = -1,
    CL_DEVICE_NOT_AVAILABLE = -2,
    CL_COMPILER_NOT_AVAILABLE = -3,
    CL_MEM_OBJECT_ALLOCATION_FAILURE = -4,
    CL_OUT_OF_RESOURCES = -5,
    CL_OUT_OF_HOST_MEMORY = -6,
    CL_BUILD_PROGRAM_FAILURE = -11,
    CL_MISALIGNED_SUB_BUFFER_OFFSET = -13,
    CL_INVALID_VALUE = -30,
    CL_INVALID_BINARY = -42,
    CL_INVALID_KERNEL_NAME = -46,
    CL_INVALID_BUFFER_SIZE = -61,
    CL_PLATFORM_NOT_FOUND_KHR = -1001,
};

enum {
    CL_FALSE = 0,
    CL_TRUE = 1,
};

/* clGetPlatformInfo */
enum {
    CL_PLATFORM_VERSION = 0x0901,
    CL_PLATFORM_NAME = 0x0902,
    CL_PLATFORM_VENDOR = 0x0903,
};

/* cl_device_fp_config bits */
#define CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT ((cl_bitfield)1 << 7)
#define CL_DEVICE_TYPE_GPU ((cl_device_type)1 << 2)
#define CL_DEVICE_TYPE_ALL ((cl_device_type)0xFFFFFFFF)

/* clGetDeviceInfo */
enum {
    CL_DEVICE_TYPE = 0x1000,                /* cl_device_type */
    CL_DEVICE_MAX_COMPUTE_UNITS = 0x1002,   /* cl_uint */
    CL_DEVICE_MAX_WORK_GROUP_SIZE = 0x1004, /* size_t */
    CL_DEVICE_MAX_MEM_ALLOC_SIZE = 0x1010,  /* cl_ulong */
    CL_DEVICE_MEM_BASE_ADDR_ALIGN = 0x1019, /* cl_uint, in bits */
    CL_DEVICE_GLOBAL_MEM_SIZE = 0x101F,     /* cl_ulong */
    CL_DEVICE_LOCAL_MEM_SIZE = 0x1023,      /* cl_ulong */
    CL_DEVICE_NAME = 0x102B,                /* text */
    CL_DRIVER_VERSION = 0x102D,             /* text */
    CL_DEVICE_VERSION = 0x102F,             /* text: "OpenCL <major>.<minor> ..." */
    CL_DEVICE_EXTENSIONS = 0x1030,          /* text, space-separated */
    CL_DEVICE_SINGLE_FP_CONFIG = 0x101B,    /* cl_device_fp_config */
    CL_DEVICE_DOUBLE_FP_CONFIG = 0x1032,    /* cl_device_fp_config, 0 = no double */
};

#define CL_CONTEXT_PLATFORM ((cl_context_properties)0x1084)
#define CL_MEM_READ_WRITE ((cl_mem_flags)1)
#define CL_MEM_USE_HOST_PTR ((cl_mem_flags)8)
#define CL_MAP_READ ((cl_map_flags)1)
#define CL_MAP_WRITE ((cl_map_flags)2)
#define CL_BUFFER_CREATE_TYPE_REGION ((cl_buffer_create_type)0x1220)

/* clGetProgramInfo, clGetProgramBuildInfo */
enum {
    CL_PROGRAM_BINARY_SIZES = 0x1165, /* size_t per device */
    CL_PROGRAM_BINARIES = 0x1166,     /* unsigned char * per device */
    CL_PROGRAM_BUILD_LOG = 0x1183,    /* text */
};

/* clGetKernelInfo */
enum {
    CL_KERNEL_NUM_ARGS = 0x1191, /* cl_uint */
};

/* clGetKernelArgInfo (OpenCL 1.2; answered for programs built with
 * -cl-kernel-arg-info, else CL_KERNEL_ARG_INFO_NOT_AVAILABLE) */
typedef cl_uint cl_kernel_arg_info;
enum {
    CL_KERNEL_ARG_ADDRESS_QUALIFIER = 0x1196, /* cl_uint: one of the below */
    CL_KERNEL_ARG_TYPE_NAME = 0x1198,         /* text: "float*", "int", a typedef's name */
    CL_KERNEL_ARG_ADDRESS_GLOBAL = 0x119B,
    CL_KERNEL_ARG_ADDRESS_LOCAL = 0x119C,
    CL_KERNEL_ARG_ADDRESS_CONSTANT = 0x119D,
    CL_KERNEL_ARG_ADDRESS_PRIVATE = 0x119E,
};

/* clGetKernelWorkGroupInfo */
typedef cl_uint cl_kernel_work_group_info;
enum {
    CL_KERNEL_LOCAL_MEM_SIZE = 0x11B2, /* cl_ulong: bytes of local memory per group */
};

typedef void (*cl_context_notify_fn)(const char *, const void *, size_t, void *);
typedef void (*cl_build_notify_fn)(cl_program, void *);

typedef struct gk_opencl {
    void *library;
    char path[512]; /* what was loaded */

    cl_int (*GetPlatformIDs)(cl_uint, cl_platform_id *, cl_uint *);
    cl_int (*GetPlatformInfo)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
    cl_int (*GetDeviceIDs)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
    cl_int (*GetDeviceInfo)(cl_device_id, cl_device_info, size_t, void *, size_t *);
    cl_context (*CreateContext)(const cl_context_properties *, cl_uint, const cl_device_id *,
                                cl_context_notify_fn, void *, cl_int *);
    cl_int (*ReleaseContext)(cl_context);
    /* Deprecated by OpenCL 2.0 in favour of ...WithProperties, but every
     * platform keeps it, and 1.2 platforms have only this one. */
    cl_command_queue (*CreateCommandQueue)(cl_context, cl_device_id,
                                           cl_command_queue_properties, cl_int *);
    cl_int (*ReleaseCommandQueue)(cl_command_queue);
    cl_mem (*CreateBuffer)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
    cl_mem (*CreateSubBuffer)(cl_mem, cl_mem_flags, cl_buffer_create_type, const void *,
                              cl_int *);
    cl_int (*ReleaseMemObject)(cl_mem);
    cl_int (*EnqueueWriteBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t,
                                 const void *, cl_uint, const cl_event *, cl_event *);
    cl_int (*EnqueueReadBuffer)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *,
                                cl_uint, const cl_event *, cl_event *);
    cl_int (*EnqueueCopyBuffer)(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t,
                                cl_uint, const cl_event *, cl_event *);
    void *(*EnqueueMapBuffer)(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t,
                              cl_uint, const cl_event *, cl_event *, cl_int *);
    cl_int (*EnqueueUnmapMemObject)(cl_command_queue, cl_mem, void *, cl_uint, const cl_event *,
                                    cl_event *);
    cl_int (*Flush)(cl_command_queue);
    cl_int (*Finish)(cl_command_queue);
    cl_program (*CreateProgramWithSource)(cl_context, cl_uint, const char **, const size_t *,
                                          cl_int *);
    cl_program (*CreateProgramWithBinary)(cl_context, cl_uint, const cl_device_id *,
                                          const size_t *, const unsigned char **, cl_int *,
                                          cl_int *);
    cl_int (*BuildProgram)(cl_program, cl_uint, const cl_device_id *, const char *,
                           cl_build_notify_fn, void *);
    cl_int (*GetProgramInfo)(cl_program, cl_program_info, size_t, void *, size_t *);
    cl_int (*GetProgramBuildInfo)(cl_program, cl_device_id, cl_program_build_info, size_t,
                                  void *, size_t *);
    cl_int (*ReleaseProgram)(cl_program);
    cl_kernel (*CreateKernel)(cl_program, const char *, cl_int *);
    cl_int (*ReleaseKernel)(cl_kernel);
    cl_int (*GetKernelInfo)(cl_kernel, cl_kernel_info, size_t, void *, size_t *);
    cl_int (*GetKernelWorkGroupInfo)(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t,
                                     void *, size_t *);
    cl_int (*SetKernelArg)(cl_kernel, cl_uint, size_t, const void *);
    cl_int (*EnqueueNDRangeKernel)(cl_command_queue, cl_kernel, cl_uint, const size_t *,
                                   const size_t *, const size_t *, cl_uint, const cl_event *,
                                   cl_event *);
    /* OpenCL 1.2 */
    cl_int (*EnqueueMarkerWithWaitList)(cl_command_queue, cl_uint, const cl_event *,
                                        cl_event *);
    cl_int (*EnqueueBarrierWithWaitList)(cl_command_queue, cl_uint, const cl_event *,
                                         cl_event *);
    cl_int (*ReleaseEvent)(cl_event);
    cl_int (*GetKernelArgInfo)(cl_kernel, cl_uint, cl_kernel_arg_info, size_t, void *, size_t *);
} gk_opencl;

/* The loaded library, loading it on the first call. On failure returns
 * GK_ERR_NOT_FOUND (every call, with the same message in gk_last_error():
 * the library or entry point that is missing and how to install a driver)
 * and sets *api to NULL. Thread-safe. */
gk_status gk_opencl_get(const gk_opencl **api);

/* "CL_OUT_OF_RESOURCES" for -5; "OpenCL error -1234" for codes it does not
 * know (in a static buffer per thread). Never NULL. */
const char *gk_opencl_error_name(cl_int code);

#endif
