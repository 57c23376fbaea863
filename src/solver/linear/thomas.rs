//! The Thomas algorithm: Gaussian elimination without pivoting for one tridiagonal system
//! (Patankar 1980, sec. 4.3-6, "TDMA"), `O(n)` and sequential; the CPU's line solver.

use crate::solver::real::Real;

/// Solves `a_i x_{i-1} + b_i x_i + c_i x_{i+1} = d_i`, `i in 0..n` (`a_0` and `c_{n-1}` are not
/// read) into `x`. `scratch` holds at least `n` values (the eliminated super-diagonal). Stable for
/// diagonally dominant systems (`|b_i| >= |a_i| + |c_i|`, strictly in one row), which every
/// under-relaxed momentum line and every pressure line of the SIMPLE family is.
pub fn thomas<T: Real>(a: &[T], b: &[T], c: &[T], d: &[T], x: &mut [T], scratch: &mut [T]) {
    let n = b.len();
    let cp = &mut scratch[..n];
    // Forward elimination: x holds the modified right-hand side d'.
    cp[0] = c[0] / b[0];
    x[0] = d[0] / b[0];
    for i in 1..n {
        let m = b[i] - a[i] * cp[i - 1];
        cp[i] = c[i] / m;
        x[i] = (d[i] - a[i] * x[i - 1]) / m;
    }
    // Back substitution.
    for i in (0..n - 1).rev() {
        x[i] = x[i] - cp[i] * x[i + 1];
    }
}
