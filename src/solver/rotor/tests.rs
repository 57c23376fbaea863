//! The rotor model against blade-element momentum theory (Leishman ch. 3) and the
//! conservation of its sources. Tolerances are stated per test.

use super::blade_element::{Airfoil, Blades, hover_thrust_coefficient};
use super::spread::{Points, Spreading};
use super::*;

/// A four-bladed rotor of unit radius and unit tip speed (`omega = 1`) in air of unit density,
/// constant chord 0.0654 (`sigma = 0.0833`), thin-aerofoil lift and no drag, no root cut-out:
/// the assumptions of the closed form.
fn rotor(collective_deg: f64, twist_deg: f64) -> Rotor {
    Rotor {
        centre: [0.5, 0.5, 0.5],
        axis: [0.0, 0.0, 1.0],
        radius: 1.0,
        root: 0.0,
        rho: 1.0,
        loading: Loading::Blades(Blades {
            count: 4,
            chord: [0.0654, 0.0654],
            twist: twist_deg.to_radians(),
            collective: collective_deg.to_radians(),
            omega: 1.0,
            airfoil: Airfoil {
                lift_slope: 2.0 * PI,
                zero_lift_angle: 0.0,
                drag: [0.0; 3],
            },
        }),
    }
}

fn blades(r: &Rotor) -> Blades {
    match r.loading {
        Loading::Blades(b) => b,
        Loading::Uniform { .. } => unreachable!(),
    }
}

/// The thrust coefficient of `rotor` in the uniform downwash `lambda omega R` of momentum
/// theory, and the closed form's.
fn thrust_in_uniform_inflow(r: &Rotor) -> (f64, f64) {
    let b = blades(r);
    let sigma = b.solidity(r.root, r.radius);
    let (ct, lambda) = hover_thrust_coefficient(sigma, b.airfoil.lift_slope, b.collective);
    assert!((ct - 2.0 * lambda * lambda).abs() < 1e-15, "C_T = 2 lambda^2");
    let bet = sigma * b.airfoil.lift_slope / 2.0 * (b.collective / 3.0 - lambda / 2.0);
    assert!((ct - bet).abs() < 1e-14, "C_T on the blade-element line");
    let tip = b.omega * r.radius;
    let (_, loads) = r.loads(400, 8, |_| [0.0, 0.0, -lambda * tip]);
    assert!((loads.inflow - lambda * tip).abs() < 1e-14);
    (r.coefficients(&loads, b.omega).thrust, ct)
}

/// With the closed form's small angles (collective 0.8 degrees and twist up to -0.8: inflow
/// angles below 0.02 rad outside the innermost tenth of the radius), the model's exact angles
/// change the thrust by `O(phi^2)`, under 0.1 %; the 400 rings' midpoint rule adds
/// `O(1 / 400^2)`.
#[test]
fn thrust_in_uniform_inflow_is_the_closed_form_at_small_angles() {
    for twist in [0.0, -0.8] {
        let (model, closed) = thrust_in_uniform_inflow(&rotor(0.8, twist));
        assert!(
            (model / closed - 1.0).abs() < 1e-3,
            "twist {twist}: C_T {model:.6e} against {closed:.6e}"
        );
    }
}

/// At a working collective (8 degrees, lambda = 0.05) the small-angle terms the closed form
/// drops, `U^2 cos(phi) / U_T^2 - 1 ~ phi^2 / 2` (0.2 % at three quarters of the radius, more
/// towards the root where little thrust is made), raise the model's thrust by under 1 %.
#[test]
fn thrust_in_uniform_inflow_is_within_one_percent_of_the_closed_form_at_eight_degrees() {
    let (model, closed) = thrust_in_uniform_inflow(&rotor(8.0, -8.0));
    let excess = model / closed - 1.0;
    assert!(
        (0.0..0.01).contains(&excess),
        "C_T {model:.6e} against {closed:.6e}"
    );
}

/// A flow with downwash, swirl and a radial part, so that every sample's force differs.
fn flow(p: [f64; 3]) -> [f64; 3] {
    let (x, y) = (p[0] - 0.5, p[1] - 0.5);
    [
        0.02 * x - 0.03 * y,
        0.03 * x + 0.02 * y,
        -0.05 - 0.01 * (x * x + y * y),
    ]
}

