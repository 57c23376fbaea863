//! Compute backends. `cpu`: rayon thread pools and the deterministic parallel primitives the
//! reference solvers are written with. `cuda`: the NVIDIA GPU backend (driver API and NVRTC
//! loaded at run time through cudarc; kernels in `kernels/*.cu`).

pub mod cpu;
pub mod cuda;
