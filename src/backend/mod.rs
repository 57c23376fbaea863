//! Compute backends. `cpu`: rayon thread pools and the deterministic parallel primitives the
//! reference solvers are written with.

pub mod cpu;
