//! The control panel drives the solver: egui_kittest clicks and types into the real panel.

mod common;

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use flowlab::render::gather::{self, Freshness, Scratch};
use flowlab::render::view::{FrameData, VolumeSettings};
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

#[test]
fn a_grid_change_applies_keeping_the_flow() {
    let mut state = AppState::new(common::cavity(100.0, 16)).unwrap();
    state.playing = false;
    for _ in 0..30 {
        assert!(state.single_step());
    }
    let (time, points) = (
        state.solver.time(),
        [[0.5, 0.8, 0.0], [0.3, 0.4, 0.0], [0.75, 0.5, 0.0]],
    );
    let before: Vec<f64> = points
        .iter()
        .map(|p| state.solver.sample("u", *p).unwrap())
        .collect();
    let mut h = harness(state);
    h.get_by_label("grid.nx").set_value_accesskit(32.0);
    h.run();
    h.get_by_label("grid.ny").set_value_accesskit(32.0);
    h.run();
    h.get_by_label("Apply (keep the flow)").click();
    h.run();
    let state = h.state_mut();
    assert_eq!(state.solver.info().grid.n[..2], [32, 32]);
    assert!(state.pending.is_empty());
    assert_eq!(
        (state.solver.steps(), state.solver.time()),
        (30, time),
        "the run goes on"
    );
    for (p, b) in points.iter().zip(&before) {
        let a = state.solver.sample("u", *p).unwrap();
        // Bilinear resampling of a 16² flow onto 32²: interpolation error only.
        assert!((a - b).abs() < 0.02, "u at {p:?}: {b} on 16², {a} on 32²");
    }
    assert!(state.single_step(), "the finer solver steps on");
}

#[test]
fn a_diverging_run_pauses_and_explains_with_a_one_click_reset() {
    // Roe's linearisation is not positivity preserving: Toro's 123 problem gives a negative
    // pressure in the first step (Einfeldt et al. 1991).
    let case = common::case("toro_test2", &["solver.riemann=\"roe\""]);
    let mut state = AppState::new(case).unwrap();
    state.advance_frame();
    assert!(!state.playing, "a failure pauses the run");
    let failure = state.failure.clone().expect("the failure is kept");
    assert!(failure.contains("negative or non-finite"), "{failure}");
    let mut h = harness(state);
    h.run();
    h.get_by_label("Run stopped");
    h.get_by_label_contains("use a more diffusive limiter");
    assert!(
        h.get_by_label("Play").accesskit_node().is_disabled(),
        "play is off until reset"
    );
    h.get_all_by_label("Reset")
        .next()
        .expect("the banner's Reset")
        .click();
    h.run();
    let state = h.state_mut();
    assert!(state.failure.is_none());
    assert_eq!(state.solver.steps(), 0);
    state.set("solver.riemann", "\"hllc\"").unwrap();
    state.playing = true;
    state.advance_frame();
    assert!(
        state.failure.is_none() && state.solver.steps() > 0,
        "HLLC runs the 123 problem"
    );
}

#[test]
fn choosing_cuda_moves_the_state_or_explains_why_not() {
    let mut case = common::cavity(100.0, 16);
    case.set_assignment("solver.backend=\"cpu\"").unwrap();
    let mut state = AppState::new(case).unwrap();
    assert_eq!(state.solver.info().backend, "cpu");
    state.playing = false;
    for _ in 0..10 {
        assert!(state.single_step());
    }
    let mut h = harness(state);
    h.get_by_label("backend").click();
    h.run();
    h.get_by_label("cuda").click();
    h.run();
    h.get_by_label("Apply (keep the flow)").click();
    h.run();
    let state = h.state();
    assert_eq!(state.solver.steps(), 10, "the flow is kept either way");
    if common::gpu() {
        assert_eq!(state.solver.info().backend, "cuda");
    } else {
        assert_eq!(state.solver.info().backend, "cpu");
        let m = state.message.clone().unwrap_or_default();
        assert!(m.contains("solver.backend") && m.contains("cuda"), "{m}");
        h.get_by_label_contains("CUDA unavailable");
    }
}

