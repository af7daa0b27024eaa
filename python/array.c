/* Placeholder: filled in by the change that brings this part. */
#include "gkpy.h"

int gkpy_array_init(PyObject *module, gkpy_state *state)
{
    (void)module;
    (void)state;
    return 0;
}

PyObject *gkpy_array_wrap(gkpy_state *state, gk_array *array)
{
    (void)state;
    gk_array_free(array);
    PyErr_SetString(PyExc_NotImplementedError, "arrays are not there yet");
    return NULL;
}
