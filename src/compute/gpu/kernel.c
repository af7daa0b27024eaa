/* Placeholder: user kernels being written. */
