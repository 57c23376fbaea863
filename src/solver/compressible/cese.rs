//! The space-time conservation element and solution element (CE/SE) scheme of Chang (1995),
//! with the alpha-weighted derivatives of Chang, Wang & Chow (1999) (the "a-alpha" scheme), in
//! the rectangular-mesh form of Zhang, Yu & Chang (2002) used by Westers (2020) for 2D.
//!
//! Mesh: solution points at time `t^n` sit at cell centres, at `t^{n+1/2}` at cell corners
//! (face centres in 1D), so one solver step of size `dt` is two half-steps of `dt/2`:
//! centres -> corners -> centres. Each solution point `P` carries `u`, `u_x`, `u_y`
//! (conserved variables and their gradients); inside its solution element the flow is the
//! first-order Taylor expansion in `x`, `y`, `t` with `u_t = -(A u_x + B u_y)`,
//! `f_t = A u_t`, `g_t = B u_t`, `f_y = A u_y`, `g_x = B u_x` (`A`, `B` the flux Jacobians).
//!
//! Marching (conservation over the box of `P` between the two time levels, `h_x`, `h_y` the cell
//! sizes, old points `Q` at offsets `(s_x h_x/2, s_y h_y/2)`, `s = ±1`, `N = 2^dim` of them):
//!
//! `u_P = 1/N sum_Q [ u - s_x h_x/4 u_x - s_y h_y/4 u_y
//!        - s_x dt/h_x (f + dt/4 f_t - s_y h_y/4 f_y) - s_y dt/h_y (g + dt/4 g_t - s_x h_x/4 g_x) ]_Q`
//!
//! (in 1D the `y` terms vanish and this is Chang's `u_j^n = (u_{j-1/2} + u_{j+1/2} + s_{j-1/2}
//! - s_{j+1/2}) / 2`). Gradients at `P`: the old values are moved to the new time,
//! `u'_Q = u_Q + dt/2 (u_t)_Q`; candidate gradients come from `P` and each pair of adjacent
//! `Q` (1D: one `Q` each, `u_x^± = ±(u'_± - u_P) / (h_x/2)`; 2D: the four triangles of `P` and
//! two neighbouring corners), and are combined per variable by the weighted average
//! `W0 = sum_m w_m grad_m / sum_m w_m`, `w_m = prod_{l != m} |grad_l|^alpha`, which reduces to
//! Chang's `(|u_x^-|^a u_x^+ + |u_x^+|^a u_x^-) / (|u_x^+|^a + |u_x^-|^a)` in 1D and to the plain
//! average where all candidates vanish (computed from the squared norms, see [`weighted`]).
//! Stable for per-axis Courant numbers
//! `dt (|u_d| + c) / h_d <= 1`.

use super::boundary;
use super::config::Bc;
use super::layout::Layout;
use super::state::{Q, flux, from_local, primitive, to_local};
use crate::solver::real::Real;
use rayon::prelude::*;
use std::sync::Mutex;

/// Ghost layers the scheme needs.
pub const GHOSTS: usize = 1;

/// Value and gradients `[u, u_x, u_y]` at a solution point.
type Point<T> = [Q<T>; 3];

/// Flux Jacobian `A(U) v` along x, conserved variables, from the one reciprocal `1 / rho`.
#[inline(always)]
fn jac_x<T: Real>(g: T, q: Q<T>, v: Q<T>) -> Q<T> {
    let inv_rho = T::one() / q[0];
    let (u, w) = (q[1] * inv_rho, q[2] * inv_rho);
    let gm = g - T::one();
    let k = T::of(0.5) * gm * (u * u + w * w);
    let h = g * q[3] * inv_rho - k;
    [
        v[1],
        (k - u * u) * v[0] + (T::of(3.0) - g) * u * v[1] - gm * w * v[2] + gm * v[3],
        -u * w * v[0] + w * v[1] + u * v[2],
        u * (k - h) * v[0] + (h - gm * u * u) * v[1] - gm * u * w * v[2] + g * u * v[3],
    ]
}