#[test]
fn simple_cases_get_their_own_live_controls() {
    let case = common::case("lid_driven_cavity_re100_simple", &["grid.nx=16", "grid.ny=16"]);
    let mut state = AppState::new(case).unwrap();
    state.playing = false;
    for _ in 0..5 {
        assert!(state.single_step());
    }
    let mut h = harness(state);
    assert!(h.query_by_label("CFL").is_none(), "no CFL for an outer iteration");
    h.get_by_label("alpha_u").set_value_accesskit(0.5);
    h.run();
    h.get_by_label("momentum solver").click();
    h.run();
    h.get_by_label("bicgstab").click();
    h.run();
    // The case file's pressure solver is multigrid CG; switch to Jacobi-preconditioned CG.
    h.get_by_label("pressure-correction solver").click();
    h.run();
    h.get_by_label("cg").click();
    h.run();
    let state = h.state_mut();
    assert_eq!(state.case.spec.solver.alpha_u, Some(0.5));
    let ls = state.case.spec.solver.linear_solver.clone().unwrap();
    assert_eq!(ls.momentum.map(|k| k.name()), Some("bicgstab"));
    assert_eq!(ls.pressure.map(|k| k.name()), Some("cg"));
    assert_eq!(state.solver.steps(), 5, "live: the iterate is kept");
    assert!(state.single_step(), "SIMPLE goes on with the new settings");
    assert!(state.message.is_none(), "{:?}", state.message);
    // SIMPLER from SIMPLE's current iterate, then SIMPLEC from SIMPLER's (alpha_u 0.5 as set
    // above; alpha_p its default 1).
    let mut state = h.into_state();
    for (method, steps) in [("simpler", 6), ("simplec", 7)] {
        let mut h = harness(state);
        h.get_by_label("solver method").click();
        h.run();
        h.get_by_label(method).click();
        h.run();
        h.get_by_label("Apply (keep the flow)").click();
        h.run();
        state = h.into_state();
        assert_eq!(state.solver.info().method, method);
        assert_eq!(state.solver.steps(), steps, "{method}: the iterate is kept");
        assert!(state.single_step(), "{method}: {:?}", state.message);
        assert_eq!(state.solver.steps(), steps + 1);
    }
}

#[test]
fn schwarz_subdomains_apply_live_and_are_drawn() {
    let case = common::case("lid_driven_cavity_re100_simple", &["grid.nx=16", "grid.ny=16"]);
    let mut state = AppState::new(case).unwrap();
    state.playing = false;
    assert!(state.single_step());
    assert!(state.subdomain_strips().is_empty(), "one domain: nothing drawn");
    let mut h = harness(state);
    h.get_by_label("Schwarz subdomains").set_value_accesskit(2.0);
    h.run();
    h.get_by_label("overlap (layers)").set_value_accesskit(1.0);
    h.run();
    let state = h.state_mut();
    let ls = state.case.spec.solver.linear_solver.clone().unwrap();
    assert_eq!((ls.subdomains, ls.overlap), (Some(2), Some(1)));
    assert_eq!(state.solver.steps(), 1, "live: the iterate is kept");
    assert!(state.single_step(), "{:?}", state.message);
    // Strips of rows 0..8 and 8..16 (cell height 1/16), extended by one row across the cut.
    let h16 = 1.0 / 16.0;
    assert_eq!(
        state.subdomain_strips(),
        vec![[0.0, 0.5, 0.0, 0.5 + h16], [0.5, 1.0, 0.5 - h16, 1.0]]
    );
    // Too many strips for the grid: refused with the key named, the settings kept.
    let e = state.set("solver.linear_solver.subdomains", "9").unwrap_err();
    assert!(e.contains("solver.linear_solver.subdomains"), "{e}");
    assert_eq!(state.subdomain_strips().len(), 2);
}

