//! The rotor's sources on the CUDA backend (`kernels/rotor_source.cu`: the loads, the spread
//! accelerations and the totals made on the device) against the CPU's (`RotorSource::update`),
//! both stepping the projection method from the same tables: the blade-element rotor of
//! `cases/rotor_hover.toml` and the uniform disk of `cases/rotor_hover_disk.toml`, with the
//! multigrid and the transform (fft, graph-replayed) pressure solves, in f64 and f32, and the
//! collective changed while running (the device keeps its tables and takes the new loading);
//! and SIMPLER's (`cases/rotor_climb_simpler.toml`, the sources each outer iteration) after 40
//! outer iterations.
//! Bounds: relative L2 of u, v, w, p and the relative difference of the thrust, power and
//! inflow at most 1e-10 in f64 (the same operations without fused multiply-adds; atan2, sin and
//! cos are the device's, within an ulp or two, and the spreading's rows and the totals are
//! summed in trees instead of in order: round-off), 1e-4 in f32.
//! Skipped (with the reason printed) where no CUDA device, driver or NVRTC is usable.

mod common;

use common::{gpu, rel_l2};
use flowlab::solver::Solver;

const FIELDS: [&str; 4] = ["u", "v", "w", "p"];
const LOADS: [&str; 3] = ["rotor_thrust", "rotor_power", "inflow_at_disk"];

fn compare(cpu: &dyn Solver, cuda: &dyn Solver, what: &str, bound: f64) {
    for f in FIELDS {
        let d = rel_l2(&common::field(cuda, f), &common::field(cpu, f));
        eprintln!("{what} {f}: rel L2 {d:.3e}");
        assert!(d <= bound, "{what} {f}: rel L2 {d:.3e} > {bound:e}");
    }
    for r in LOADS {
        let (a, b) = (common::residual(cuda, r), common::residual(cpu, r));
        let d = (a - b).abs() / b.abs().max(1e-300);
        eprintln!("{what} {r}: cuda {a:.12e} cpu {b:.12e} rel {d:.3e}");
        assert!(d <= bound, "{what} {r}: {a} against {b}, rel {d:.3e} > {bound:e}");
    }
    let (s_cuda, s_cpu) = (cuda.summary(), cpu.summary());
    let thrust =
        |s: &serde_json::Map<String, serde_json::Value>| s["rotor"]["thrust"].as_f64().expect("thrust");
    let d = (thrust(&s_cuda) / thrust(&s_cpu) - 1.0).abs();
    assert!(
        d <= bound,
        "{what}: summary thrust {} against {}",
        thrust(&s_cuda),
        thrust(&s_cpu)
    );
}

/// 80 steps from rest of each case, solver and precision on both backends.
#[test]
fn rotor_sources_on_cuda_match_the_cpu() {
    if !gpu() {
        return;
    }
    for name in ["rotor_hover", "rotor_hover_disk"] {
        for solver in ["multigrid", "fft"] {
            // f32's tolerance is the lowest single precision reaches.
            for (precision, bound, tolerance) in [("f64", 1e-10, "1e-10"), ("f32", 1e-4, "1e-5")] {
                let mut case = common::case(
                    name,
                    &[
                        "grid.nx=32",
                        "grid.ny=48",
                        "grid.nz=32",
                        &format!("solver.pressure_solver=\"{solver}\""),
                        &format!("solver.tolerance={tolerance}"),
                        &format!("solver.precision=\"{precision}\""),
                        "solver.max_iterations=200",
                    ],
                );
                let (mut cpu, mut cuda) = common::both_backends(&mut case);
                cpu.advance(80).expect("cpu steps");
                cuda.advance(80).expect("cuda steps");
                compare(
                    cpu.as_ref(),
                    cuda.as_ref(),
                    &format!("{name} {solver} {precision}"),
                    bound,
                );
                assert!(common::residual(cuda.as_ref(), "rotor_thrust") > 0.0);
            }
        }
    }
}

/// The collective raised from 8 to 10 degrees after 40 steps on both backends: the device takes
/// the new loading with its tables kept, and the two stay together for 40 more steps; the
/// thrust rises.
#[test]
fn a_live_collective_change_on_cuda_matches_the_cpu() {
    if !gpu() {
        return;
    }
    let mut case = common::case(
        "rotor_hover",
        &[
            "grid.nx=32",
            "grid.ny=48",
            "grid.nz=32",
            "solver.tolerance=1e-10",
            "solver.max_iterations=200",
        ],
    );
    let (mut cpu, mut cuda) = common::both_backends(&mut case);
    cpu.advance(40).expect("cpu steps");
    cuda.advance(40).expect("cuda steps");
    let before = common::residual(cuda.as_ref(), "rotor_thrust");
    case.set_assignment("rotor.collective=10.0").expect("collective");
    case.set_assignment("solver.backend=\"cpu\"").expect("backend");
    cpu.update(&case.spec).expect("cpu update");
    case.set_assignment("solver.backend=\"cuda\"").expect("backend");
    cuda.update(&case.spec).expect("cuda update");
    cpu.advance(40).expect("cpu steps");
    cuda.advance(40).expect("cuda steps");
    compare(cpu.as_ref(), cuda.as_ref(), "collective 8 -> 10", 1e-10);
    let after = common::residual(cuda.as_ref(), "rotor_thrust");
    assert!(after > 1.1 * before, "thrust {before} -> {after}");
}

/// SIMPLER with the rotor's sources (`CudaSimple`, f64): 40 outer iterations on both backends.
#[test]
fn simpler_rotor_sources_on_cuda_match_the_cpu() {
    if !gpu() {
        return;
    }
    let mut case = common::case("rotor_climb_simpler", &[]);
    let (mut cpu, mut cuda) = common::both_backends(&mut case);
    for _ in 0..40 {
        cpu.step().expect("cpu iteration");
        cuda.step().expect("cuda iteration");
    }
    compare(cpu.as_ref(), cuda.as_ref(), "SIMPLER climb", 1e-10);
}
