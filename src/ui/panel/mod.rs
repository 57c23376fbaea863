//! The egui side panel (case, run control, live settings, a rotor's settings and loads, view,
//! export, saved states, statistics), the plots (cavity centrelines with Ghia's data, residual history, 1D profiles)
//! and the help window; `settings`, `files` and `plots` hold the larger sections.

mod files;
mod plots;
mod rotor;
mod settings;
mod view3d;

pub use plots::{color_bar, plots};

use super::reference;
use super::state::{AppState, Request, StepsPerFrame};
use crate::case::{Kind, Method, RiemannSolver};
use crate::render::colormap::Colormap;
use crate::render::streamlines::{Integrator, even, spatial};
use crate::render::view::{self, Range, Seeding};
use crate::solver::incompressible::SimpleConfig;
use crate::solver::incompressible::simple::Algorithm;
use crate::solver::limiter::Limiter;
use egui::{Color32, DragValue, RichText, Ui};
use egui_plot::{Legend, Line, Plot, PlotPoints, Points};
use files::{export_section, saved_states_section};
use settings::settings_section;
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
    ("3D: drag (left)", "turn the view about the domain"),
    ("3D: drag (right or middle)", "pan"),
    (
        "3D: Shift + drag (left) on a slice",
        "move the slice along its normal",
    ),
    ("3D: wheel", "zoom"),
    ("3D: Home / double-click", "reset the view"),
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

/// Draws the slabs of a decomposed run (the overlapping Schwarz slabs of a SIMPLE run, or the
/// parts of a grid cut over several GPUs) over the field view
/// (`to_screen`: world point to screen point). In 2D the slabs run along y across the view: the
/// overlap bands shaded, the slab boundaries as lines. In 3D they run along z: across a slice
/// normal to x or y (whose vertical axis is z) likewise; on a slice normal to z the view names
/// the slabs and overlaps that plane lies in.
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
    let slice = state.view.slice;
    // The view's horizontal axis.
    let h = if g.dim == 3 { slice.plane_axes()[0] } else { 0 };
    let (x0, x1) = (g.origin[h], g.origin[h] + g.extent(h));
    let colour = Color32::from_rgb(255, 120, 0);
    if g.dim == 3 && slice.axis == 2 {
        let z = slice.coordinate(g.origin[2], g.extent(2));
        let text = slabs_at_plane(&strips, &state.subdomain_kind(), z);
        let top_left = to_screen([x0, g.origin[1] + g.extent(1)]) + egui::vec2(4.0, 4.0);
        // On a dark backing: the label lies over the field's colours.
        let galley = painter.layout_no_wrap(text, egui::FontId::proportional(12.0), colour);
        let backing = egui::Rect::from_min_size(top_left, galley.size()).expand(3.0);
        painter.rect_filled(backing, 3.0, Color32::from_black_alpha(170));
        painter.galley(top_left, galley, colour);
        return;
    }
    let band = Color32::from_rgba_unmultiplied(255, 150, 0, 70);
    let line = egui::Stroke::new(1.5, colour);
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
            format!("slab {s}"),
            egui::FontId::proportional(12.0),
            colour,
        );
    }
}