/// Opening a case too slow for the CPU: the app measures the step rate, coarsens the grid (the
/// 512^2 Re 1000 cavity needs ~1250 steps per lid pass, minutes of wall time at 512^2 on any
/// CPU), says so in the panel, and its button restarts on the case's grid.
#[test]
fn a_slow_case_opens_on_a_coarser_grid_and_says_so() {
    let case = common::case("lid_driven_cavity_re1000", &["grid.nx=512", "grid.ny=512"]);
    let mut state = AppState::new(case).unwrap();
    state.playing = false;
    state.fit_grid_to_speed();
    let choice = state.grid_choice.clone().expect("measured on the CPU");
    assert_eq!(choice.case_grid, [512, 512, 1]);
    assert!(choice.coarsened(), "{choice:?}");
    assert!(choice.grid[0] >= 32 && choice.grid[0] < 512, "{choice:?}");
    assert_eq!(state.solver.info().grid.n, choice.grid);
    assert_eq!(
        state.case.spec.grid.nx, choice.grid[0],
        "the case runs the chosen grid"
    );
    let mut h = harness(state);
    h.run();
    let [nx, ny, _] = choice.grid;
    h.get_by_label_contains(&format!("grid {nx}x{ny} chosen for speed (the case asks 512x512"));
    h.get_by_label("Reset with the case grid (512x512)").click();
    h.run();
    let state = h.state();
    assert_eq!(state.solver.info().grid.n[..2], [512, 512]);
    assert_eq!(state.grid_choice, None);
}

/// The panel shows the value a setting the case leaves out has in the solver: the compressible
/// family's CFL (0.4 for 2D MUSCL-Hancock, 0.8 otherwise) and CE/SE's alpha (2), not a fixed 0.5
/// and 1.
#[test]
fn defaulted_settings_show_the_values_in_use() {
    let quadrant = std::fs::read_to_string(common::root().join("cases/riemann_quadrant_config3.toml"))
        .unwrap()
        .replace("cfl = 0.4", "");
    for (name, text, label, value) in [
        ("sod", common::sod(100, ""), "CFL", 0.8),
        ("cese", common::sod(100, "method = \"cese\""), "CFL", 0.8),
        ("cese", common::sod(100, "method = \"cese\""), "CE/SE alpha", 2.0),
        ("quadrant", quadrant, "CFL", 0.4),
    ] {
        let mut case = flowlab::case::Case::parse(&text, name).unwrap();
        assert_eq!(
            (case.spec.solver.cfl, case.spec.solver.alpha),
            (None, None),
            "{name}"
        );
        common::on_cpu_unless_named(&mut case);
        let h = harness(AppState::new(case).unwrap());
        let shown = h.get_by_label(label).accesskit_node().numeric_value();
        assert_eq!(shown, Some(value), "{name}: {label}");
    }
}

