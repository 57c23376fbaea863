//! The 3D view's orbit camera and what the pointer does to it (no GPU, so it is tested with
//! egui's input alone): a left drag turns the view, a right or middle drag pans, the wheel
//! zooms, a double click resets, and Shift with a left drag on a slice moves the slice along its
//! normal ([`crate::render::camera::OrbitCamera::drag_along`]).

use crate::render::camera::OrbitCamera;
use crate::render::view::ViewSettings;
use glam::{Vec2, Vec3};

/// The camera, the domain it frames and the slice being dragged.
#[derive(Clone, Debug)]
pub struct CameraControl {
    pub camera: OrbitCamera,
    /// The domain the camera frames (lowest and highest corner).
    domain: (Vec3, Vec3),
    /// The slice a Shift + drag moves ([`CameraControl::interact`]) and the point it was held
    /// at.
    dragging: Option<(usize, Vec3)>,
}

impl Default for CameraControl {
    fn default() -> Self {
        CameraControl {
            camera: OrbitCamera::framing(Vec3::ZERO, Vec3::ONE),
            domain: (Vec3::ZERO, Vec3::ONE),
            dragging: None,
        }
    }
}

impl CameraControl {
    /// Back to the view that frames the domain.
    pub fn reset(&mut self) {
        self.camera = OrbitCamera::framing(self.domain.0, self.domain.1);
    }

    /// The panel's camera request: the opening view (`None`) or looking along `axis`.
    pub fn request(&mut self, axis: Option<usize>) {
        match axis {
            None => self.reset(),
            Some(a) => self.camera.look_along(a, true),
        }
    }

    /// Frames `domain` when it is not the one framed (a new case or grid); keeps the camera
    /// otherwise (switching fields, moving the slice).
    pub fn follow(&mut self, domain: (Vec3, Vec3)) {
        if domain != self.domain {
            self.domain = domain;
            self.reset();
        }
    }

