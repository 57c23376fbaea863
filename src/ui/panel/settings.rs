//! The solver settings of the side panel: each family's live controls and restart settings,
//! showing the values in use (the family's configuration resolving what the case leaves out),
//! and the backend choice.

use super::*;

/// Re or the kinematic viscosity, live; a `[fluid]` model is shown, not edited.
fn viscosity_control(ui: &mut Ui, state: &mut AppState, spec: &crate::case::CaseSpec) {
    if let Some(re) = spec.physics.re {
        live_number(
            ui,
            state,
            "Re",
            "physics.re",
            re,
            (re * 0.01).max(0.1),
            1e-3..=1e6,
        );
    } else if let Some(nu) = spec.physics.viscosity {
        live_number(
            ui,
            state,
            "viscosity",
            "physics.viscosity",
            nu,
            nu * 0.01,
            1e-9..=1e3,
        );
    } else if let Some(f) = &spec.fluid {
        ui.label(format!("fluid: {} (set in the case file)", name_of(&f.model)));
    }
}

/// The limiter picker (live), offering `limiters`.
fn limiter_choice(ui: &mut Ui, state: &mut AppState, limiters: &[Limiter], current: Limiter) {
    let names: Vec<&str> = limiters.iter().map(|l| l.name()).collect();
    choice(
        ui,
        state,
        "limiter",
        "solver.limiter",
        current.name(),
        &names,
        false,
    );
}

/// Shown in place of the settings when the family cannot resolve the case's configuration.
fn unresolved(ui: &mut Ui, e: crate::case::Invalid) {
    ui.label(RichText::new(format!("{}: {}", e.key, e.message)).color(Color32::from_rgb(230, 160, 60)));
}

