//! The egui side panel (case, run control, live settings, view, export, statistics), the plots
//! (cavity centrelines with Ghia's data, residual history, 1D profiles) and the help window.

use super::reference;
use super::state::{AppState, Request, StepsPerFrame};
use crate::case::{Kind, Method, RiemannSolver};
use crate::render::colormap::Colormap;
use crate::render::streamlines::{Integrator, even};
use crate::render::view::{self, Range, Seeding};
use crate::solver::incompressible::SimpleConfig;
use crate::solver::incompressible::simple::Algorithm;
use crate::solver::limiter::Limiter;
use egui::{Color32, DragValue, RichText, Ui};
use egui_plot::{Legend, Line, Plot, PlotPoints, Points};
use std::time::Duration;

/// Keyboard shortcuts, shown in the help window and handled by [`shortcuts`].
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Space", "play / pause"),
    ("S", "single step"),
    ("R", "reset"),
    ("F12 / P", "screenshot (PNG)"),
    ("V", "start / stop video recording"),
    ("C", "toggle contour lines"),
    ("L", "toggle streamlines (evenly spaced)"),
    ("A", "toggle velocity arrows"),
    ("G", "toggle plots"),
    ("Home", "fit the domain in the view"),
    ("F1 / H", "this help"),
    ("drag (left)", "pan; draws the rake in rake mode"),
    ("click", "pin the probe; adds a seed in click mode"),
    ("wheel", "zoom about the cursor"),
];

/// Applies the keyboard shortcuts (when no text field has focus). Returns true if the view
/// should be refitted (Home).
pub fn shortcuts(ctx: &egui::Context, state: &mut AppState) -> bool {
    if ctx.egui_wants_keyboard_input() {
        return false;
    }
    let mut refit = false;
    ctx.input(|i| {
        for e in &i.events {
            if let egui::Event::Key {
                key,
                pressed: true,
                modifiers,
                ..
            } = e
            {
                if !modifiers.is_none() {
                    continue;
                }
                match key {
                    egui::Key::Space => state.playing = !state.playing,
                    egui::Key::S => {
                        state.playing = false;
                        state.single_step();
                    }
                    egui::Key::R => {
                        let _ = reset(state);
                    }
                    egui::Key::F12 | egui::Key::P => state.requests.push(Request::Screenshot),
                    egui::Key::V => state.requests.push(Request::ToggleVideo),
                    egui::Key::C => state.view.contours.enabled = !state.view.contours.enabled,
                    egui::Key::L => {
                        state.view.streamlines.seeding = match state.view.streamlines.seeding {
                            Seeding::Off => Seeding::Even {
                                separation: even::DEFAULT_SEPARATION,
                            },
                            _ => Seeding::Off,
                        }
                    }
                    egui::Key::A => {
                        state.view.arrows = if state.view.arrows.is_some() {
                            None
                        } else {
                            Some(24)
                        }
                    }
                    egui::Key::G => state.show_plots = !state.show_plots,
                    egui::Key::Home => refit = true,
                    egui::Key::F1 | egui::Key::H => state.show_help = !state.show_help,
                    _ => {}
                }
            }
        }
    });
    refit
}

fn reset(state: &mut AppState) -> Result<(), String> {
    let r = state.reset();
    if let Err(e) = &r {
        state.message = Some(e.clone());
    }
    r
}

/// Adds `widget` after a label that names it (for screen readers and UI tests).
fn named(ui: &mut Ui, label: &str, widget: impl egui::Widget) -> egui::Response {
    let l = ui.label(label);
    ui.add(widget).labelled_by(l.id)
}

/// A labelled drag value that applies `key` live when changed.
fn live_number(
    ui: &mut Ui,
    state: &mut AppState,
    label: &str,
    key: &str,
    value: f64,
    speed: f64,
    range: std::ops::RangeInclusive<f64>,
) {
    ui.horizontal(|ui| {
        let l = ui.label(label);
        let mut v = value;
        let r = ui
            .add(DragValue::new(&mut v).speed(speed).range(range))
            .labelled_by(l.id);
        if r.changed() && v != value {
            let _ = state.set(key, &format!("{v:?}"));
        }
    });
}