/// Flux Jacobian along axis `d` applied to `v`.
#[inline(always)]
fn jac<T: Real>(g: T, d: usize, q: Q<T>, v: Q<T>) -> Q<T> {
    from_local(d, jac_x(g, to_local(d, q), to_local(d, v)))
}

/// `x^alpha` in the weights of [`weighted`] from the square `r2 = x^2`: the exact value for the
/// usual exponents 0, 1 (`sqrt`) and 2 (`r2` itself), the library's `powf(r2, alpha / 2)` for any
/// other (`kernels/cese.cu` computes the same, so those weights agree with the device's to the
/// bit).
#[inline(always)]
fn weight_power<T: Real>(r2: T, alpha: T) -> T {
    if alpha == T::zero() {
        T::one()
    } else if alpha == T::one() {
        r2.sqrt()
    } else if alpha == T::of(2.0) {
        r2
    } else {
        r2.powf(alpha * T::of(0.5))
    }
}

/// The alpha-weighted average of `m` candidate gradients, per variable, from their squared norms
/// (`|grad_l| / max |grad|` raised to `alpha` is `(|grad_l|^2 / max |grad|^2)^(alpha / 2)`, so the
/// usual `alpha = 2` takes no square root). The ratios are products with the reciprocal of the
/// largest squared norm where that is a normal number (the reciprocal is then finite); where it
/// is not (every candidate below `sqrt` of the least normal number, about `1e-19` in `f32`,
/// `1.5e-154` in `f64`), and where the weights vanish, the result is the plain average. The
/// weighted sums are divided by their weight, which may be subnormal (its reciprocal would
/// overflow).
#[inline(always)]
fn weighted<T: Real>(alpha: T, cand: &[[Q<T>; 2]; 4], m: usize) -> [Q<T>; 2] {
    let mut out = [[T::zero(); 4]; 2];
    for k in 0..4 {
        let mut sq = [T::zero(); 4];
        for (c, s) in cand.iter().zip(sq.iter_mut()).take(m) {
            *s = c[0][k] * c[0][k] + c[1][k] * c[1][k];
        }
        let smax = sq.iter().take(m).fold(T::zero(), |a, &b| a.max(b));
        let mut wsum = T::zero();
        let mut acc = [T::zero(); 2];
        if smax >= T::min_positive_value() {
            let inv_smax = T::one() / smax;
            for i in 0..m {
                let mut w = T::one();
                for (l, s) in sq.iter().enumerate().take(m) {
                    if l != i {
                        w = w * weight_power(*s * inv_smax, alpha);
                    }
                }
                wsum = wsum + w;
                acc[0] = acc[0] + w * cand[i][0][k];
                acc[1] = acc[1] + w * cand[i][1][k];
            }
        }
        if wsum > T::zero() {
            out[0][k] = acc[0] / wsum;
            out[1][k] = acc[1] / wsum;
        } else {
            let inv = T::one() / T::of(m as f64);
            out[0][k] = cand.iter().take(m).fold(T::zero(), |a, c| a + c[0][k]) * inv;
            out[1][k] = cand.iter().take(m).fold(T::zero(), |a, c| a + c[1][k]) * inv;
        }
    }
    out
}

/// Constants of one half-step.
#[derive(Clone, Copy)]
struct Step<T> {
    g: T,
    alpha: T,
    dim: usize,
    dt: T,
    h: [T; 2],
}

