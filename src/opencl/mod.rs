//! OpenCL backend (feature `opencl`).