/// A labelled integer drag value that applies `key` when changed: live, or on reset.
fn count(
    ui: &mut Ui,
    state: &mut AppState,
    label: &str,
    key: &str,
    value: usize,
    range: std::ops::RangeInclusive<usize>,
    on_reset: bool,
) {
    ui.horizontal(|ui| {
        let mut v = value;
        let r = named(ui, label, DragValue::new(&mut v).range(range));
        if r.changed() && v != value {
            let _ = if on_reset {
                state.set_on_reset(key, &v.to_string())
            } else {
                state.set(key, &v.to_string())
            };
        }
    });
}

/// A combo box of named choices that applies `key` live (or on reset).
fn choice(
    ui: &mut Ui,
    state: &mut AppState,
    label: &str,
    key: &str,
    current: &str,
    options: &[&str],
    on_reset: bool,
) {
    let mut selected = current.to_string();
    egui::ComboBox::from_label(label)
        .selected_text(current)
        .show_ui(ui, |ui| {
            for o in options {
                ui.selectable_value(&mut selected, o.to_string(), *o);
            }
        });
    if selected != current {
        let value = format!("\"{selected}\"");
        let _ = if on_reset {
            state.set_on_reset(key, &value)
        } else {
            state.set(key, &value)
        };
    }
}

fn name_of<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Draws the overlapping Schwarz strips of a decomposed SIMPLE run over the field view: the
/// overlap bands shaded, the strip boundaries as lines (`to_screen`: world point to screen
/// point).
pub fn subdomain_overlay(
    painter: &egui::Painter,
    state: &AppState,
    to_screen: impl Fn([f64; 2]) -> egui::Pos2,
) {
    let strips = state.subdomain_strips();
    if strips.is_empty() {
        return;
    }
    let g = state.solver.info().grid;
    let (x0, x1) = (g.origin[0], g.origin[0] + g.extent(0));
    let band = Color32::from_rgba_unmultiplied(255, 150, 0, 70);
    let line = egui::Stroke::new(1.5, Color32::from_rgb(255, 120, 0));
    for w in strips.windows(2) {
        // The overlap around the cut between two strips: the upper strip's extension below the
        // cut and the lower strip's above it.
        let rect = egui::Rect::from_two_pos(to_screen([x0, w[1][2]]), to_screen([x1, w[0][3]]));
        painter.rect_filled(rect, 0.0, band);
        painter.line_segment([to_screen([x0, w[0][1]]), to_screen([x1, w[0][1]])], line);
    }
    for (s, strip) in strips.iter().enumerate() {
        painter.text(
            to_screen([x0, strip[0]]) + egui::vec2(4.0, -2.0),
            egui::Align2::LEFT_BOTTOM,
            format!("strip {s}"),
            egui::FontId::proportional(12.0),
            Color32::from_rgb(255, 120, 0),
        );
    }
}

/// The whole side panel.
pub fn controls(ui: &mut Ui, state: &mut AppState) {
    egui::ScrollArea::vertical().show(ui, |ui| {
        case_section(ui, state);
        ui.separator();
        run_section(ui, state);
        ui.separator();
        egui::CollapsingHeader::new("Solver settings")
            .default_open(true)
            .show(ui, |ui| settings_section(ui, state));
        egui::CollapsingHeader::new("View")
            .default_open(true)
            .show(ui, |ui| view_section(ui, state));
        egui::CollapsingHeader::new("Saved states")
            .default_open(false)
            .show(ui, |ui| saved_states_section(ui, state));
        egui::CollapsingHeader::new("Export")
            .default_open(false)
            .show(ui, |ui| export_section(ui, state));
        egui::CollapsingHeader::new("Statistics")
            .default_open(true)
            .show(ui, |ui| stats_section(ui, state));
    });
}

