//! Parallel cyclic reduction (Hockney & Jesshope, Parallel Computers 2, 1988; the GPU line solver
//! of Lohry 2010, ch. 3-4, one thread per equation): each of `ceil(log2 n)` steps eliminates, in
//! every equation at once, the couplings to the equations `s` away (`s = 1, 2, 4, ...`), so that
//! after the last step every equation stands alone. Out-of-range partners count as zero, so any
//! `n` works (not only powers of two). This CPU version runs the steps in order and is the
//! reference the CUDA kernel is compared with; on the CPU the Thomas algorithm is faster.

use crate::solver::real::Real;

/// Solves `a_i x_{i-1} + b_i x_i + c_i x_{i+1} = d_i`, `i in 0..n` (`a_0`, `c_{n-1}` not read)
/// into `x`. `scratch` holds at least `8 n` values (two copies of the four coefficient arrays,
/// as a GPU keeps them in shared memory). Needs no pivoting for diagonally dominant systems.
pub fn pcr<T: Real>(a: &[T], b: &[T], c: &[T], d: &[T], x: &mut [T], scratch: &mut [T]) {
    let n = b.len();
    let (cur, next) = scratch[..8 * n].split_at_mut(4 * n);
    let (ca, rest) = cur.split_at_mut(n);
    let (cb, rest) = rest.split_at_mut(n);
    let (cc, cd) = rest.split_at_mut(n);
    ca.copy_from_slice(a);
    cb.copy_from_slice(b);
    cc.copy_from_slice(c);
    cd.copy_from_slice(d);
    ca[0] = T::zero();
    cc[n - 1] = T::zero();
    let (na, rest) = next.split_at_mut(n);
    let (nb, rest) = rest.split_at_mut(n);
    let (nc, nd) = rest.split_at_mut(n);
    let (mut ca, mut cb, mut cc, mut cd) = (ca, cb, cc, cd);
    let (mut na, mut nb, mut nc, mut nd) = (na, nb, nc, nd);
    let mut s = 1;
    while s < n {
        for i in 0..n {
            // Equation i minus k1 times equation i - s and k2 times equation i + s.
            let zero = T::zero();
            let (k1, am, cm, dm) = if i >= s {
                (ca[i] / cb[i - s], ca[i - s], cc[i - s], cd[i - s])
            } else {
                (zero, zero, zero, zero)
            };
            let (k2, ap, cp, dp) = if i + s < n {
                (cc[i] / cb[i + s], ca[i + s], cc[i + s], cd[i + s])
            } else {
                (zero, zero, zero, zero)
            };
            na[i] = -am * k1;
            nb[i] = cb[i] - cm * k1 - ap * k2;
            nc[i] = -cp * k2;
            nd[i] = cd[i] - dm * k1 - dp * k2;
        }
        std::mem::swap(&mut ca, &mut na);
        std::mem::swap(&mut cb, &mut nb);
        std::mem::swap(&mut cc, &mut nc);
        std::mem::swap(&mut cd, &mut nd);
        s *= 2;
    }
    for i in 0..n {
        x[i] = cd[i] / cb[i];
    }
}
