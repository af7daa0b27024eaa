"""gpukit.cuda (filled in by the change that brings it)."""