/// The samples carry the rotor's thrust and torque exactly, and the spread sources (on three
/// staggered lattices, as the velocity components of a MAC grid) sum to the samples' force to
/// round-off (relative 1e-12).
#[test]
fn the_sources_sum_to_the_disk_force() {
    let mut r = rotor(8.0, -8.0);
    r.radius = 0.3;
    r.root = 0.06;
    // Tip speed one.
    if let Loading::Blades(b) = &mut r.loading {
        b.omega = 1.0 / r.radius;
    }
    let (samples, loads) = r.loads(24, 48, flow);
    let total: [f64; 3] = std::array::from_fn(|a| samples.iter().map(|s| s.force[a]).sum());
    assert!(
        (total[2] + loads.thrust).abs() < 1e-12 * loads.thrust.abs(),
        "{total:?}"
    );
    let torque: f64 = samples
        .iter()
        .map(|s| {
            let d = std::array::from_fn(|a| s.position[a] - r.centre[a]);
            dot(cross(d, s.force), r.axis)
        })
        .sum();
    assert!(loads.torque > 0.0);
    assert!(
        (torque - loads.torque).abs() < 1e-12 * loads.torque,
        "{torque} against {}",
        loads.torque
    );
    let n = 32;
    let h = 1.0 / n as f64;
    for c in 0..3 {
        // Component c on the faces normal to axis c: n + 1 points along it.
        let mut count = [n; 3];
        count[c] += 1;
        let mut origin = [0.5 * h; 3];
        origin[c] = 0.0;
        let points = Points {
            origin,
            spacing: [h; 3],
            n: count,
        };
        let mut out = vec![0.0; count.iter().product()];
        let positions: Vec<[f64; 3]> = samples.iter().map(|s| s.position).collect();
        let index = |p: [usize; 3]| p[0] + count[0] * (p[1] + count[1] * p[2]);
        Spreading::new(&positions, &points, 1.5 * h, 1.0, index)
            .unwrap()
            .apply(|s| samples[s].force[c], |k, f| out[k] = f);
        let sum: f64 = out.iter().sum::<f64>() * h * h * h;
        let scale = total.iter().map(|f| f.abs()).fold(0.0, f64::max);
        assert!(
            (sum - total[c]).abs() < 1e-12 * scale,
            "component {c}: {sum} against {}",
            total[c]
        );
    }
}

/// A uniform disk pushes the fluid down its axis with the thrust it carries; in momentum
/// theory's inflow `v_i` its power is the ideal induced power `T v_i`, and its coefficients give
/// a figure of merit of one.
#[test]
fn a_uniform_disk_carries_its_thrust_and_the_ideal_power() {
    let r = Rotor {
        axis: [0.0, 1.0, 0.0],
        loading: Loading::Uniform { thrust: 0.02 },
        ..rotor(0.0, 0.0)
    };
    let vi = blade_element::induced_velocity(0.02, 1.0, PI);
    assert!((vi - (0.02 / (2.0 * PI)).sqrt()).abs() < 1e-15);
    let (samples, loads) = r.loads(16, 32, |_| [0.0, -vi, 0.0]);
    let total: [f64; 3] = std::array::from_fn(|a| samples.iter().map(|s| s.force[a]).sum());
    assert!((total[1] + 0.02).abs() < 1e-15 && total[0].abs() < 1e-15 && total[2].abs() < 1e-15);
    assert!((loads.inflow - vi).abs() < 1e-15);
    assert!((loads.power - 0.02 * vi).abs() < 1e-15);
    let c = r.coefficients(&loads, 1.0);
    assert!((c.figure_of_merit - 1.0).abs() < 1e-12, "{c:?}");
}

/// A disk outside the grid is refused, with the point that has no grid point near it.
#[test]
fn a_disk_off_the_grid_is_refused() {
    let r = Rotor {
        centre: [5.0, 5.0, 5.0],
        ..rotor(8.0, 0.0)
    };
    let (samples, _) = r.loads(4, 8, |_| [0.0; 3]);
    let points = Points {
        origin: [0.0; 3],
        spacing: [0.1; 3],
        n: [10; 3],
    };
    let positions: Vec<[f64; 3]> = samples.iter().map(|s| s.position).collect();
    let e = Spreading::new(&positions, &points, 0.15, 1.0, |p| p[0]).unwrap_err();
    assert!(e.contains("must lie inside the domain"), "{e}");
}