fn case_section(ui: &mut Ui, state: &mut AppState) {
    ui.heading(&state.case.spec.case.name);
    let files = state.case_files();
    let current = state.case.path.clone();
    let mut open = None;
    egui::ComboBox::from_label("case")
        .selected_text(
            current
                .as_ref()
                .and_then(|p| p.file_name())
                .map_or("(none)".into(), |n| n.to_string_lossy().to_string()),
        )
        .show_ui(ui, |ui| {
            for f in &files {
                let name = f
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_default();
                if ui.selectable_label(current.as_ref() == Some(f), name).clicked() {
                    open = Some(f.clone());
                }
            }
        });
    if let Some(f) = open {
        if let Err(e) = state.open(&f) {
            state.message = Some(e);
        }
    }
    grid_choice(ui, state);
}

/// What [`AppState::fit_grid_to_speed`] chose (while that grid runs), with the way back to the
/// case's grid when it coarsened it.
fn grid_choice(ui: &mut Ui, state: &mut AppState) {
    let running = state.solver.info().grid.n;
    let Some(choice) = state.grid_choice.clone().filter(|c| c.grid[..] == running[..2]) else {
        return;
    };
    ui.label(RichText::new(choice.describe()).weak());
    if choice.coarsened() {
        let [nx, ny] = choice.case_grid;
        if ui
            .button(format!("Reset with the case grid ({nx}x{ny})"))
            .clicked()
        {
            let _ = state.use_case_grid();
        }
    }
}

fn run_section(ui: &mut Ui, state: &mut AppState) {
    if let Some(f) = state.failure.clone() {
        egui::Frame::new()
            .fill(Color32::from_rgb(90, 20, 20))
            .inner_margin(6.0)
            .show(ui, |ui| {
                ui.label(RichText::new("Run stopped").strong().color(Color32::WHITE));
                ui.label(RichText::new(f).color(Color32::WHITE));
                if ui.button("Reset").clicked() {
                    let _ = reset(state);
                }
            });
    }
    ui.horizontal(|ui| {
        let label = if state.playing { "Pause" } else { "Play" };
        if ui
            .add_enabled(state.failure.is_none(), egui::Button::new(label))
            .clicked()
        {
            state.playing = !state.playing;
        }
        if ui
            .add_enabled(state.failure.is_none(), egui::Button::new("Step"))
            .clicked()
        {
            state.playing = false;
            state.single_step();
        }
        if ui.button("Reset").clicked() {
            let _ = reset(state);
        }
        if ui.button("Help").clicked() {
            state.show_help = !state.show_help;
        }
    });
    ui.horizontal(|ui| {
        ui.label("steps/frame");
        let mut auto = matches!(state.steps_per_frame, StepsPerFrame::Auto { .. });
        if ui.checkbox(&mut auto, "auto").changed() {
            state.steps_per_frame = if auto {
                StepsPerFrame::Auto {
                    budget: Duration::from_millis(20),
                }
            } else {
                StepsPerFrame::Fixed(state.perf.frame_steps.clamp(1, 1000) as u32)
            };
        }
        if let StepsPerFrame::Fixed(n) = &mut state.steps_per_frame {
            named(ui, "steps", DragValue::new(n).range(1..=10_000));
        }
    });
    if let Some(m) = &state.message {
        ui.label(RichText::new(m).color(Color32::from_rgb(230, 160, 60)));
    }
}

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