/// The share of an old solution point `Q` in the conservation sum of [`march`] that does not
/// depend on which side of the new point it lies, computed once per old point and shared by the
/// `2^dim` new points around it: `moved = u + dt/2 u_t` and, with `r_x = dt/h_x`,
/// `r_y = dt/h_y`, the bracket of the module's marching formula gathered by the signs it
/// carries, `x = h_x/4 u_x + r_x (f + dt/4 f_t)`, `y = h_y/4 u_y + r_y (g + dt/4 g_t)`,
/// `z = r_x h_y/4 f_y + r_y h_x/4 g_x` (1D: `u`, `moved`, `x`; the rest zero). The share at
/// offset signs `(s_x, s_y)` is then `u - s_x x - s_y y + (s_x s_y) z`, whose factors `±1`
/// multiply exactly (`kernels/cese.cu` computes the same terms in the same order).
#[derive(Clone, Copy, Default)]
struct Terms<T> {
    u: Q<T>,
    moved: Q<T>,
    x: Q<T>,
    y: Q<T>,
    z: Q<T>,
}

/// The [`Terms`] of old point `[u, u_x, u_y]`.
#[inline(always)]
fn terms<T: Real>(st: &Step<T>, [u, ux, uy]: Point<T>) -> Terms<T> {
    let (g, dt, [hx, hy]) = (st.g, st.dt, st.h);
    let (quarter, half) = (T::of(0.25), T::of(0.5));
    let (rx, ry) = (dt / hx, dt / hy);
    let w = primitive(g, u);
    let f = from_local(0, flux(g, w));
    let ax = jac(g, 0, u, ux);
    let mut t = Terms {
        u,
        ..Terms::default()
    };
    let ut: Q<T> = if st.dim == 2 {
        let gg = from_local(1, flux(g, to_local(1, w)));
        let by = jac(g, 1, u, uy);
        let ut: Q<T> = std::array::from_fn(|k| -(ax[k] + by[k]));
        let (gt, fy, gx) = (jac(g, 1, u, ut), jac(g, 0, u, uy), jac(g, 1, u, ux));
        t.y = std::array::from_fn(|k| quarter * hy * uy[k] + ry * (gg[k] + quarter * dt * gt[k]));
        t.z = std::array::from_fn(|k| rx * (quarter * hy * fy[k]) + ry * (quarter * hx * gx[k]));
        ut
    } else {
        std::array::from_fn(|k| -ax[k])
    };
    let ft = jac(g, 0, u, ut);
    t.moved = std::array::from_fn(|k| u[k] + half * dt * ut[k]);
    t.x = std::array::from_fn(|k| quarter * hx * ux[k] + rx * (f[k] + quarter * dt * ft[k]));
    t
}

/// The new solution point from the terms of its `2^dim` old neighbours, `old[a + 2 b]` at
/// offset signs `s = (2a - 1, 2b - 1)`.
#[inline(always)]
fn march<T: Real>(st: &Step<T>, old: [&Terms<T>; 4]) -> Point<T> {
    let n = 1usize << st.dim;
    let [hx, hy] = st.h;
    let (inv_hx, inv_hy) = (T::one() / hx, T::one() / hy);
    let mut sum = [T::zero(); 4];
    let mut moved = [[T::zero(); 4]; 4];
    for (m, t) in old.iter().enumerate().take(n) {
        let sx = if m & 1 == 1 { T::one() } else { -T::one() };
        let sy = if m & 2 == 2 { T::one() } else { -T::one() };
        moved[m] = t.moved;
        for k in 0..4 {
            let c = if st.dim == 2 {
                t.u[k] - sx * t.x[k] - sy * t.y[k] + (sx * sy) * t.z[k]
            } else {
                t.u[k] - sx * t.x[k]
            };
            sum[k] = sum[k] + c;
        }
    }
    let inv = T::one() / T::of(n as f64);
    let up: Q<T> = sum.map(|s| s * inv);
    let mut cand = [[[T::zero(); 4]; 2]; 4];
    let two = T::of(2.0);
    if st.dim == 1 {
        for (m, s) in [(0usize, -T::one()), (1, T::one())] {
            cand[m][0] = std::array::from_fn(|k| s * (moved[m][k] - up[k]) * two * inv_hx);
        }
    } else {
        let v = &moved;
        for k in 0..4 {
            let mid = two * up[k];
            // Pairs along x at s_y = -1, +1; pairs along y at s_x = -1, +1.
            cand[0][0][k] = (v[1][k] - v[0][k]) * inv_hx;
            cand[0][1][k] = -(v[1][k] + v[0][k] - mid) * inv_hy;
            cand[1][0][k] = (v[3][k] - v[2][k]) * inv_hx;
            cand[1][1][k] = (v[3][k] + v[2][k] - mid) * inv_hy;
            cand[2][1][k] = (v[2][k] - v[0][k]) * inv_hy;
            cand[2][0][k] = -(v[2][k] + v[0][k] - mid) * inv_hx;
            cand[3][1][k] = (v[3][k] - v[1][k]) * inv_hy;
            cand[3][0][k] = (v[3][k] + v[1][k] - mid) * inv_hx;
        }
    }
    let [gx, gy] = weighted(st.alpha, &cand, if st.dim == 1 { 2 } else { 4 });
    [up, gx, gy]
}

