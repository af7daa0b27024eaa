/* The _gpukit extension module: multi-phase initialisation (PEP 489) with
 * module state. Each file adds its own types and functions through its
 * init function; gpukit/__init__.py re-exports them. */
#include "gkpy.h"

#include <gpukit/version.h>

static struct PyModuleDef gkpy_module;

gkpy_state *gkpy_state_of_module(PyObject *module)
{
    return PyModule_GetState(module);
}

gkpy_state *gkpy_state_of_type(PyTypeObject *type)
{
    return PyModule_GetState(PyType_GetModule(type));
}

/* Every object field of the state, for traverse and clear. Returns how many. */
static int state_objects(gkpy_state *state, PyObject **fields[])
{
    PyObject **all[] = {
        (PyObject **)&state->array_type,       (PyObject **)&state->dtype_type,
        (PyObject **)&state->device_type,      (PyObject **)&state->gpu_type,
        (PyObject **)&state->process_type,     (PyObject **)&state->reservation_type,
        (PyObject **)&state->raw_kernel_type,  (PyObject **)&state->elementwise_kernel_type,
        (PyObject **)&state->stream_type,      (PyObject **)&state->finfo_type,
        (PyObject **)&state->jit_kernel_type,  (PyObject **)&state->jit_launch_type,
        (PyObject **)&state->vectorize_type,
        (PyObject **)&state->iinfo_type,       (PyObject **)&state->info_type,
        (PyObject **)&state->monitor_type,
        (PyObject **)&state->unique_types[0],  (PyObject **)&state->unique_types[1],
        (PyObject **)&state->unique_types[2],
        &state->gpu_error,                     &state->no_gpu_error,
        &state->linalg_error,                  &state->numpy_linalg_error,
        &state->axis_error,
        &state->device_context,
        &state->held_reservation,              &state->positional_names,
    };
    int count = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        fields[count++] = all[i];
    for (int i = 0; i < GK_DTYPE_COUNT; i++)
        fields[count++] = &state->dtypes[i];
    return count;
}

#define GKPY_MAX_STATE_OBJECTS 48

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    gkpy_state *state = gkpy_state_of_module(module);
    PyObject **fields[GKPY_MAX_STATE_OBJECTS];
    int count = state_objects(state, fields);
    for (int i = 0; i < count; i++)
        Py_VISIT(*fields[i]);
    return 0;
}

static int module_clear(PyObject *module)
{
    gkpy_state *state = gkpy_state_of_module(module);
    PyObject **fields[GKPY_MAX_STATE_OBJECTS];
    int count = state_objects(state, fields);
    for (int i = 0; i < count; i++)
        Py_CLEAR(*fields[i]);
    return 0;
}

static void module_free(void *module)
{
    module_clear(module);
    gkpy_state *state = gkpy_state_of_module(module);
    gk_probe_close(state->probe);
    state->probe = NULL;
    if (state->probe_lock)
        PyThread_free_lock(state->probe_lock);
    if (state->reserve_lock)
        PyThread_free_lock(state->reserve_lock);
    state->probe_lock = state->reserve_lock = NULL;
}

static int module_exec(PyObject *module)
{
    gkpy_state *state = gkpy_state_of_module(module);
    state->default_device = gk_device_cpu();
    state->probe = NULL;
    state->probe_lock = PyThread_allocate_lock();
    state->reserve_lock = PyThread_allocate_lock();
    if (!state->probe_lock || !state->reserve_lock) {
        PyErr_NoMemory();
        return -1;
    }
    if (PyModule_AddStringConstant(module, "__version__", GPUKIT_VERSION) < 0)
        return -1;
    int (*const inits[])(PyObject *, gkpy_state *) = {
        gkpy_errors_init, gkpy_dtype_init,  gkpy_device_init,      gkpy_array_init,
        gkpy_create_init, gkpy_dlpack_init, gkpy_ops_init,         gkpy_gpus_init,
        gkpy_reservation_init, gkpy_kernel_init, gkpy_info_init, gkpy_manipulate_init,
        gkpy_utility_init, gkpy_linalg_init, gkpy_fft_init,   gkpy_jit_init,
        gkpy_monitor_init,
    };
    for (size_t i = 0; i < sizeof inits / sizeof inits[0]; i++)
        if (inits[i](module, state) < 0)
            return -1;
    return 0;
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
#if PY_VERSION_HEX >= 0x030C0000
    /* The state is per module, but libgpukit's library tables are per
     * process, so one module per process. */
    {Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED},
#endif
    {0, NULL},
};

static struct PyModuleDef gkpy_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "gpukit._gpukit",
    .m_doc = "The C extension behind the gpukit package (import gpukit, not this).",
    .m_size = sizeof(gkpy_state),
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__gpukit(void);
PyMODINIT_FUNC PyInit__gpukit(void)
{
    return PyModuleDef_Init(&gkpy_module);
}