fn settings_section(ui: &mut Ui, state: &mut AppState) {
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
                "overlap (rows)",
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
    for (axis, key) in ["grid.nx", "grid.ny"].iter().enumerate().take(dim) {
        let current: usize = state
            .pending_value(key)
            .and_then(|v| v.parse().ok())
            .unwrap_or([spec.grid.nx, spec.grid.ny][axis]);
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

fn view_section(ui: &mut Ui, state: &mut AppState) {
    let names = state.solver.field_names();
    let mut field = state.view.field.clone();
    egui::ComboBox::from_label("field")
        .selected_text(&field)
        .show_ui(ui, |ui| {
            for n in names {
                ui.selectable_value(&mut field, n.to_string(), *n);
            }
        });
    if field != state.view.field {
        state.show_field(&field);
    }
    let v = &mut state.view;
    egui::ComboBox::from_label("colormap")
        .selected_text(v.colormap.name())
        .show_ui(ui, |ui| {
            for c in Colormap::ALL {
                ui.selectable_value(&mut v.colormap, c, c.name());
            }
        });
    ui.horizontal(|ui| {
        let mut auto = !matches!(v.range, Range::Fixed { .. });
        if ui.checkbox(&mut auto, "auto range").changed() {
            let r = state.shown_range;
            v.range = if auto {
                view::default_range(&v.field)
            } else {
                Range::Fixed {
                    min: r[0] as f64,
                    max: r[1] as f64,
                }
            };
        }
        if auto {
            let mut clip = v.range == Range::Robust;
            if ui
                .checkbox(&mut clip, "clip 1-99 %")
                .on_hover_text("colour range from the 1st to the 99th percentile, so a few extreme cells do not wash out the field")
                .changed()
            {
                v.range = if clip { Range::Robust } else { Range::Auto };
            }
        }
        ui.checkbox(&mut v.log_scale, "log");
    });
    if let Range::Fixed { min, max } = &mut v.range {
        ui.horizontal(|ui| {
            named(ui, "min", DragValue::new(min).speed(0.01));
            named(ui, "max", DragValue::new(max).speed(0.01));
        });
    }
    ui.horizontal(|ui| {
        ui.checkbox(&mut v.contours.enabled, "contours");
        named(ui, "levels", DragValue::new(&mut v.contours.levels).range(1..=64));
        let shown = v.contours.field.clone().unwrap_or_else(|| "(shown field)".into());
        egui::ComboBox::from_label("of")
            .selected_text(shown)
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut v.contours.field, None, "(shown field)");
                for n in names {
                    ui.selectable_value(&mut v.contours.field, Some(n.to_string()), *n);
                }
            });
    });
    if names.contains(&"u") && names.contains(&"v") {
        let s = &mut v.streamlines;
        let mode = match s.seeding {
            Seeding::Off => "off",
            Seeding::Grid { .. } => "grid",
            Seeding::Rake { .. } => "rake (drag)",
            Seeding::Points(_) => "click",
            Seeding::Even { .. } => "even",
        };
        egui::ComboBox::from_label("streamlines")
            .selected_text(mode)
            .show_ui(ui, |ui| {
                if ui.selectable_label(mode == "off", "off").clicked() {
                    s.seeding = Seeding::Off;
                }
                if ui.selectable_label(mode == "grid", "grid").clicked() {
                    s.seeding = Seeding::Grid { n: 8 };
                }
                if ui
                    .selectable_label(mode == "rake (drag)", "rake (drag)")
                    .clicked()
                {
                    s.seeding = Seeding::Rake {
                        a: [0.0; 2],
                        b: [0.0; 2],
                        count: 0,
                    };
                }
                if ui.selectable_label(mode == "click", "click").clicked() {
                    s.seeding = Seeding::Points(Vec::new());
                }
                if ui.selectable_label(mode == "even", "even").clicked() {
                    s.seeding = Seeding::Even {
                        separation: even::DEFAULT_SEPARATION,
                    };
                }
            });
        match &mut s.seeding {
            Seeding::Grid { n } => {
                ui.horizontal(|ui| named(ui, "seeds per side", DragValue::new(n).range(1..=40)));
            }
            Seeding::Rake { count, .. } => {
                ui.horizontal(|ui| named(ui, "seeds on rake", DragValue::new(count).range(0..=200)));
            }
            Seeding::Points(p) => {
                if ui.button(format!("clear {} seeds", p.len())).clicked() {
                    p.clear();
                }
            }
            Seeding::Even { separation } => {
                ui.horizontal(|ui| {
                    named(
                        ui,
                        "spacing (of domain)",
                        DragValue::new(separation)
                            .speed(0.001)
                            .range(even::MIN_SEPARATION..=even::MAX_SEPARATION),
                    )
                });
            }
            Seeding::Off => {}
        }
        if s.seeding != Seeding::Off {
            ui.horizontal(|ui| {
                let rk45 = matches!(s.integrator, Integrator::Rk45 { .. });
                if ui.selectable_label(!rk45, "RK4").clicked() && rk45 {
                    s.integrator = Integrator::Rk4 { step: 0.005 };
                }
                if ui.selectable_label(rk45, "RK45").clicked() && !rk45 {
                    s.integrator = Integrator::Rk45 { tolerance: 1e-5 };
                }
                match &mut s.integrator {
                    Integrator::Rk4 { step } => {
                        named(ui, "step", DragValue::new(step).speed(0.0005).range(1e-5..=1.0))
                    }
                    Integrator::Rk45 { tolerance } => named(
                        ui,
                        "tolerance",
                        DragValue::new(tolerance).speed(1e-6).range(1e-10..=1e-1),
                    ),
                };
            });
            ui.horizontal(|ui| {
                named(
                    ui,
                    "max length (domains)",
                    DragValue::new(&mut s.max_length).speed(0.1).range(0.1..=100.0),
                )
            });
        }
        let mut arrows = v.arrows.is_some();
        ui.horizontal(|ui| {
            if ui.checkbox(&mut arrows, "arrows").changed() {
                v.arrows = arrows.then_some(24);
            }
            if let Some(n) = &mut v.arrows {
                named(ui, "across", DragValue::new(n).range(2..=100));
            }
        });
    }
    ui.checkbox(&mut state.show_plots, "plots");
}