#[test]
fn the_3d_controls_move_the_slice_seed_streamlines_in_space_save_the_surfaces_and_add_slices() {
    let case = common::case("cavity_3d_re100", &["grid.nx=12", "grid.ny=12", "grid.nz=12"]);
    let mut state = AppState::new(case).unwrap();
    state.playing = false;
    for _ in 0..20 {
        assert!(state.single_step());
    }
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("ui_panel_surfaces");
    let _ = std::fs::remove_dir_all(&dir);
    state.export_dir = dir.clone();
    assert!(state.view.view3d.enabled, "a 3D case opens in the 3D view");
    // Tall enough to show every 3D control at once.
    let mut h = Harness::builder()
        .with_size(egui::vec2(420.0, 2400.0))
        .build_ui_state(|ui, state: &mut AppState| panel::controls(ui, state), state);
    // The slice: normal to x, at a quarter; the probe's point follows it.
    h.get_by_label("x").click();
    h.run();
    h.get_by_role_and_label(egui::accesskit::Role::Slider, "slice position")
        .set_value_accesskit(0.25);
    h.run();
    let s = h.state().view.slice;
    assert_eq!((s.axis, s.position), (0, 0.25));
    assert_eq!(h.state().grid_point([0.5, 0.75]), [0.25, 0.5, 0.75]);
    // Isosurfaces of the speed at a level set in the panel, saved as a PLY mesh.
    h.get_by_label("isosurfaces of").click();
    h.run();
    h.get_by_label("speed").click();
    h.run();
    assert_eq!(h.state().view.view3d.iso_field.as_deref(), Some("speed"));
    assert!(
        h.state().view.view3d.iso_levels.is_empty(),
        "chosen from the new field when drawn"
    );
    h.state_mut().view.view3d.iso_levels = vec![0.02];
    h.run();
    h.get_by_label("save the surfaces (.ply)").click();
    h.run();
    let message = h.state().message.clone().unwrap_or_default();
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|f| f.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{message}");
    assert!(
        message.contains("saved") && files[0].to_string_lossy().contains("speed_2.0000e-2"),
        "{message}"
    );
    assert!(std::fs::read(&files[0]).unwrap().starts_with(b"ply\n"));
    // Coloured by the pressure, transparent at 0.3: the view reads the pressure too.
    h.get_by_label("surfaces coloured by").click();
    h.run();
    h.get_by_label("p").click_accesskit();
    h.run();
    h.get_by_label("transparent").click_accesskit();
    h.run();
    h.get_by_role_and_label(egui::accesskit::Role::Slider, "surface opacity")
        .set_value_accesskit(0.3);
    h.run();
    let v = &h.state().view;
    assert_eq!(v.view3d.iso_colour.as_deref(), Some("p"));
    assert_eq!(v.view3d.iso_opacity, Some(0.3));
    assert!(v.shown_fields().contains(&"p"));
    // Streamlines from a lattice on the slice run in space: the panel says so and keeps to the
    // 3D limit of seeds, and the view reads all three velocity components.
    h.get_by_label("streamlines").click();
    h.run();
    // The list's entry, before the settings' "grid" heading.
    h.get_all_by_label("grid").next().unwrap().click();
    h.run();
    assert_eq!(
        h.state().view.streamlines.seeding,
        flowlab::render::view::Seeding::Grid { n: 8 }
    );
    assert!(h.query_by_label_contains("lines through the 3D flow").is_some());
    h.get_by_label("seeds per side").set_value_accesskit(40.0);
    h.run();
    let v = &h.state().view;
    assert_eq!(
        v.streamlines.seeding,
        flowlab::render::view::Seeding::Grid { n: 16 }
    );
    assert!(v.traces_in_space() && v.shown_fields().contains(&"w"));
    // Volume rendering of the vorticity's magnitude, its curve raised at the top (the list's
    // entry lies below the harness's screen: clicked through AccessKit, not the pointer).
    h.get_by_label("volume rendering of").click();
    h.run();
    h.get_by_label("vorticity_magnitude").click_accesskit();
    h.run();
    h.get_by_role_and_label(egui::accesskit::Role::Slider, "opacity high")
        .set_value_accesskit(0.8);
    h.run();
    let v = &h.state().view;
    let volume = v.view3d.volume.as_ref().expect("volume rendering on");
    assert_eq!(volume.field, "vorticity_magnitude");
    assert_eq!(volume.opacity[3], 0.8);
    assert_eq!(volume.opacity[..3], VolumeSettings::DEFAULT_OPACITY[..3]);
    assert!(v.shown_fields().contains(&"vorticity_magnitude"));
    // Two more slices, each normal to an axis not yet cut (the first is normal to x), and no
    // fourth; the second moved to 0.8.
    h.get_by_label("add a slice").click_accesskit();
    h.run();
    h.get_by_label("add a slice").click_accesskit();
    h.run();
    let more = &h.state().view.view3d.more_slices;
    assert_eq!(more.iter().map(|s| s.axis).collect::<Vec<_>>(), [1, 2]);
    assert!(h.get_by_label("add a slice").accesskit_node().is_disabled());
    h.get_by_role_and_label(egui::accesskit::Role::Slider, "slice 2 position")
        .set_value_accesskit(0.8);
    h.run();
    assert_eq!(h.state().view.view3d.more_slices[0].position, 0.8);
    // The frame carries each slice's plane of the shown field, on one colour scale.
    let state = h.state();
    let mut frame = FrameData::default();
    gather::gather(
        state.solver.as_ref(),
        &state.view,
        Freshness::Current,
        &mut Scratch::default(),
        &mut frame,
    )
    .expect("a frame");
    assert_eq!(frame.more_slices.len(), 2);
    let mut speed = Vec::new();
    state.solver.field(&state.view.field, &mut speed).unwrap();
    let n = state.solver.info().grid.n;
    for (slice, plane) in state.view.view3d.more_slices.iter().zip(&frame.more_slices) {
        let mut cut = Vec::new();
        slice.cut_into(&speed, n, &mut cut);
        let shown: Vec<f64> = plane.field.iter().map(|&v| f64::from(v)).collect();
        let [p, q] = slice.plane_axes();
        assert_eq!(plane.n, [n[p], n[q]]);
        assert!(
            cut.iter()
                .zip(&shown)
                .all(|(a, b)| (a - b).abs() <= 1e-6 * a.abs().max(1e-30))
        );
        assert_eq!(plane.range, frame.range, "one colour scale");
        assert!(
            plane
                .field
                .iter()
                .all(|v| (frame.range[0]..=frame.range[1]).contains(v))
        );
    }
    // Removing the second slice leaves the third.
    h.get_by_label("remove slice 2").click_accesskit();
    h.run();
    let more = &h.state().view.view3d.more_slices;
    assert_eq!((more.len(), more[0].axis), (1, 2));
}

