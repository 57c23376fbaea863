//! The side panel's file sections: screenshots, video and data export, the case file, and
//! saved states (the rewind ring and whole-state files).

use super::*;

pub(super) fn export_section(ui: &mut Ui, state: &mut AppState) {
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
pub(super) fn saved_states_section(ui: &mut Ui, state: &mut AppState) {
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
