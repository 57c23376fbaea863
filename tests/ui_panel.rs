//! The control panel drives the solver: egui_kittest clicks and types into the real panel.

mod common;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use flowlab::solver::limiter::Limiter;
use flowlab::ui::panel;
use flowlab::ui::state::AppState;

fn harness(state: AppState) -> Harness<'static, AppState> {
    Harness::builder()
        .with_size(egui::vec2(420.0, 1400.0))
        .build_ui_state(|ui, state: &mut AppState| panel::controls(ui, state), state)
}

fn viscosity(state: &AppState) -> f64 {
    state.solver.summary()["viscosity"].as_f64().unwrap()
}

#[test]
fn changing_re_changes_the_solver_viscosity() {
    let mut state = AppState::new(common::cavity(100.0, 16)).unwrap();
    state.playing = false;
    assert!((viscosity(&state) - 0.01).abs() < 1e-15);
    let mut h = harness(state);
    h.get_by_label("Re").set_value_accesskit(400.0);
    h.run();
    let state = h.state();
    assert_eq!(state.case.spec.physics.re, Some(400.0));
    assert!(
        (viscosity(state) - 1.0 / 400.0).abs() < 1e-15,
        "viscosity {}",
        viscosity(state)
    );
    assert!(state.case.to_toml().contains("re = 400"));
}

#[test]
fn switching_the_limiter_mid_run_keeps_the_state() {
    let mut state = AppState::new(common::cavity(100.0, 16)).unwrap();
    for _ in 0..20 {
        assert!(state.single_step());
    }
    let mut before = Vec::new();
    state.solver.field("u", &mut before).unwrap();
    let mut h = harness(state);
    h.get_by_label("limiter").click();
    h.run();
    h.get_by_label("minmod").click();
    h.run();
    let state = h.state_mut();
    assert_eq!(state.case.spec.solver.limiter, Some(Limiter::Minmod));
    assert_eq!(state.solver.steps(), 20);
    let mut after = Vec::new();
    state.solver.field("u", &mut after).unwrap();
    assert_eq!(before, after, "the limiter switch must not touch the state");
    assert!(state.single_step(), "the run goes on with the new limiter");
}

#[test]
fn reset_restores_the_initial_state() {
    let mut state = AppState::new(common::cavity(100.0, 16)).unwrap();
    let mut initial = Vec::new();
    state.solver.field("u", &mut initial).unwrap();
    for _ in 0..10 {
        state.single_step();
    }
    let mut h = harness(state);
    h.get_by_label("Reset").click();
    h.run();
    let state = h.state();
    assert_eq!(state.solver.steps(), 0);
    assert_eq!(state.solver.time(), 0.0);
    let mut u = Vec::new();
    state.solver.field("u", &mut u).unwrap();
    assert_eq!(u, initial);
}

#[test]
fn grid_size_waits_for_reset() {
    let state = AppState::new(common::cavity(100.0, 16)).unwrap();
    let mut h = harness(state);
    h.get_by_label("grid.nx").set_value_accesskit(24.0);
    h.run();
    assert_eq!(h.state().solver.info().grid.n[0], 16, "applies on reset only");
    assert_eq!(h.state().pending_value("grid.nx"), Some("24"));
    h.get_by_label("Reset").click();
    h.run();
    assert_eq!(h.state().solver.info().grid.n[0], 24);
    assert!(h.state().pending.is_empty());
}