fn export_section(ui: &mut Ui, state: &mut AppState) {
    ui.horizontal(|ui| {
        ui.checkbox(&mut state.screenshot_with_ui, "with UI");
        let mut custom = state.screenshot_size.is_some();
        if ui
            .add_enabled(
                !state.screenshot_with_ui,
                egui::Checkbox::new(&mut custom, "size"),
            )
            .changed()
        {
            state.screenshot_size = custom.then_some([1920, 1080]);
        }
    });
    if let (false, Some(s)) = (state.screenshot_with_ui, &mut state.screenshot_size) {
        ui.horizontal(|ui| {
            named(ui, "width", DragValue::new(&mut s[0]).range(16..=8192));
            named(ui, "height", DragValue::new(&mut s[1]).range(16..=8192));
        });
    }
    if ui.button("Screenshot (PNG)").clicked() {
        state.requests.push(Request::Screenshot);
    }
    let video = if state.recording {
        "Stop video"
    } else {
        "Record video (MP4)"
    };
    if ui.button(video).clicked() {
        state.requests.push(Request::ToggleVideo);
    }
    if ui.button("Export data (.vti)").clicked() {
        state.message = Some(match state.export_vti() {
            Ok(p) => format!("saved {}", p.display()),
            Err(e) => e,
        });
    }
    ui.horizontal(|ui| {
        ui.label("folder");
        let mut d = state.export_dir.display().to_string();
        if ui.text_edit_singleline(&mut d).changed() {
            state.export_dir = d.into();
        }
    });
    ui.horizontal(|ui| {
        if ui.button("Save case").clicked() {
            state.message = Some(match state.save_case() {
                Ok(p) => format!("saved {}", p.display()),
                Err(e) => e,
            });
        }
        ui.text_edit_singleline(&mut state.save_path);
    });
}

/// The rewind ring (keep states while playing, their interval and memory budget, go back to
/// one) and whole-state files (save the state, open a saved one).
fn saved_states_section(ui: &mut Ui, state: &mut AppState) {
    let steady = state.case.spec.solver.method.is_some_and(Method::steady);
    let r = &mut state.rewind;
    ui.checkbox(&mut r.enabled, "keep states while playing");
    ui.horizontal(|ui| {
        let unit = if steady {
            "every (iterations)"
        } else {
            "every (time)"
        };
        named(
            ui,
            unit,
            DragValue::new(&mut r.interval).range(0.0..=1e9).speed(0.01),
        );
        let mut mb = r.ring.budget() >> 20;
        if named(ui, "memory (MB)", DragValue::new(&mut mb).range(16..=65536)).changed() {
            r.set_budget_mb(mb);
        }
    });
    ui.label(r.describe(steady));
    if !r.ring.is_empty() {
        let last = r.ring.len() - 1;
        r.selected = r.selected.min(last);
        ui.add(egui::Slider::new(&mut r.selected, 0..=last).text("kept state"));
        let picked = r.ring.get(r.selected).map(|s| (s.steps, s.time));
        if let Some((step, time)) = picked {
            let k = r.selected;
            if ui
                .button(format!("Go back to step {step} (t = {time:.4})"))
                .clicked()
            {
                let _ = state.go_back(k);
            }
        }
    }
    ui.horizontal(|ui| {
        if ui.button("Save state").clicked() {
            state.message = Some(match state.save_state() {
                Ok(p) => format!("saved {}", p.display()),
                Err(e) => e,
            });
        }
        if ui.button("Open state").clicked() {
            let path = std::path::PathBuf::from(&state.state_path);
            if let Err(e) = state.open(&path) {
                state.message = Some(e);
            }
        }
    });
    ui.text_edit_singleline(&mut state.state_path);
}