/// Which slabs along z (`strips` of [`AppState::subdomain_strips`], `kind` naming them) the plane `z` lies
/// in: its own slab and the extended slabs (overlaps) that reach it.
fn slabs_at_plane(strips: &[[f64; 4]], kind: &str, z: f64) -> String {
    let own = strips.iter().position(|s| z >= s[0] && z <= s[1]).unwrap_or(0);
    let reach: Vec<String> = (0..strips.len())
        .filter(|&i| i != own && z >= strips[i][2] && z <= strips[i][3])
        .map(|i| i.to_string())
        .collect();
    let s = &strips[own];
    let overlap = if reach.is_empty() {
        String::new()
    } else {
        format!(", in the overlap of slab {}", reach.join(", "))
    };
    format!(
        "{} {kind} along z; the plane z = {z:.3} lies in slab {own} (z {:.3} to {:.3}){overlap}",
        strips.len(),
        s[0],
        s[1]
    )
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
        if let Some(r) = state.solver.rotor() {
            egui::CollapsingHeader::new("Rotor")
                .default_open(true)
                .show(ui, |ui| rotor::rotor_section(ui, state, r));
        }
        egui::CollapsingHeader::new("View")
            .default_open(true)
            .show(ui, |ui| view_section(ui, state));
        if state.solver.info().grid.dim == 3 {
            egui::CollapsingHeader::new("3D view")
                .default_open(true)
                .show(ui, |ui| view3d::view3d_section(ui, state));
        }
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
    let Some(choice) = state.grid_choice.clone().filter(|c| c.grid == running) else {
        return;
    };
    ui.label(RichText::new(choice.describe()).weak());
    if choice.coarsened() {
        let grid = crate::ui::speed::cells(choice.case_grid);
        if ui.button(format!("Reset with the case grid ({grid})")).clicked() {
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
        let in_space = v.view3d.enabled;
        if in_space && s.seeding != Seeding::Off {
            ui.label(if matches!(s.seeding, Seeding::Even { .. }) {
                "evenly spaced lines stay in the slice"
            } else {
                "seeds on the slice, lines through the 3D flow (draw a rake or click seeds in the flat view)"
            });
        }
        match &mut s.seeding {
            Seeding::Grid { n } => {
                let most = if in_space { spatial::MAX_GRID_SEEDS_3D } else { 40 };
                ui.horizontal(|ui| named(ui, "seeds per side", DragValue::new(n).range(1..=most)));
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
        let cells: Vec<String> = info.grid.n[..info.grid.dim.max(2)]
            .iter()
            .map(|n| n.to_string())
            .collect();
        row("grid", cells.join(" x "));
        // A grid cut over several GPUs: each part's own layers and device.
        let parts = s.subdomains();
        if !parts.is_empty() {
            let axis = ["x", "y", "z"][parts[0].axis];
            let each: Vec<String> = parts
                .iter()
                .map(|p| {
                    let on = p.device.map_or("CPU".into(), |d| format!("GPU {d}"));
                    format!("{axis} {}..{} on {on}", p.layers.start, p.layers.end)
                })
                .collect();
            row("parts", each.join("\n"));
        }
        // A steady solver has no time (its steps are outer iterations).
        if state.case.spec.solver.method.is_some_and(Method::steady) {
            row("iteration", s.steps().to_string());
        } else {
            row("time", format!("{:.5}", s.time()));
            row("step", s.steps().to_string());
            row("dt", format!("{:.3e}", s.dt()));
        }
        row("steps/s", format!("{:.1}", state.perf.steps_per_second));
        if let Some(through) = &state.fields_through {
            row("fields drawn from", through.clone());
        }
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

#[cfg(test)]
mod tests {
    /// Four slabs of the unit length with overlaps of 0.05 either side of each cut: the mid-plane
    /// z = 0.5 sits on the cut between slabs 1 and 2, owned by slab 1 and reached by slab 2.
    #[test]
    fn mid_plane_names_its_slab_and_the_overlap_reaching_it() {
        let strips: Vec<[f64; 4]> = (0..4)
            .map(|i| {
                let (a, b) = (0.25 * i as f64, 0.25 * (i + 1) as f64);
                [a, b, (a - 0.05).max(0.0), (b + 0.05).min(1.0)]
            })
            .collect();
        let text = super::slabs_at_plane(&strips, "Schwarz slabs", 0.5);
        assert_eq!(
            text,
            "4 Schwarz slabs along z; the plane z = 0.500 lies in slab 1 (z 0.250 to 0.500), in the overlap of slab 2"
        );
        assert!(!super::slabs_at_plane(&strips, "Schwarz slabs", 0.375).contains("overlap"));
    }
}
