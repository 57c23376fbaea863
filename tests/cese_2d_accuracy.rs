//! CE/SE in 2D on a smooth problem: a density wave advected diagonally through a periodic box
//! (constant velocity and pressure, so the exact solution is the initial wave moved by u t).
//! The L1 error of the density must fall at second order (Chang 1995: the scheme is second
//! order in space and time for smooth solutions), measured here for each alpha weighting.

mod common;

use std::f64::consts::PI;

fn wave(n: usize, alpha: u32) -> String {
    let b: String = ["left", "right", "bottom", "top"]
        .iter()
        .map(|s| format!("[boundary.{s}]\ntype = \"periodic\"\n"))
        .collect();
    format!(
        "[case]\nname = \"w\"\nkind = \"compressible\"\ndim = 2\n[grid]\nnx = {n}\nny = {n}\n\
         extents = [1.0, 1.0]\n{b}[initial]\ntype = \"density_wave\"\nrho0 = 1.0\namplitude = 0.2\n\
         velocity = [1.0, 0.5]\npressure = 1.0\nwaves = [1.0, 1.0]\n[solver]\nmethod = \"cese\"\n\
         alpha = {alpha}.0\ncfl = 0.8\n[stop]\nt_end = 0.5\n"
    )
}

/// L1 error of the density against `1 + 0.2 sin(2 pi (x - t + y - t/2))` at the cell centres.
fn l1(n: usize, alpha: u32) -> f64 {
    let mut s = common::solver(&wave(n, alpha));
    common::run_to(s.as_mut(), 0.5).expect("runs");
    let rho = common::field(s.as_ref(), "rho");
    let h = 1.0 / n as f64;
    let t = s.time();
    let mut err = 0.0;
    for j in 0..n {
        for i in 0..n {
            let (x, y) = ((i as f64 + 0.5) * h, (j as f64 + 0.5) * h);
            let exact = 1.0 + 0.2 * (2.0 * PI * (x - t + y - 0.5 * t)).sin();
            err += (rho[j * n + i] - exact).abs() * h * h;
        }
    }
    err
}

#[test]
fn cese_2d_density_wave_is_second_order() {
    for alpha in [0, 1, 2] {
        let e: Vec<f64> = [32, 64, 128].iter().map(|&n| l1(n, alpha)).collect();
        let orders: Vec<f64> = e.windows(2).map(|w| (w[0] / w[1]).log2()).collect();
        eprintln!("CE/SE 2D alpha {alpha}: L1(rho) {e:?}, orders {orders:.3?}");
        // Measured: 2.17 (alpha 0), 2.00 (alpha 1), 2.00 (alpha 2) from 64 to 128 cells; the
        // alpha weighting flattens slopes at the wave's extrema, which costs accuracy
        // (0.53e-3 against 0.09e-3 at 128^2) but not order in L1.
        assert!(orders[1] > 1.9, "alpha {alpha}: orders {orders:?}");
        assert!(e[2] < 1e-3, "alpha {alpha}: L1 {e:?}");
    }
}
