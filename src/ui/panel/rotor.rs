//! The rotor's section of the side panel: its live settings (the blades' collective pitch and
//! rotational speed, a uniform disk's thrust), its thrust and power coefficients, figure of
//! merit and inflow beside momentum theory's (Leishman, ch. 2-3: the comparison
//! `tests/rotor_hover.rs` makes), and the thrust, power and figure of merit against the steps.

use super::*;
use crate::solver::rotor::blade_element::{hover_thrust_coefficient, induced_velocity};
use crate::solver::rotor::{DiskLoads, Loading, Rotor};

/// The last recorded value of residual `name`.
fn last(state: &AppState, name: &str) -> Option<f64> {
    state
        .history
        .last()
        .and_then(|(_, _, r)| r.iter().find(|x| x.0 == name).map(|x| x.1))
}

pub(super) fn rotor_section(ui: &mut Ui, state: &mut AppState, rotor: Rotor) {
    let omega = match rotor.loading {
        Loading::Blades(b) => {
            live_number(
                ui,
                state,
                "collective pitch (deg, at 3/4 R)",
                "rotor.collective",
                b.collective.to_degrees(),
                0.1,
                -20.0..=30.0,
            );
            live_number(
                ui,
                state,
                "rotational speed (rad / time)",
                "rotor.omega",
                b.omega,
                0.01 * b.omega.abs(),
                1e-6..=1e6,
            );
            b.omega
        }
        Loading::Uniform { thrust } => {
            live_number(
                ui,
                state,
                "thrust",
                "rotor.thrust",
                thrust,
                0.01 * thrust.abs(),
                1e-12..=1e12,
            );
            // Coefficients of a uniform disk at unit tip speed, as the solver reports them.
            1.0 / rotor.radius
        }
    };
    let (Some(thrust), Some(power), Some(inflow)) = (
        last(state, "rotor_thrust"),
        last(state, "rotor_power"),
        last(state, "inflow_at_disk"),
    ) else {
        ui.label(RichText::new("loads after the first step").weak());
        return;
    };
    let loads = DiskLoads {
        thrust,
        power,
        inflow,
        ..DiskLoads::default()
    };
    let c = rotor.coefficients(&loads, omega);
    egui::Grid::new("rotor results").striped(true).show(ui, |ui| {
        ui.label("");
        ui.label("FlowLab");
        ui.label("momentum theory");
        ui.end_row();
        match rotor.loading {
            Loading::Blades(b) => {
                // Blade-element momentum theory with uniform inflow and the profile power.
                let sigma = b.solidity(rotor.root, rotor.radius);
                let (ct, lambda) = hover_thrust_coefficient(sigma, b.airfoil.lift_slope, b.collective);
                let cp = ct.powf(1.5) / 2f64.sqrt() + sigma * b.airfoil.drag[0] / 8.0;
                let tip = omega * rotor.radius;
                for (name, ours, theory) in [
                    ("C_T", c.thrust, ct),
                    ("C_P", c.power, cp),
                    ("inflow / tip speed", inflow / tip, lambda),
                    (
                        "figure of merit",
                        c.figure_of_merit,
                        ct.powf(1.5) / 2f64.sqrt() / cp,
                    ),
                ] {
                    ui.label(name);
                    ui.label(format!("{ours:.4e}"));
                    ui.label(format!("{theory:.4e} ({:+.1} %)", 100.0 * (ours / theory - 1.0)));
                    ui.end_row();
                }
            }
            Loading::Uniform { thrust: t } => {
                let vi = induced_velocity(t, rotor.rho, rotor.area());
                ui.label("inflow v_i");
                ui.label(format!("{inflow:.4e}"));
                ui.label(format!("{vi:.4e} ({:+.1} %)", 100.0 * (inflow / vi - 1.0)));
                ui.end_row();
                ui.label("power / (T v_i)");
                ui.label(format!("{:.4}", power / (t * vi)));
                ui.label("1");
                ui.end_row();
            }
        }
    });
    for (name, label) in [
        ("rotor_thrust", "thrust"),
        ("rotor_power", "power"),
        ("figure_of_merit", "figure of merit"),
    ] {
        let points: Vec<[f64; 2]> = state
            .history
            .iter()
            .filter_map(|(step, _, r)| r.iter().find(|x| x.0 == name).map(|x| [*step as f64, x.1]))
            .collect();
        Plot::new(format!("rotor {name}"))
            .height(90.0)
            .x_axis_label("step")
            .y_axis_label(label)
            .show(ui, |p| p.line(Line::new(label, PlotPoints::new(points))));
    }
}
