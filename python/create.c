/* Placeholder: filled in by the change that brings this part. */
#include "gkpy.h"

int gkpy_create_init(PyObject *module, gkpy_state *state)
{
    (void)module;
    (void)state;
    return 0;
}

PyObject *gkpy_asarray(gkpy_state *state, PyObject *object, const gk_dtype *dtype,
                       const gk_device *device, int copy)
{
    (void)state; (void)object; (void)dtype; (void)device; (void)copy;
    PyErr_SetString(PyExc_NotImplementedError, "asarray is not there yet");
    return NULL;
}
