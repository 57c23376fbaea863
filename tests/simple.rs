//! SIMPLE and SIMPLER: plane Poiseuille flow (Newtonian exactly, power law at second order),
//! case files, and the validation of their settings.

mod common;

use flowlab::case::Case;
use flowlab::solver::{Solver, StopReason, StopRule, build, run_until};

/// Runs a case to its stop rule; returns the solver and the outcome's reason.
fn run(case: &Case) -> (Box<dyn Solver>, StopReason) {
    let mut s = build(&case.spec).unwrap_or_else(|e| panic!("{e:?}"));
    let st = &case.spec.stop;
    let rule = StopRule {
        steps: st.steps,
        t_end: None,
        steady_tol: st.steady_tol,
    };
    let out = run_until(s.as_mut(), &rule, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    (s, out.reason)
}

fn residual(s: &dyn Solver, name: &str) -> f64 {
    s.residuals().iter().find(|(n, _)| *n == name).unwrap().1
}

#[test]
fn newtonian_poiseuille_equals_the_parabola() {
    for method in ["simple", "simpler"] {
        let case = common::case(
            "poiseuille_newtonian_periodic",
            &[&format!("solver.method={method}")],
        );
        let (s, reason) = run(&case);
        let it = s.steps();
        assert_eq!(
            reason,
            StopReason::Steady,
            "{method}: {it} iterations, {:?}",
            s.residuals()
        );
        let u = common::field(s.as_ref(), "u");
        let (nx, ny) = (8, 32);
        let mut err: f64 = 0.0;
        for j in 0..ny {
            let y = (j as f64 + 0.5) / ny as f64;
            let exact = 4.0 * y * (1.0 - y); // G / (2 mu) y (H - y), G = 8, mu = 1
            for i in 0..nx {
                err = err.max((u[j * nx + i] - exact).abs());
            }
        }
        eprintln!("{method}: Newtonian Poiseuille, {it} outer iterations, max |u - parabola| = {err:.3e}");
        assert!(err < 1e-8, "{method}: {err:e}");
        assert!(residual(s.as_ref(), "steady_change") < 1e-12);
    }
}