pub(super) fn settings_section(ui: &mut Ui, state: &mut AppState) {
    let spec = state.case.spec.clone();
    let s = &spec.solver;
    let steady = s.method.and_then(Algorithm::of).is_some();
    // Every control shows the value in use: the family's configuration resolves the settings
    // the case leaves out (e.g. a compressible CFL of 0.4 or 0.8 by method and dimension).
    match (spec.case.kind, steady) {
        (Kind::Incompressible, true) => {
            let c = match SimpleConfig::from_spec(&spec) {
                Ok(c) => c,
                Err(e) => return unresolved(ui, e),
            };
            viscosity_control(ui, state, &spec);
            live_number(
                ui,
                state,
                "alpha_u",
                "solver.alpha_u",
                c.alpha_u,
                0.01,
                0.05..=1.0,
            );
            live_number(
                ui,
                state,
                "alpha_p",
                "solver.alpha_p",
                c.alpha_p,
                0.01,
                0.01..=1.0,
            );
            let cv = s.convection.map_or("power_law".into(), |v| name_of(&v));
            choice(
                ui,
                state,
                "convection",
                "solver.convection",
                &cv,
                &["power_law", "upwind", "central", "quick", "tvd"],
                false,
            );
            // The limiter convection = "tvd" uses (SimpleConfig's default when not set).
            let lim = s.limiter.unwrap_or(Limiter::VanLeer);
            limiter_choice(ui, state, &Limiter::TABLE_2_1, lim);
            choice(
                ui,
                state,
                "momentum solver",
                "solver.linear_solver.momentum",
                c.momentum_solver.name(),
                &["adi", "jacobi", "bicgstab"],
                false,
            );
            choice(
                ui,
                state,
                "pressure-correction solver",
                "solver.linear_solver.pressure",
                c.pressure_solver.name(),
                &["adi", "jacobi", "cg", "multigrid_cg", "bicgstab"],
                false,
            );
            let ny = spec.grid.ny.max(1);
            count(
                ui,
                state,
                "Schwarz subdomains",
                "solver.linear_solver.subdomains",
                c.subdomains,
                1..=ny,
                false,
            );
            count(
                ui,
                state,
                "overlap (layers)",
                "solver.linear_solver.overlap",
                c.overlap,
                0..=ny,
                false,
            );
        }
        (Kind::Incompressible, false) => {
            let c = match crate::solver::incompressible::Config::from_spec(&spec) {
                Ok(c) => c,
                Err(e) => return unresolved(ui, e),
            };
            viscosity_control(ui, state, &spec);
            live_number(ui, state, "CFL", "solver.cfl", c.cfl, 0.01, 0.01..=1.0);
            let ti = name_of(&c.integrator);
            choice(
                ui,
                state,
                "time integrator",
                "solver.time_integrator",
                &ti,
                &["euler", "ab2"],
                false,
            );
            let cv = name_of(&c.convection);
            choice(
                ui,
                state,
                "convection",
                "solver.convection",
                &cv,
                &["central", "upwind", "tvd", "quick"],
                false,
            );
            limiter_choice(ui, state, &Limiter::ALL, c.limiter);
            let ps = name_of(&c.poisson.kind);
            choice(
                ui,
                state,
                "pressure solver",
                "solver.pressure_solver",
                &ps,
                &["jacobi", "sor", "pcg", "multigrid", "fft"],
                false,
            );
        }
        (Kind::Compressible, _) => {
            let c = match crate::solver::compressible::Config::from_spec(&spec) {
                Ok(c) => c,
                Err(e) => return unresolved(ui, e),
            };
            live_number(ui, state, "CFL", "solver.cfl", c.cfl, 0.01, 0.01..=1.0);
            if c.method == Method::Cese {
                live_number(
                    ui,
                    state,
                    "CE/SE alpha",
                    "solver.alpha",
                    c.alpha,
                    0.05,
                    0.0..=10.0,
                );
            } else {
                let names: Vec<&str> = RiemannSolver::ALL.iter().map(|r| r.name()).collect();
                choice(
                    ui,
                    state,
                    "Riemann solver",
                    "solver.riemann",
                    c.riemann.name(),
                    &names,
                    false,
                );
                limiter_choice(ui, state, &Limiter::ALL, c.limiter);
                let mut ch = c.characteristic;
                if ui.checkbox(&mut ch, "characteristic limiting").changed() {
                    let _ = state.set("solver.characteristic_limiting", &ch.to_string());
                }
            }
        }
    }
    ui.label(RichText::new("restart settings (Apply or Reset)").weak());
    // Methods that take the same case keys (switching to or from the projection method would
    // change which keys are valid: that is a case-file edit).
    let methods: &[&str] = match spec.case.kind {
        Kind::Compressible => &["muscl_hancock", "cese"],
        Kind::Incompressible if steady => &["simple", "simplec", "simpler"],
        Kind::Incompressible => &[],
    };
    if !methods.is_empty() {
        let method = state
            .pending_value("solver.method")
            .map(|v| v.trim_matches('"').to_string())
            .unwrap_or_else(|| s.method.unwrap_or(Method::MusclHancock).name().to_string());
        choice(
            ui,
            state,
            "solver method",
            "solver.method",
            &method,
            methods,
            true,
        );
    }
    let prec = state
        .pending_value("solver.precision")
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| s.precision.map_or("f64".into(), |p| name_of(&p)));
    choice(
        ui,
        state,
        "precision",
        "solver.precision",
        &prec,
        &["f32", "f64"],
        true,
    );
    let dim = spec.case.dim as usize;
    for (axis, key) in ["grid.nx", "grid.ny", "grid.nz"].iter().enumerate().take(dim) {
        let current: usize = state
            .pending_value(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or([spec.grid.nx, spec.grid.ny, spec.grid.nz][axis]);
        count(ui, state, key, key, current, 4..=4096, true);
    }
    backend_choice(ui, state);
    if !state.pending.is_empty() {
        ui.label(
            RichText::new(format!(
                "{} change(s) pending: Apply keeps the flow, Reset restarts it",
                state.pending.len()
            ))
            .color(Color32::from_rgb(230, 160, 60)),
        );
        if ui
            .add_enabled(
                state.failure.is_none(),
                egui::Button::new("Apply (keep the flow)"),
            )
            .clicked()
        {
            let _ = state.apply_pending();
        }
    }
}

/// The backend picker (applied with the other restart settings, the state moves across), with
/// the reason when no CUDA device is usable.
fn backend_choice(ui: &mut Ui, state: &mut AppState) {
    let running = state.solver.info().backend;
    let chosen = state
        .pending_value("solver.backend")
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| {
            state
                .case
                .spec
                .solver
                .backend
                .map_or("auto".into(), |b| name_of(&b))
        });
    choice(
        ui,
        state,
        "backend",
        "solver.backend",
        &chosen,
        &["cpu", "cuda", "auto"],
        true,
    );
    let on = match crate::backend::cuda::probe() {
        Ok(device) if running == "cuda" => format!("cuda, {}", device.describe()),
        _ if running == "cpu" => format!("cpu, {} threads", rayon::current_num_threads()),
        _ => running.to_string(),
    };
    ui.label(RichText::new(format!("running on: {on}")).weak());
    if let Err(e) = crate::backend::cuda::probe() {
        ui.label(RichText::new(format!("CUDA unavailable: {e}")).weak());
    }
}