/// Gradients at the centres and the solution at the corners, allocated once.
pub struct Cese<T> {
    ux: Vec<Q<T>>,
    uy: Vec<Q<T>>,
    /// Corner points, `(nx + 1) * (ny + 1)` (2D) or `nx + 1` (1D), x fastest.
    corners: Vec<Point<T>>,
    /// The bands' [`Terms`] buffers, one a band being computed: one a thread of the pool made
    /// with the scheme, each as large as the largest band's, so a step does not allocate.
    buffers: Mutex<Vec<Vec<Terms<T>>>>,
}

impl<T: Real> Cese<T> {
    pub fn new(l: &Layout) -> Self {
        let corners = (l.n[0] + 1) * if l.dim == 2 { l.n[1] + 1 } else { 1 };
        let band = if l.dim == 2 {
            (l.n[0] + 2) * (BAND_ROWS + 1)
        } else {
            BAND_POINTS + 1
        };
        let threads = rayon::current_num_threads();
        Self {
            ux: vec![[T::zero(); 4]; l.len()],
            uy: vec![[T::zero(); 4]; l.len()],
            corners: vec![[[T::zero(); 4]; 3]; corners],
            buffers: Mutex::new((0..threads).map(|_| Vec::with_capacity(band)).collect()),
        }
    }

    /// The centre gradients `[u_x, u_y]` (padded layout; `u_y` is zero in 1D), the CE/SE
    /// state carried from step to step besides the centre values.
    pub fn gradients(&self) -> [&[Q<T>]; 2] {
        [&self.ux, &self.uy]
    }

    pub fn gradients_mut(&mut self) -> [&mut [Q<T>]; 2] {
        [&mut self.ux, &mut self.uy]
    }

