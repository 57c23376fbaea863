//! The velocity gradient at cell centres and the vortex measures built on it (3D).
//!
//! `G[c][a] = d u_c / d x_a` at the centre of a cell: along its own axis a component's two faces
//! give the exact difference `(q_+ - q_-) / h`; across the other axes the cell-centred values of
//! the neighbours give the central difference `(q(i + 1) - q(i - 1)) / 2h`, with the ghost cells'
//! reflections at walls. With `S = (G + G^T)/2` and `Omega = (G - G^T)/2`:
//! - vorticity `omega = curl u = (G_zy - G_yz, G_xz - G_zx, G_yx - G_xy)` and its magnitude;
//! - the Q-criterion `Q = (|Omega|^2 - |S|^2) / 2` (Hunt, Wray & Moin 1988), positive in vortex
//!   cores;
//! - lambda-2, the middle eigenvalue of `S^2 + Omega^2` (Jeong & Hussain 1995), negative in
//!   vortex cores;
//! - helicity density `u . omega`.
//!
//! Units: gradients and vorticity in 1/s, Q and lambda-2 in 1/s^2, helicity in m/s^2.

use super::View;
use crate::solver::real::Real;

/// Velocity and its gradient at one cell centre.
pub struct Gradient {
    pub velocity: [f64; 3],
    /// `g[c][a] = d u_c / d x_a`.
    pub g: [[f64; 3]; 3],
}

/// The gradient at cell `idx` (1-based) of a 3D view.
pub fn gradient<T: Real, const D: usize>(view: &View<'_, T, D>, idx: [usize; D]) -> Gradient {
    let (l, h) = (view.l, view.grid.spacing);
    let mut g = [[0.0; 3]; 3];
    let mut velocity = [0.0; 3];
    for c in 0..D {
        velocity[c] = view.centred(c, idx);
        for a in 0..D {
            g[c][a] = if a == c {
                let k = l.at(idx);
                (view.vel[c][k] - view.vel[c][k - l.stride[c]]).f64() / h[a]
            } else {
                let (mut up, mut down) = (idx, idx);
                up[a] += 1;
                down[a] -= 1;
                (view.centred(c, up) - view.centred(c, down)) / (2.0 * h[a])
            };
        }
    }
    Gradient { velocity, g }
}

/// Vorticity `curl u` from the gradient.
pub fn vorticity(g: &[[f64; 3]; 3]) -> [f64; 3] {
    [g[2][1] - g[1][2], g[0][2] - g[2][0], g[1][0] - g[0][1]]
}

/// The measure `name` at a cell, `None` for a name that is not one.
pub fn measure(name: &str, grad: &Gradient) -> Option<f64> {
    let g = &grad.g;
    let w = vorticity(g);
    Some(match name {
        "vorticity_x" => w[0],
        "vorticity_y" => w[1],
        "vorticity_z" => w[2],
        "vorticity_magnitude" => w[0].hypot(w[1]).hypot(w[2]),
        "helicity" => (0..3).map(|c| grad.velocity[c] * w[c]).sum(),
        "q_criterion" => {
            let (mut s2, mut o2) = (0.0, 0.0);
            for c in 0..3 {
                for a in 0..3 {
                    s2 += (0.5 * (g[c][a] + g[a][c])).powi(2);
                    o2 += (0.5 * (g[c][a] - g[a][c])).powi(2);
                }
            }
            0.5 * (o2 - s2)
        }
        "lambda2" => lambda2(g),
        _ => return None,
    })
}

/// The middle eigenvalue of `S^2 + Omega^2` (symmetric), by the trigonometric solution of its
/// characteristic cubic (Smith 1961).
pub fn lambda2(g: &[[f64; 3]; 3]) -> f64 {
    let s = |i: usize, j: usize| 0.5 * (g[i][j] + g[j][i]);
    let o = |i: usize, j: usize| 0.5 * (g[i][j] - g[j][i]);
    let mut m = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = (0..3).map(|k| s(i, k) * s(k, j) + o(i, k) * o(k, j)).sum();
        }
    }
    let mut e = symmetric_eigenvalues(&m);
    e.sort_by(f64::total_cmp);
    e[1]
}

/// Eigenvalues of a symmetric 3 x 3 matrix.
pub fn symmetric_eigenvalues(m: &[[f64; 3]; 3]) -> [f64; 3] {
    let p1 = m[0][1].powi(2) + m[0][2].powi(2) + m[1][2].powi(2);
    let q = (m[0][0] + m[1][1] + m[2][2]) / 3.0;
    if p1 == 0.0 {
        return [m[0][0], m[1][1], m[2][2]];
    }
    let p2 = (m[0][0] - q).powi(2) + (m[1][1] - q).powi(2) + (m[2][2] - q).powi(2) + 2.0 * p1;
    let p = (p2 / 6.0).sqrt();
    let b = |i: usize, j: usize| (m[i][j] - if i == j { q } else { 0.0 }) / p;
    let det = b(0, 0) * (b(1, 1) * b(2, 2) - b(1, 2) * b(2, 1))
        - b(0, 1) * (b(1, 0) * b(2, 2) - b(1, 2) * b(2, 0))
        + b(0, 2) * (b(1, 0) * b(2, 1) - b(1, 1) * b(2, 0));
    let phi = (det / 2.0).clamp(-1.0, 1.0).acos() / 3.0;
    let e1 = q + 2.0 * p * phi.cos();
    let e3 = q + 2.0 * p * (phi + 2.0 * std::f64::consts::PI / 3.0).cos();
    [e1, 3.0 * q - e1 - e3, e3]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Solid-body rotation about z with angular speed W: vorticity (0, 0, 2W), Q = W^2 > 0,
    /// lambda-2 = -W^2 < 0; pure strain: Q < 0, lambda-2 > ... (no vortex).
    #[test]
    fn rotation_and_strain() {
        let w = 1.5;
        let rot = [[0.0, -w, 0.0], [w, 0.0, 0.0], [0.0, 0.0, 0.0]];
        let grad = Gradient {
            velocity: [1.0, 2.0, 3.0],
            g: rot,
        };
        assert_eq!(vorticity(&rot), [0.0, 0.0, 2.0 * w]);
        assert!((measure("q_criterion", &grad).unwrap() - w * w).abs() < 1e-12);
        assert!((lambda2(&rot) + w * w).abs() < 1e-12);
        assert!((measure("helicity", &grad).unwrap() - 3.0 * 2.0 * w).abs() < 1e-12);
        let strain = [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 0.0]];
        let grad = Gradient {
            velocity: [0.0; 3],
            g: strain,
        };
        assert!(measure("q_criterion", &grad).unwrap() < 0.0);
        assert!(lambda2(&strain) >= 0.0);
    }

    #[test]
    fn eigenvalues_of_a_symmetric_matrix() {
        let m = [[4.0, 1.0, 2.0], [1.0, 3.0, 0.5], [2.0, 0.5, 1.0]];
        let e = symmetric_eigenvalues(&m);
        for l in e {
            // det(m - l I) = 0.
            let a = |i: usize, j: usize| m[i][j] - if i == j { l } else { 0.0 };
            let det = a(0, 0) * (a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1))
                - a(0, 1) * (a(1, 0) * a(2, 2) - a(1, 2) * a(2, 0))
                + a(0, 2) * (a(1, 0) * a(2, 1) - a(1, 1) * a(2, 0));
            assert!(det.abs() < 1e-9, "{e:?}: {det}");
        }
        assert!((e.iter().sum::<f64>() - 8.0).abs() < 1e-12);
    }
}
