//! The panel's controls of a 3D state's view: the 3D view or the slice alone, the slices' axes
//! and positions (up to three in the 3D view), the isosurfaces' field and levels (and saving them), the volume rendering's
//! field and opacity curve, and the camera's standard views.

use crate::export::mesh::save_surfaces;
use crate::render::surface::MAX_LEVELS;
use crate::render::view::{MAX_SLICES, Slice, View3d, VolumeSettings};
use crate::ui::state::{AppState, Request};
use egui::{DragValue, Ui};

/// The "3D view" section (3D states only).
pub fn view3d_section(ui: &mut Ui, state: &mut AppState) {
    let names = state.solver.field_names();
    let v = &mut state.view;
    ui.horizontal(|ui| {
        ui.selectable_value(&mut v.view3d.enabled, true, "3D view");
        ui.selectable_value(&mut v.view3d.enabled, false, "slice alone");
    });
    slice_controls(ui, "slice", &mut v.slice);
    if v.view3d.enabled {
        ui.checkbox(&mut v.view3d.slice, "show the slice in the 3D view");
        if v.view3d.slice {
            more_slices(ui, &mut v.view3d, &v.slice);
        }
        iso_controls(ui, &mut v.view3d, names);
        volume_controls(ui, &mut v.view3d, names);
        surfaces_export(ui, state);
        ui.horizontal(|ui| {
            ui.label("camera");
            if ui.button("reset").clicked() {
                state.requests.push(Request::View3d(None));
            }
            for (axis, name) in ["+x", "+y", "+z"].into_iter().enumerate() {
                if ui
                    .button(name)
                    .on_hover_text(format!("look along -{}", &name[1..]))
                    .clicked()
                {
                    state.requests.push(Request::View3d(Some(axis)));
                }
            }
        });
    }
}

/// A slice's axis and position, labelled `name`.
fn slice_controls(ui: &mut Ui, name: &str, slice: &mut Slice) {
    ui.horizontal(|ui| {
        ui.label(format!("{name} normal to"));
        for (axis, label) in ["x", "y", "z"].into_iter().enumerate() {
            ui.selectable_value(&mut slice.axis, axis, label);
        }
    });
    ui.add(egui::Slider::new(&mut slice.position, 0.0..=1.0).text(format!("{name} position")));
}

/// The 3D view's further slices (up to [`MAX_SLICES`] in all, with the view's own `first`):
/// each one's axis and position, removing one, adding one.
fn more_slices(ui: &mut Ui, v: &mut View3d, first: &Slice) {
    let mut remove = None;
    for (k, slice) in v.more_slices.iter_mut().enumerate() {
        let name = format!("slice {}", k + 2);
        slice_controls(ui, &name, slice);
        if ui.small_button(format!("remove {name}")).clicked() {
            remove = Some(k);
        }
    }
    if let Some(k) = remove {
        v.more_slices.remove(k);
    }
    let room = 1 + v.more_slices.len() < MAX_SLICES;
    if ui
        .add_enabled(room, egui::Button::new("add a slice"))
        .on_hover_text(format!(
            "up to {MAX_SLICES}, each coloured, contoured and with arrows as the first; Shift + drag moves a slice"
        ))
        .clicked()
    {
        v.add_slice(first);
    }
}