    /// Advances the centre values `u` by `dt` (two half-steps); `h` are the cell sizes. Each
    /// half-step runs over bands of new points in parallel (rows in 2D, runs of points in 1D);
    /// a band first computes the [`Terms`] of the old points around it once ([`band`]).
    pub fn advance(
        &mut self,
        l: &Layout,
        bc: &[Bc; 4],
        gamma: T,
        alpha: T,
        u: &mut [Q<T>],
        dt: f64,
        h: [f64; 2],
    ) {
        let st = Step {
            g: gamma,
            alpha,
            dim: l.dim,
            dt: T::of(dt),
            h: [T::of(h[0]), T::of(h[1])],
        };
        let cx = l.n[0] + 1;
        boundary::fill(l, bc, gamma, u, Some([&mut self.ux, &mut self.uy]));
        // Centres -> corners: corner (ci, cj) from cells (ci - 1 + a, cj - 1 + b).
        let (uu, ux, uy, buffers) = (&*u, &self.ux, &self.uy, &self.buffers);
        let (width, rows) = if l.dim == 2 {
            (cx, BAND_ROWS)
        } else {
            (BAND_POINTS, 1)
        };
        self.corners
            .par_chunks_mut(width * rows)
            .enumerate()
            .for_each(|(c, out)| {
                let first = c * width * rows;
                let (x0, y0) = (first % cx, first / cx);
                let size = if l.dim == 2 {
                    [cx, out.len() / cx]
                } else {
                    [out.len(), 1]
                };
                let cell = |i: isize, j: isize| {
                    let k = l.at(i, if l.dim == 2 { j } else { 0 });
                    [uu[k], ux[k], uy[k]]
                };
                band(
                    &st,
                    buffers,
                    [x0 as isize, y0 as isize],
                    size,
                    -1,
                    cell,
                    |x, y, p| {
                        out[y * size[0] + x] = p;
                    },
                );
            });
        // Corners -> centres: cell (i, j) from corners (i + a, j + b), in bands of the padded
        // array's rows (2D) or points (1D), ghost cells skipped.
        let corners = &self.corners;
        let corner = |i: isize, j: isize| corners[j as usize * cx + i as usize];
        let (width, rows) = if l.dim == 2 {
            (l.stride, BAND_ROWS)
        } else {
            (BAND_POINTS, 1)
        };
        u.par_chunks_mut(width * rows)
            .zip(self.ux.par_chunks_mut(width * rows))
            .zip(self.uy.par_chunks_mut(width * rows))
            .enumerate()
            .for_each(|(c, ((v, gx), gy))| {
                // The band's interior cells: columns x0.., rows y0.. (padded index `k0` is
                // its first element).
                let k0 = c * width * rows;
                let ([i0, j0], [i1, j1]) = (l.ij(k0), l.ij(k0 + v.len() - 1));
                let x0 = i0.max(0);
                let x1 = if l.dim == 2 {
                    l.n[0] as isize
                } else {
                    (i1 + 1).min(l.n[0] as isize)
                };
                let (y0, y1) = if l.dim == 2 {
                    (j0.max(0), (j1 + 1).min(l.n[1] as isize))
                } else {
                    (0, 1)
                };
                if x1 <= x0 || y1 <= y0 {
                    return;
                }
                let size = [(x1 - x0) as usize, (y1 - y0) as usize];
                band(&st, buffers, [x0, y0], size, 0, corner, |x, y, [p, px, py]| {
                    let k = l.at(x0 + x as isize, y0 + y as isize) - k0;
                    (v[k], gx[k], gy[k]) = (p, px, py);
                });
            });
    }
}

/// Rows of new points in a band of a 2D half-step, and new points in a band of a 1D one.
const BAND_ROWS: usize = 4;
const BAND_POINTS: usize = 2048;

/// One half-step over a band of new points `(x0 + x, y0 + y)`, `x < size[0]`, `y < size[1]`: the
/// [`Terms`] of the old points `(x0 + shift + a, y0 + shift + b)` (`a <= size[0]`,
/// `b <= size[1]` in 2D, `b = 0` in 1D; `shift` is -1 from centres to corners, 0 from corners to
/// centres), read by `old`, into a buffer taken from `buffers` (and put back), then [`march`] of
/// each new point, handed to `put`.
fn band<T: Real>(
    st: &Step<T>,
    buffers: &Mutex<Vec<Vec<Terms<T>>>>,
    [x0, y0]: [isize; 2],
    size: [usize; 2],
    shift: isize,
    old: impl Fn(isize, isize) -> Point<T>,
    mut put: impl FnMut(usize, usize, Point<T>),
) {
    let tw = size[0] + 1;
    let th = if st.dim == 2 { size[1] + 1 } else { 1 };
    let (ox, oy) = (x0 + shift, if st.dim == 2 { y0 + shift } else { 0 });
    // More bands at once than the pool's threads (another pool) take a new buffer, kept after.
    let mut buf = buffers.lock().expect("terms buffers").pop().unwrap_or_default();
    buf.clear();
    buf.extend(
        (0..th)
            .flat_map(|b| (0..tw).map(move |a| (a, b)))
            .map(|(a, b)| terms(st, old(ox + a as isize, oy + b as isize))),
    );
    let zero = Terms::default();
    for y in 0..size[1] {
        for x in 0..size[0] {
            let old = std::array::from_fn(|m| {
                let (a, b) = (m & 1, m >> 1);
                if b == 1 && st.dim == 1 {
                    &zero
                } else {
                    &buf[(y + b) * tw + x + a]
                }
            });
            put(x, y, march(st, old));
        }
    }
    buffers.lock().expect("terms buffers").push(buf);
}

