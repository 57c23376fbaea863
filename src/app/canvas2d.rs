//! Pointer handling over the 2D field view.

use super::WindowState;
use crate::render::view::Seeding;
use crate::ui::state::AppState;
use glam::Vec2;

/// Pointer handling over the field view: pan, zoom, probe, rake drawing, click seeds.
pub(super) fn interact(ui: &egui::Ui, response: &egui::Response, state: &mut AppState, w: &mut WindowState) {
    let ppp = ui.ctx().pixels_per_point();
    let viewport = w.viewport();
    let extent = w.frame.extent;
    let to_world = |w: &WindowState, pos: egui::Pos2| {
        let p = w
            .camera
            .screen_to_world(w.canvas_pixel(pos, ppp), viewport, extent);
        [p.x as f64, p.y as f64]
    };
    state.hover = response
        .hover_pos()
        .map(|p| to_world(w, p))
        .filter(|p| state.in_domain(*p));
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            if let Some(p) = response.hover_pos() {
                let px = w.canvas_pixel(p, ppp);
                w.camera.zoom_at(px, (scroll * 0.005).exp(), viewport, extent);
            }
        }
    }
    let rake_mode = matches!(state.view.streamlines.seeding, Seeding::Rake { .. });
    if response.drag_started() {
        w.drag_start = response.interact_pointer_pos().map(|p| w.canvas_pixel(p, ppp));
    }
    if response.dragged() {
        if rake_mode && response.dragged_by(egui::PointerButton::Primary) {
            if let (Some(start), Some(now)) = (w.drag_start, response.interact_pointer_pos()) {
                let a = w.camera.screen_to_world(start, viewport, extent);
                let b = w
                    .camera
                    .screen_to_world(w.canvas_pixel(now, ppp), viewport, extent);
                if let Seeding::Rake { a: ra, b: rb, count } = &mut state.view.streamlines.seeding {
                    *ra = [a.x as f64, a.y as f64];
                    *rb = [b.x as f64, b.y as f64];
                    if *count == 0 {
                        *count = 16;
                    }
                }
            }
        } else {
            let d = response.drag_delta() * ppp;
            w.camera.pan(Vec2::new(d.x, d.y), viewport, extent);
        }
    }
    if response.clicked() {
        if let Some(p) = response.interact_pointer_pos().map(|p| to_world(w, p)) {
            if let Seeding::Points(points) = &mut state.view.streamlines.seeding {
                points.push(p);
            } else {
                state.probe = state.in_domain(p).then_some(p);
            }
        }
    }
    if let Some(p) = state.hover {
        let values = state.probe_values(p);
        let text = values
            .iter()
            .map(|(k, v)| format!("{k} = {v:.4}"))
            .collect::<Vec<_>>()
            .join("\n");
        let at = state.point_label(p);
        response.clone().on_hover_text_at_pointer(format!("{at}\n{text}"));
    }
}
