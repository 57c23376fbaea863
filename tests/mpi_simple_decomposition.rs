//! SIMPLE, SIMPLEC and SIMPLER over several processes (`mpirun -n N flowlab run`, each process
//! one strip of the overlapping Schwarz decomposition of every linear solve,
//! `flowlab::solver::incompressible::simple`'s `part` module) give the single-process run with
//! `solver.linear_solver.subdomains = N` bit for bit: the fields (`fields.vti`), the final
//! residuals and the summary's results, in 2D and 3D, with TVD and power-law convection,
//! Newtonian and Carreau fluids, walls, periodic sides across the cut, and inflow with outflow.
//! Settings the parts cannot run are refused by key.
//!
//! Needs the `mpi` feature and an MPI launcher (`.ci/run` installs OpenMPI); in CI a missing
//! launcher fails the test.
#![cfg(feature = "mpi")]

mod common;

use common::decomposition::*;

/// `sets` with the subdomains of a run over `n` processes.
fn with_strips(sets: &[&str], n: usize) -> Vec<String> {
    let mut v: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    v.push(format!("solver.linear_solver.subdomains={n}"));
    v
}

/// [`same_as_one_process`] over each of `parts` processes against one process with as many
/// subdomains.
fn same_as_strips(name: &str, case: &str, sets: &[&str], steps: u64, parts: &[usize]) {
    for &n in parts {
        let sets = with_strips(sets, n);
        let sets: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
        same_as_one_process(&format!("{name}-{n}"), case, &sets, steps, &[n]);
    }
}

#[test]
fn cavity_2d_simple_over_two_and_three_processes() {
    same_as_strips(
        "simple-2d",
        "lid_driven_cavity_re100_simple",
        &["grid.nx=20", "grid.ny=24"],
        12,
        &[2, 3],
    );
}

#[test]
fn cavity_2d_simplec_and_simpler_with_other_limiters() {
    for (method, limiter) in [("simplec", "van_leer"), ("simpler", "minmod")] {
        let sets = [
            "grid.nx=16".to_string(),
            "grid.ny=22".into(),
            format!("solver.method={method}"),
            format!("solver.limiter={limiter}"),
        ];
        let sets: Vec<&str> = sets.iter().map(|s| s.as_str()).collect();
        same_as_strips(method, "lid_driven_cavity_re100_simple", &sets, 10, &[2, 3]);
    }
}

#[test]
fn square_duct_power_law_pressure_gradient_periodic_x() {
    same_as_strips("duct", "square_duct", &["grid.ny=8", "grid.nz=12"], 8, &[2]);
}

#[test]
fn cavity_3d_simplec_and_simpler_tvd() {
    same_as_strips(
        "simplec-3d",
        "cavity_3d_re100_simple",
        &["grid.nx=8", "grid.ny=8", "grid.nz=14"],
        6,
        &[2],
    );
    same_as_strips(
        "simpler-3d",
        "cavity_3d_re100_simple",
        &["grid.nx=6", "grid.ny=8", "grid.nz=18", "solver.method=simpler"],
        5,
        &[3],
    );
}

#[test]
fn settings_the_parts_cannot_run_are_refused_by_key() {
    let case = common::root().join("cases/lid_driven_cavity_re100_simple.toml");
    for (sets, key) in [
        (
            &["grid.ny=24", "solver.linear_solver.subdomains=3"][..],
            "solver.linear_solver.subdomains",
        ),
        (
            &[
                "boundary.bottom={ type = \"periodic\" }",
                "boundary.top={ type = \"periodic\" }",
            ][..],
            "boundary.bottom",
        ),
        (&["solver.backend=cuda"][..], "solver.backend"),
    ] {
        if refused_over_two(&case, sets, key, "processes").is_none() {
            return;
        }
    }
    let rotor = common::root().join("cases/rotor_climb_simpler.toml");
    if refused_over_two(&rotor, &[], "rotor", "processes").is_none() {
        return;
    }
    // 15 rows over 3 with overlap 3: the middle process owns 5 cell layers, fewer than the
    // overlap + 2 = 5 its neighbours store beyond theirs and its first face layer.
    let dir = out_dir("refused-overlap");
    let sets = ["grid.ny=15", "solver.linear_solver.overlap=3"];
    let o = flowlab_on(3, &run_args(&case, &sets, 1, &dir)).expect("a launcher");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("solver.linear_solver.overlap"),
        "{err}"
    );
}

#[test]
fn carreau_channel_with_inflow_and_outflow() {
    // SIMPLER, the mass-flow correction's sums over the outflow side and the viscosity's
    // exchange.
    same_as_strips(
        "carreau",
        "poiseuille_carreau_n05",
        &["grid.nx=20", "grid.ny=18"],
        10,
        &[2, 3],
    );
}

#[test]
fn square_duct_carreau_3d() {
    same_as_strips(
        "duct-carreau",
        "square_duct_carreau",
        &["grid.ny=8", "grid.nz=12"],
        6,
        &[2],
    );
}

#[test]
fn checkpoints_move_between_one_process_and_two() {
    // Written over two processes, continued on one; and written on one, continued over two.
    let case = common::root().join("cases/lid_driven_cavity_re100_simple.toml");
    let sets = ["grid.nx=16", "grid.ny=20", "solver.linear_solver.subdomains=2"];
    checkpoints_move("simple-ckpt", &case, &sets, 12, &[(2, 1), (1, 2)]);
}

/// Left at its default of 1, `subdomains` over N processes is N strips all the same: the fields
/// and residuals of one process with `subdomains = N`.
#[test]
fn default_subdomains_over_processes_are_one_strip_each() {
    let case = common::root().join("cases/lid_driven_cavity_re100_simple.toml");
    let sets = ["grid.nx=16", "grid.ny=24"];
    let one = out_dir("default-strips-1");
    let strips: Vec<&str> = sets
        .iter()
        .copied()
        .chain(["solver.linear_solver.subdomains=3"])
        .collect();
    check(
        &flowlab_on(1, &run_args(&case, &strips, 8, &one)).expect("one process"),
        "the one-process run",
    );
    let three = out_dir("default-strips-3");
    let Some(o) = flowlab_on(3, &run_args(&case, &sets, 8, &three)) else {
        return;
    };
    check(&o, "the run over 3 processes");
    let fields = |d: &std::path::Path| std::fs::read(d.join("fields.vti")).expect("fields.vti");
    assert!(fields(&one) == fields(&three), "fields.vti differs");
    assert_eq!(
        summary(&one)["final_residuals"],
        summary(&three)["final_residuals"]
    );
    let _ = std::fs::remove_dir_all(&one);
    let _ = std::fs::remove_dir_all(&three);
}