/// "Save the surfaces": the shown isosurfaces as binary PLY meshes in the export folder.
fn surfaces_export(ui: &mut Ui, state: &mut AppState) {
    let v = &state.view.view3d;
    let Some(field) = v.iso_field.as_deref().filter(|_| !v.iso_levels.is_empty()) else {
        return;
    };
    if !ui
        .button("save the surfaces (.ply)")
        .on_hover_text("each level as a binary PLY mesh in the export folder (ParaView, Blender, MeshLab)")
        .clicked()
    {
        return;
    }
    let stem = format!("{}_step{:08}", state.case.spec.case.name, state.solver.steps());
    let saved = save_surfaces(
        state.solver.as_ref(),
        field,
        &v.iso_levels,
        &state.export_dir,
        &stem,
    );
    state.message = Some(match saved {
        Ok(files) => format!(
            "saved {}",
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(e) => e,
    });
}

/// The volume rendering's field (or none) and its opacity curve.
fn volume_controls(ui: &mut Ui, v: &mut View3d, names: &[&str]) {
    let shown = v.volume.as_ref().map_or("none", |s| s.field.as_str()).to_string();
    egui::ComboBox::from_label("volume rendering of")
        .selected_text(shown)
        .show_ui(ui, |ui| {
            if ui.selectable_label(v.volume.is_none(), "none").clicked() {
                v.volume = None;
            }
            for n in names {
                let current = v.volume.as_ref().is_some_and(|s| s.field == *n);
                if ui.selectable_label(current, *n).clicked() && !current {
                    v.volume = Some(VolumeSettings::of(n));
                }
            }
        });
    let Some(volume) = &mut v.volume else {
        return;
    };
    ui.label("opacity a cell's length, along the colour scale");
    for (k, at) in ["low", "1/3", "2/3", "high"].into_iter().enumerate() {
        ui.add(
            egui::Slider::new(&mut volume.opacity[k], 0.0..=1.0)
                .logarithmic(true)
                .smallest_positive(1e-3)
                .text(format!("opacity {at}")),
        );
    }
}

/// The isosurfaces' field (or none), levels, colouring and opacity.
fn iso_controls(ui: &mut Ui, v: &mut View3d, names: &[&str]) {
    let shown = v.iso_field.clone().unwrap_or_else(|| "none".into());
    egui::ComboBox::from_label("isosurfaces of")
        .selected_text(shown)
        .show_ui(ui, |ui| {
            if ui.selectable_label(v.iso_field.is_none(), "none").clicked() {
                v.iso_field = None;
            }
            for n in names {
                if ui
                    .selectable_label(v.iso_field.as_deref() == Some(*n), *n)
                    .clicked()
                    && v.iso_field.as_deref() != Some(*n)
                {
                    v.iso_field = Some(n.to_string());
                    // Chosen from the new field's values when next drawn.
                    v.iso_levels.clear();
                }
            }
        });
    if v.iso_field.is_none() {
        return;
    }
    let mut remove = None;
    for (k, level) in v.iso_levels.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            let speed = (level.abs() * 0.01).max(1e-6);
            ui.add(
                DragValue::new(level)
                    .speed(speed)
                    .prefix(format!("level {}: ", k + 1)),
            );
            if ui.small_button("x").on_hover_text("remove this level").clicked() {
                remove = Some(k);
            }
        });
    }
    if let Some(k) = remove {
        v.iso_levels.remove(k);
    }
    let colour = v.iso_colour.clone().unwrap_or_else(|| "level colours".into());
    egui::ComboBox::from_label("surfaces coloured by")
        .selected_text(colour)
        .show_ui(ui, |ui| {
            if ui
                .selectable_label(v.iso_colour.is_none(), "level colours")
                .clicked()
            {
                v.iso_colour = None;
            }
            for n in names {
                if ui
                    .selectable_label(v.iso_colour.as_deref() == Some(*n), *n)
                    .clicked()
                {
                    v.iso_colour = Some(n.to_string());
                }
            }
        });
    ui.horizontal(|ui| {
        let mut transparent = v.iso_opacity.is_some();
        if ui.checkbox(&mut transparent, "transparent").changed() {
            v.iso_opacity = transparent.then_some(0.5);
        }
        if let Some(opacity) = &mut v.iso_opacity {
            ui.add(egui::Slider::new(opacity, 0.05..=1.0).text("surface opacity"));
        }
    });
    ui.horizontal(|ui| {
        let room = v.iso_levels.len() < MAX_LEVELS;
        if ui
            .add_enabled(room, egui::Button::new("add a level"))
            .on_hover_text("half the last level, or one chosen from the field")
            .clicked()
        {
            match v.iso_levels.last() {
                Some(&l) => v.iso_levels.push(0.5 * l),
                None => v.iso_levels.clear(),
            }
        }
        if ui
            .button("choose from the field")
            .on_hover_text("one level at the field's 95th percentile")
            .clicked()
        {
            v.iso_levels.clear();
        }
    });
}