fn stats_section(ui: &mut Ui, state: &mut AppState) {
    let s = &state.solver;
    let info = s.info();
    egui::Grid::new("stats").num_columns(2).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.label(k);
            ui.label(v);
            ui.end_row();
        };
        row(
            "method",
            format!("{} ({}, {})", info.method, info.backend, info.precision),
        );
        row("grid", format!("{} x {}", info.grid.n[0], info.grid.n[1]));
        // A steady solver has no time (its steps are outer iterations).
        if state.case.spec.solver.method.is_some_and(Method::steady) {
            row("iteration", s.steps().to_string());
        } else {
            row("time", format!("{:.5}", s.time()));
            row("step", s.steps().to_string());
            row("dt", format!("{:.3e}", s.dt()));
        }
        row("steps/s", format!("{:.1}", state.perf.steps_per_second));
        row(
            "cell updates/s",
            format!("{:.3e}", state.perf.cell_updates_per_second),
        );
        for (k, v) in s.residuals() {
            row(k, format!("{v:.3e}"));
        }
        if let Some(p) = state.probe.or(state.hover) {
            row("probe", state.point_label(p));
            for (k, v) in state.probe_values(p) {
                row(k, format!("{v:.5}"));
            }
        }
    });
}

/// Horizontal colour bar of the shown field with its range.
pub fn color_bar(ui: &mut Ui, state: &AppState) {
    let v = &state.view;
    let [lo, hi] = state.shown_range;
    ui.horizontal(|ui| {
        let name = if state.solver.info().grid.dim == 1 {
            "rho (x-t)"
        } else {
            v.field.as_str()
        };
        ui.label(format!("{name}  {lo:.3e}"));
        let (rect, _) = ui.allocate_exact_size(egui::vec2(220.0, 14.0), egui::Sense::hover());
        let painter = ui.painter();
        let steps = 64;
        for k in 0..steps {
            let t0 = k as f32 / steps as f32;
            let x0 = rect.left() + t0 * rect.width();
            let x1 = rect.left() + (k + 1) as f32 / steps as f32 * rect.width();
            let c = v.colormap.color((k as f64 + 0.5) / steps as f64);
            painter.rect_filled(
                egui::Rect::from_x_y_ranges(x0..=x1 + 0.5, rect.y_range()),
                0.0,
                Color32::from_rgb(c[0], c[1], c[2]),
            );
        }
        ui.label(format!("{hi:.3e}{}", if v.log_scale { " (log)" } else { "" }));
    });
}

/// Plots: cavity centrelines against Ghia et al., the residual history, 1D profiles.
pub fn plots(ui: &mut Ui, state: &AppState) {
    let g = state.solver.info().grid;
    if g.dim == 1 {
        profiles_1d(ui, state);
    } else if state.is_cavity() {
        centrelines(ui, state);
    }
    residual_plot(ui, state);
}

