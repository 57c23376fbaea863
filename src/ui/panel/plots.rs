//! The colour bar and the plots: cavity centrelines against Ghia et al., 1D profiles with the
//! exact solution, the residual history.

use super::*;

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