#[cfg(test)]
mod tests {
    use super::weighted;

    /// The weighted average scales with its candidates, also where the weights underflow: in f32
    /// with one candidate 1e10 times the others, alpha = 2 makes their weights subnormal (about
    /// 1e-40), whose reciprocal is infinite; the average must stay the finite quotient.
    #[test]
    fn weighted_average_is_finite_where_the_weights_underflow() {
        for scale in [1.0f32, 1e-12, 1e12] {
            let cand = [[1.0f32, 0.5], [1e-10, 0.0], [0.0, -1e-10], [1e-10, 1e-10]]
                .map(|[x, y]| [[x * scale; 4], [y * scale; 4]]);
            for alpha in [1.0f32, 2.0] {
                let [gx, gy] = weighted(alpha, &cand, 4);
                for v in gx.iter().chain(gy.iter()) {
                    assert!(v.is_finite(), "alpha {alpha}, scale {scale}: {v}");
                    assert!(v.abs() <= 1.2 * scale, "alpha {alpha}, scale {scale}: {v}");
                }
            }
        }
    }

    /// The weights from squared norms are the definition's `prod_{l != i} (|grad_l| / max
    /// |grad|)^alpha`: in f32 against that formula evaluated in f64, for exponents 0.5 to 3, within
    /// a few f32 roundings. Candidates all below `sqrt` of the least normal f32 (1.08e-19) give
    /// the plain average.
    #[test]
    fn weighted_average_is_the_definition_from_squared_norms() {
        let raw = [[0.3, -1.2], [2.5, 0.4], [-0.7, 0.9], [1.1, 1.0]];
        for alpha in [0.5f64, 1.0, 2.0, 3.0] {
            let norm: Vec<f64> = raw.iter().map(|[x, y]: &[f64; 2]| x.hypot(*y)).collect();
            let max = norm.iter().cloned().fold(0.0, f64::max);
            let w: Vec<f64> = (0..4)
                .map(|i| {
                    (0..4)
                        .filter(|&l| l != i)
                        .map(|l| (norm[l] / max).powf(alpha))
                        .product()
                })
                .collect();
            let wsum: f64 = w.iter().sum();
            let cand = raw.map(|[x, y]| [[x as f32; 4], [y as f32; 4]]);
            let [gx, gy] = weighted(alpha as f32, &cand, 4);
            for (d, g) in [gx, gy].iter().enumerate() {
                let exact: f64 = (0..4).map(|i| w[i] * raw[i][d]).sum::<f64>() / wsum;
                assert!(
                    (g[0] as f64 - exact).abs() < 1e-6 * (1.0 + exact.abs()),
                    "alpha {alpha}, axis {d}: {} against {exact}",
                    g[0]
                );
            }
        }
        let tiny = [[1e-20f32, 0.0], [0.0, 3e-20], [-2e-20, 0.0], [4e-20, 1e-20]];
        let cand = tiny.map(|[x, y]| [[x; 4], [y; 4]]);
        let [gx, gy] = weighted(2.0f32, &cand, 4);
        assert_eq!(gx[0], (1e-20f32 + 0.0 - 2e-20 + 4e-20) * 0.25);
        assert_eq!(gy[0], (0.0f32 + 3e-20 + 0.0 + 1e-20) * 0.25);
    }
}
