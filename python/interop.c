/* Placeholder: filled in by the change that brings this part. */
#include "gkpy.h"

int gkpy_interop_init(PyObject *module, gkpy_state *state)
{
    (void)module;
    (void)state;
    return 0;
}

PyObject *gkpy_from_protocols(gkpy_state *state, PyObject *object, bool *handled)
{
    (void)state; (void)object;
    *handled = false;
    return NULL;
}
