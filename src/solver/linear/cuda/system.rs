//! A stencil system in device memory and the shape arguments the kernels take for it.

use crate::backend::cuda::{Args, CudaError, DevBuf, Gpu};
use crate::solver::linear::Stencil;
use std::sync::Arc;

/// `a` followed by the system's shape arguments `ni, nj, nk, px, py, pz`.
pub(super) fn shape(a: Args, sys: &DeviceSystem) -> Args {
    dims(a, sys.n, sys.periodic)
}

/// `a` followed by the shape arguments `ni, nj, nk, px, py, pz` of a block of unknowns (unused
/// axes: one unknown, not periodic).
pub(super) fn dims(a: Args, n: [usize; 3], periodic: [bool; 3]) -> Args {
    let a = n.iter().fold(a, |a, &m| a.i(m as i64));
    periodic.iter().fold(a, |a, &p| a.i(p as i64))
}

/// `n` and `periodic` of a `D`-dimensional block padded to three axes.
pub(super) fn padded<const D: usize>(n: [usize; D], periodic: [bool; D]) -> ([usize; 3], [bool; 3]) {
    let (mut m, mut p) = ([1; 3], [false; 3]);
    m[..D].copy_from_slice(&n);
    p[..D].copy_from_slice(&periodic);
    (m, p)
}

/// A stencil system in device memory: `a_P`, then each axis' upper and lower links (`a_E, a_W,
/// a_N, a_S`, and `a_T, a_B` in 3D), then `b`, of `ni x nj (x nk)` unknowns in one buffer of
/// `(2 + 2 dim) n` values (the layout of `kernels/stencil.cu`).
pub struct DeviceSystem {
    pub dim: usize,
    /// Unknowns per axis (1 beyond `dim`).
    pub n: [usize; 3],
    pub periodic: [bool; 3],
    pub buf: DevBuf<f64>,
}

impl DeviceSystem {
    pub fn new<const D: usize>(
        gpu: &Arc<Gpu>,
        n: [usize; D],
        periodic: [bool; D],
    ) -> Result<Self, CudaError> {
        let (n, periodic) = padded(n, periodic);
        Ok(Self {
            dim: D,
            n,
            periodic,
            buf: gpu.alloc_zeros((2 + 2 * D) * n.iter().product::<usize>())?,
        })
    }

    pub fn len(&self) -> usize {
        self.n.iter().product()
    }

    /// Copies a host system in (tests and the parity checks).
    pub fn upload<const D: usize>(&self, gpu: &Gpu, sys: &Stencil<f64, D>) -> Result<(), CudaError> {
        assert_eq!(
            padded(sys.n, sys.periodic),
            (self.n, self.periodic),
            "system shape"
        );
        let mut all = sys.ap.clone();
        for [lower, upper] in &sys.a {
            all.extend_from_slice(upper);
            all.extend_from_slice(lower);
        }
        all.extend_from_slice(&sys.b);
        gpu.upload(&self.buf, &all)
    }
}
