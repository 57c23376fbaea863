//! Woodward & Colella's (1984) Mach 3 wind tunnel with a forward-facing step, run to their end
//! time t = 4 with the shipped case (MUSCL-Hancock, HLLC, minmod, 240 x 80), checked against
//! what gas dynamics fixes without a reference solution:
//! - the run stays admissible (positive density and pressure) through the step's corner
//!   singularity;
//! - the free stream ahead of the bow shock is untouched (rho = 1.4, u = 3, p = 1);
//! - the gas comes to rest against the step face behind the bow shock, so the pressure there is
//!   the Rayleigh pitot pressure of Mach 3 (normal shock, then isentropic compression to rest):
//!   p0 / p1 = p2/p1 (1 + (gamma - 1)/2 M2^2)^(gamma/(gamma - 1)) = 12.06 for gamma = 1.4.

mod common;

use flowlab::solver::{self, Solver};

/// The Rayleigh pitot pressure ratio for an upstream Mach number `m` and ratio of specific heats `g`.
fn pitot(m: f64, g: f64) -> f64 {
    let p2 = 1.0 + 2.0 * g / (g + 1.0) * (m * m - 1.0);
    let m2sq = (1.0 + 0.5 * (g - 1.0) * m * m) / (g * m * m - 0.5 * (g - 1.0));
    p2 * (1.0 + 0.5 * (g - 1.0) * m2sq).powf(g / (g - 1.0))
}

/// The first cell centre along `y` (from the inflow) where the density exceeds twice the free
/// stream's: the bow shock.
fn bow_shock(s: &dyn Solver, y: f64) -> f64 {
    (0..240)
        .map(|i| (i as f64 + 0.5) * 3.0 / 240.0)
        .find(|&x| s.sample("rho", [x, y, 0.0]).unwrap() > 2.8)
        .expect("a bow shock")
}

#[test]
fn mach3_step_runs_to_t4_with_a_pitot_stagnation_pressure() {
    let case = common::case("mach3_forward_step", &[]);
    let mut s = solver::build(&case.spec).expect("solver");
    common::run_to(s.as_mut(), 3.5).expect("the run stays admissible to t = 3.5");
    let earlier = bow_shock(s.as_ref(), 0.1);
    common::run_to(s.as_mut(), 4.0).expect("the run stays admissible to t = 4");
    let get = |k: &str| s.residuals().iter().find(|(n, _)| *n == k).unwrap().1;
    let (rho_min, p_min) = (get("min_density"), get("min_pressure"));
    let shock = bow_shock(s.as_ref(), 0.1);
    // Pressure in the fluid cells along the step face (x = 0.6, 0 < y < 0.2).
    let dy = 1.0 / 80.0;
    let face = (0..16)
        .map(|j| {
            s.sample("p", [0.6 - 0.5 * dy, (j as f64 + 0.5) * dy, 0.0])
                .unwrap()
        })
        .fold(0.0, f64::max);
    let p0 = pitot(3.0, 1.4);
    eprintln!(
        "t = {:.4} after {} steps; min rho {rho_min:.4}, min p {p_min:.4}; bow shock at y = 0.1: \
         x = {earlier} (t = 3.5), {shock} (t = 4); step-face pressure {face:.4} vs pitot {p0:.4} ({:+.2} %)",
        s.time(),
        s.steps(),
        100.0 * (face - p0) / p0
    );
    assert!(rho_min > 0.0 && p_min > 0.0);
    for y in [0.05, 0.5, 0.95] {
        for (name, free) in [("rho", 1.4), ("u", 3.0), ("p", 1.0)] {
            let v = s.sample(name, [0.05, y, 0.0]).unwrap();
            assert!(
                (v - free).abs() < 1e-12,
                "{name} ahead of the bow shock at y = {y}: {v}"
            );
        }
    }
    // The bow shock stands still (to a cell) over the last half time unit, so the gas at the
    // face is in steady stagnation: measured 12.094 against 12.061 (+0.27 %).
    assert!(
        (shock - earlier).abs() <= 3.0 / 240.0,
        "bow shock moved from {earlier} to {shock}"
    );
    assert!(
        (face - p0).abs() < 0.01 * p0,
        "stagnation pressure {face} vs pitot {p0}"
    );
}