fn centrelines(ui: &mut Ui, state: &AppState) {
    let s = &state.solver;
    let g = s.info().grid;
    let (x0, y0) = (g.origin[0], g.origin[1]);
    let (lx, ly) = (g.extent(0), g.extent(1));
    let n = 101;
    let re = state.case.spec.physics.re.unwrap_or(0.0);
    let u: Vec<[f64; 2]> = (0..n)
        .filter_map(|k| {
            let y = y0 + ly * k as f64 / (n - 1) as f64;
            s.sample("u", [x0 + 0.5 * lx, y, 0.0]).map(|u| [(y - y0) / ly, u])
        })
        .collect();
    let v: Vec<[f64; 2]> = (0..n)
        .filter_map(|k| {
            let x = x0 + lx * k as f64 / (n - 1) as f64;
            s.sample("v", [x, y0 + 0.5 * ly, 0.0]).map(|v| [(x - x0) / lx, v])
        })
        .collect();
    let ghia_u = reference::ghia_u().points(re);
    let ghia_v = reference::ghia_v().points(re);
    if ghia_u.is_none() {
        ui.label(format!(
            "Ghia et al. tabulate Re = 100, 400, 1000 only (this run: Re = {re})"
        ));
    }
    ui.columns(2, |cols| {
        Plot::new("u centreline")
            .height(180.0)
            .legend(Legend::default())
            .x_axis_label("u")
            .y_axis_label("y")
            .show(&mut cols[0], |p| {
                p.line(Line::new(
                    "u(y) at x = 0.5",
                    PlotPoints::new(u.iter().map(|q| [q[1], q[0]]).collect()),
                ));
                if let Some(pts) = &ghia_u {
                    p.points(
                        Points::new(
                            "Ghia 1982",
                            PlotPoints::new(pts.iter().map(|q| [q[1], q[0]]).collect()),
                        )
                        .radius(3.0),
                    );
                }
            });
        Plot::new("v centreline")
            .height(180.0)
            .legend(Legend::default())
            .x_axis_label("x")
            .y_axis_label("v")
            .show(&mut cols[1], |p| {
                p.line(Line::new("v(x) at y = 0.5", PlotPoints::new(v)));
                if let Some(pts) = ghia_v {
                    p.points(Points::new("Ghia 1982", PlotPoints::new(pts)).radius(3.0));
                }
            });
    });
}

fn profiles_1d(ui: &mut Ui, state: &AppState) {
    let s = &state.solver;
    let g = s.info().grid;
    let x: Vec<f64> = (0..g.n[0]).map(|i| g.centre(0, i)).collect();
    let names: Vec<&str> = ["rho", "u", "p", "e"]
        .into_iter()
        .filter(|n| s.field_names().contains(n))
        .collect();
    ui.columns(names.len().max(1), |cols| {
        for (col, name) in cols.iter_mut().zip(&names) {
            let mut vals = Vec::new();
            if s.field(name, &mut vals).is_none() {
                continue;
            }
            let pts: Vec<[f64; 2]> = x.iter().zip(&vals).map(|(a, b)| [*a, *b]).collect();
            let mut exact = Vec::new();
            let exact = s.exact_field(name, &mut exact).map(|()| {
                x.iter()
                    .zip(&exact)
                    .map(|(a, b)| [*a, *b])
                    .collect::<Vec<[f64; 2]>>()
            });
            Plot::new(format!("profile {name}"))
                .height(160.0)
                .legend(Legend::default())
                .x_axis_label("x")
                .y_axis_label(*name)
                .show(col, |p| {
                    p.line(Line::new(name.to_string(), PlotPoints::new(pts)));
                    if let Some(e) = exact {
                        p.line(Line::new("exact", PlotPoints::new(e)).color(Color32::from_gray(200)));
                    }
                });
        }
    });
}

fn residual_plot(ui: &mut Ui, state: &AppState) {
    let names: Vec<&'static str> = state
        .history
        .last()
        .map(|h| h.2.iter().map(|r| r.0).collect())
        .unwrap_or_default();
    Plot::new("residuals")
        .height(160.0)
        .legend(Legend::default())
        .x_axis_label("step")
        .y_axis_label("log10")
        .show(ui, |p| {
            for name in names {
                let pts: Vec<[f64; 2]> = state
                    .history
                    .iter()
                    .filter_map(|(step, _, r)| {
                        r.iter()
                            .find(|x| x.0 == name)
                            .filter(|x| x.1 > 0.0)
                            .map(|x| [*step as f64, x.1.log10()])
                    })
                    .collect();
                p.line(Line::new(name, PlotPoints::new(pts)));
            }
        });
}

/// The help window's content.
pub fn help(ui: &mut Ui) {
    egui::Grid::new("shortcuts")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            for (k, what) in SHORTCUTS {
                ui.label(RichText::new(*k).monospace());
                ui.label(*what);
                ui.end_row();
            }
        });
}