/// A rotor case shows its section: the collective pitch applies live (the solver's rotor takes
/// it, the flow is kept), and the loads stand beside blade-element momentum theory.
#[test]
fn the_rotor_collective_applies_live_beside_momentum_theory() {
    let case = common::case(
        "rotor_hover",
        &["grid.nx=16", "grid.ny=24", "grid.nz=16", "solver.backend=\"cpu\""],
    );
    let mut state = AppState::new(case).unwrap();
    state.playing = false;
    assert!(state.single_step());
    let mut h = harness(state);
    h.run();
    h.get_by_label("momentum theory");
    h.get_by_label("C_T");
    h.get_by_label("collective pitch (deg, at 3/4 R)")
        .set_value_accesskit(10.0);
    h.run();
    let state = h.state_mut();
    assert_eq!(
        state.case.spec.rotor.as_ref().and_then(|r| r.collective),
        Some(10.0)
    );
    let collective = match state.solver.rotor().expect("a rotor").loading {
        flowlab::solver::rotor::Loading::Blades(b) => b.collective,
        flowlab::solver::rotor::Loading::Uniform { .. } => unreachable!("blades"),
    };
    assert!((collective - 10f64.to_radians()).abs() < 1e-15, "{collective}");
    assert_eq!(state.solver.steps(), 1, "live: the flow is kept");
    assert!(state.single_step(), "{:?}", state.message);
}

#[test]
fn the_statistics_say_how_a_gpu_solvers_fields_reach_the_view() {
    let state = AppState::new(common::cavity(100.0, 16)).unwrap();
    assert!(
        state.fields_through.is_none(),
        "a CPU solver's fields have no path to tell"
    );
    let mut h = harness(state);
    h.run();
    assert!(h.query_by_label("fields drawn from").is_none());
    let mut state = AppState::new(common::cavity(100.0, 16)).unwrap();
    state.fields_through = Some("GPU memory shared with the view".into());
    let mut h = harness(state);
    h.run();
    h.get_by_label("fields drawn from");
    h.get_by_label("GPU memory shared with the view");
}
