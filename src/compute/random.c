/* Placeholder while this family is being written. */
#include "compute/array_impl.h"