    /// Pointer handling over the canvas (`viewport` pixels): a left drag turns the view, a
    /// right or middle drag pans, the wheel zooms, a double click resets; Shift and a left drag
    /// on a slice of `view` moves it along its normal.
    pub fn interact(
        &mut self,
        ui: &egui::Ui,
        response: &egui::Response,
        viewport: Vec2,
        view: &mut ViewSettings,
    ) {
        let ppp = ui.ctx().pixels_per_point();
        let aspect = viewport.x / viewport.y.max(1.0);
        let rect = response.rect;
        let ndc = |p: egui::Pos2| {
            Vec2::new(
                2.0 * (p.x - rect.min.x) / rect.width().max(1.0) - 1.0,
                1.0 - 2.0 * (p.y - rect.min.y) / rect.height().max(1.0),
            )
        };
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                self.camera.zoom((-scroll * 0.003).exp());
            }
        }
        if response.double_clicked() {
            self.reset();
        }
        if response.drag_started_by(egui::PointerButton::Primary) && ui.input(|i| i.modifiers.shift) {
            self.dragging = response
                .interact_pointer_pos()
                .and_then(|p| self.pick_slice(view, ndc(p), aspect));
        }
        if !response.dragged() {
            self.dragging = None;
            return;
        }
        if let Some((k, anchor)) = self.dragging {
            let (min, max) = self.domain;
            let slice = if k == 0 {
                &mut view.slice
            } else {
                &mut view.view3d.more_slices[k - 1]
            };
            let a = slice.axis;
            let to = response
                .interact_pointer_pos()
                .and_then(|p| self.camera.drag_along(ndc(p), aspect, anchor, a));
            if let Some(c) = to {
                slice.position = f64::from(((c - min[a]) / (max[a] - min[a])).clamp(0.0, 1.0));
            }
            return;
        }
        let d = response.drag_delta() * ppp;
        if response.dragged_by(egui::PointerButton::Primary) {
            // Half a turn across the canvas's height.
            let k = std::f32::consts::PI / viewport.y.max(1.0);
            self.camera.orbit(-d.x * k, d.y * k);
        } else {
            let ndc = Vec2::new(2.0 * d.x / viewport.x.max(1.0), -2.0 * d.y / viewport.y.max(1.0));
            self.camera.pan(ndc, aspect);
        }
    }

    /// The nearest slice of `view` drawn under the point `ndc`: its index (0 the view's own,
    /// `k` further slice `k - 1`) and the point of it there.
    fn pick_slice(&self, view: &ViewSettings, ndc: Vec2, aspect: f32) -> Option<(usize, Vec3)> {
        if !view.view3d.slice {
            return None;
        }
        let (min, max) = self.domain;
        let slices = std::iter::once(&view.slice).chain(view.view3d.shown_more_slices());
        let eye = self.camera.eye();
        slices
            .enumerate()
            .filter_map(|(k, s)| {
                let a = s.axis;
                let c = s.coordinate(f64::from(min[a]), f64::from(max[a] - min[a])) as f32;
                let p = self.camera.pick_on_plane(ndc, aspect, a, c)?;
                let tolerance = 1e-4 * (max - min);
                let inside = (0..3)
                    .all(|b| b == a || (p[b] >= min[b] - tolerance[b] && p[b] <= max[b] + tolerance[b]));
                inside.then_some((k, p))
            })
            .min_by(|x, y| eye.distance(x.1).total_cmp(&eye.distance(y.1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui::{Event, Modifiers, PointerButton, Pos2, RawInput, Rect, Sense, vec2};

    const SIZE: egui::Vec2 = vec2(800.0, 600.0);

    /// One frame of `events` (with `modifiers` held) over a canvas that fills the screen.
    fn frame(
        ctx: &egui::Context,
        control: &mut CameraControl,
        view: &mut ViewSettings,
        modifiers: Modifiers,
        events: Vec<Event>,
    ) {
        let input = RawInput {
            screen_rect: Some(Rect::from_min_size(Pos2::ZERO, SIZE)),
            events: std::iter::once(Event::ModifiersChanged(modifiers))
                .chain(events)
                .collect(),
            ..Default::default()
        };
        let _ = ctx.run_ui(input, |ui| {
            let response = ui.allocate_rect(ui.max_rect(), Sense::click_and_drag());
            control.interact(ui, &response, Vec2::new(SIZE.x, SIZE.y), view);
        });
    }

    /// A left drag from the canvas's centre by `by` points, in ten moves, `modifiers` held.
    fn drag(control: &mut CameraControl, view: &mut ViewSettings, modifiers: Modifiers, by: egui::Vec2) {
        let ctx = egui::Context::default();
        let centre = Pos2::new(SIZE.x / 2.0, SIZE.y / 2.0);
        let button = |pos, pressed| Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers,
        };
        frame(&ctx, control, view, modifiers, vec![Event::PointerMoved(centre)]);
        frame(&ctx, control, view, modifiers, vec![button(centre, true)]);
        for k in 1..=10 {
            let at = centre + by * (k as f32 / 10.0);
            frame(&ctx, control, view, modifiers, vec![Event::PointerMoved(at)]);
        }
        frame(&ctx, control, view, modifiers, vec![button(centre + by, false)]);
    }

    /// The view a 3D case opens with (its slice drawn).
    fn opened() -> ViewSettings {
        let mut view = ViewSettings::for_field("speed");
        view.view3d = crate::render::view::View3d::opening(None);
        view
    }

    /// The slice of a fresh 3D view (normal to z, at the middle) under the canvas's centre,
    /// dragged with Shift up and to the right, and in a second view down and to the left: it
    /// moves one way and then the other along its normal, stays in the domain, and the camera
    /// does not turn.
    #[test]
    fn shift_and_a_drag_move_the_slice_along_its_normal() {
        let mut moved = Vec::new();
        for by in [vec2(60.0, -60.0), vec2(-60.0, 60.0)] {
            let mut control = CameraControl::default();
            let mut view = opened();
            let eye = control.camera.eye();
            drag(&mut control, &mut view, Modifiers::SHIFT, by);
            let p = view.slice.position;
            assert!(
                (p - 0.5).abs() > 0.01 && (0.0..=1.0).contains(&p),
                "slice at {p} after {by:?}"
            );
            assert_eq!(control.camera.eye(), eye, "the camera turned");
            moved.push(p - 0.5);
        }
        assert!(
            moved[0] * moved[1] < 0.0,
            "both drags moved the slice the same way: {moved:?}"
        );
    }

    /// Without Shift, or with Shift where no slice is drawn, a left drag turns the view and
    /// leaves the slice where it is.
    #[test]
    fn a_drag_without_shift_or_off_the_slices_turns_the_view() {
        for (modifiers, slice_drawn) in [(Modifiers::NONE, true), (Modifiers::SHIFT, false)] {
            let mut control = CameraControl::default();
            let mut view = opened();
            view.view3d.slice = slice_drawn;
            let eye = control.camera.eye();
            drag(&mut control, &mut view, modifiers, vec2(80.0, 0.0));
            assert!(
                control.camera.eye().distance(eye) > 1e-3,
                "{modifiers:?}: the view did not turn"
            );
            assert_eq!(view.slice.position, 0.5, "{modifiers:?}: the slice moved");
        }
    }
}
