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

PyMethodDef gkpy_interop_array_methods[] = {{NULL, NULL, 0, NULL}};
PyGetSetDef gkpy_interop_array_getset[] = {{NULL, NULL, NULL, NULL, NULL}};

int gkpy_array_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    (void)self; (void)view; (void)flags;
    PyErr_SetString(PyExc_BufferError, "the buffer protocol is not there yet");
    return -1;
}

void gkpy_array_releasebuffer(PyObject *self, Py_buffer *view)
{
    (void)self; (void)view;
}
