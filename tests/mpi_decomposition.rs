//! Runs over several processes (`mpirun -n N flowlab run`, the grid cut into slabs along its
//! last axis, `flowlab::parallel`) give the single-process results bit for bit: the fields
//! (`fields.vti`), the final residuals and the summary's results, for 2D and 3D, f32 and f64,
//! every convection scheme's reach (TVD and QUICK read two faces across a cut), Jacobi, SOR,
//! PCG and multigrid pressure solves (coarse levels cut into slabs, then gathered), singular
//! (closed) and non-singular (outflow) pressure problems, exact (analytic) sides on a shifted
//! slab, and a checkpoint written over several processes and continued on one. Settings that do
//! not run over several processes are refused by key. The same on GPUs:
//! `tests/gpu_decomposition.rs`.
//!
//! Needs the `mpi` feature and an MPI launcher (`.ci/run` installs OpenMPI); in CI a missing
//! launcher fails the test.
#![cfg(feature = "mpi")]

mod common;

use common::decomposition::*;

#[test]
fn cavity_3d_pcg_and_tvd_over_two_and_three_processes() {
    same_as_one_process(
        "cavity3d",
        "cavity_3d_re100",
        &[
            "grid.nx=16",
            "grid.ny=12",
            "grid.nz=20",
            "solver.pressure_solver=pcg",
            "solver.convection=tvd",
            "solver.time_integrator=ab2",
        ],
        15,
        &[2, 3],
    );
}

#[test]
fn cavity_2d_f32_sor_quick_and_jacobi() {
    let base = [
        "grid.nx=24",
        "grid.ny=26",
        "solver.tolerance=1e-4",
        "solver.precision=f32",
    ];
    let sor: Vec<&str> = base
        .iter()
        .copied()
        .chain(["solver.pressure_solver=sor", "solver.convection=quick"])
        .collect();
    same_as_one_process("cavity2d-sor", "lid_driven_cavity_re100", &sor, 30, &[3]);
    let jacobi: Vec<&str> = base
        .iter()
        .copied()
        .chain(["solver.pressure_solver=jacobi", "solver.convection=upwind"])
        .collect();
    same_as_one_process("cavity2d-jacobi", "lid_driven_cavity_re100", &jacobi, 20, &[2]);
}

#[test]
fn multigrid_with_cut_and_gathered_levels() {
    // 64^2 over 4: levels 1 and 2 are cut into slabs too, level 3 (8^2) is gathered.
    same_as_one_process(
        "mg-64",
        "lid_driven_cavity_re100",
        &["grid.nx=64", "grid.ny=64"],
        10,
        &[4],
    );
    // 32 x 40 over 3: the cuts (12, 26) do not halve to even cuts, so level 1 is gathered.
    same_as_one_process(
        "mg-40",
        "lid_driven_cavity_re100",
        &["grid.nx=32", "grid.ny=40"],
        10,
        &[3],
    );
    same_as_one_process(
        "mg-3d",
        "cavity_3d_re100",
        &["grid.nx=16", "grid.ny=16", "grid.nz=32", "solver.convection=tvd"],
        5,
        &[2],
    );
}

#[test]
fn exact_sides_on_shifted_slabs() {
    same_as_one_process(
        "ethier-steinman",
        "ethier_steinman",
        &[
            "grid.nx=12",
            "grid.ny=12",
            "grid.nz=16",
            "solver.pressure_solver=pcg",
        ],
        8,
        &[2, 3],
    );
}

#[test]
fn outflow_on_the_cut_axis() {
    // A channel along y (the cut axis in 2D): inflow at the bottom, outflow at the top, where
    // the pressure is fixed, so the pressure problem is not singular.
    same_as_one_process(
        "channel",
        "lid_driven_cavity_re100",
        &[
            "grid.nx=12",
            "grid.ny=32",
            "grid.extents=[1.0, 2.0]",
            "boundary.top={ type = \"outflow\" }",
            "boundary.bottom={ type = \"inflow\", velocity = [0.0, 1.0] }",
            "solver.pressure_solver=pcg",
        ],
        25,
        &[3],
    );
}

/// The rotor in hover (`cases/rotor_hover.toml`) on slabs that cut its disk: the disk spans
/// z in [-1, 1] of [-4, 4], 2 parts cut it at z = 0 and 3 near z = -1.33 and 1.33, within its
/// sources' reach. Each disk point is evaluated by one part, the loads are gathered in point
/// order and the sources keep the whole grid's spreading, so the fields, residuals and the
/// rotor's results are the one process's bit for bit.
#[test]
fn rotor_disk_cut_by_the_slabs() {
    same_as_one_process(
        "rotor",
        "rotor_hover",
        &[
            "grid.nx=32",
            "grid.ny=48",
            "grid.nz=32",
            "solver.backend=cpu",
            "solver.pressure_solver=multigrid",
        ],
        6,
        &[2, 3],
    );
}

#[test]
fn settings_that_do_not_run_over_several_processes_are_refused_by_key() {
    let case = common::root().join("cases/cavity_3d_re100.toml");
    for (sets, key) in [
        (
            &["grid.nz=16", "solver.pressure_solver=fft"][..],
            "solver.pressure_solver",
        ),
        (&["grid.nz=6", "solver.pressure_solver=pcg"][..], "grid.nz"),
        // Each process's slab of a grid too large for the host.
        (
            &[
                "grid.nx=16384",
                "grid.ny=4096",
                "grid.nz=4096",
                "solver.pressure_solver=pcg",
            ][..],
            "grid.nx",
        ),
    ] {
        if refused_over_two(&case, sets, key, "processes").is_none() {
            return;
        }
    }
}

#[test]
fn checkpoints_move_between_one_process_and_several() {
    // Written over two processes, continued on one; and written on one, continued over three.
    let case = common::root().join("cases/cavity_3d_re100.toml");
    let sets = [
        "grid.nx=12",
        "grid.ny=12",
        "grid.nz=16",
        "solver.pressure_solver=pcg",
        "solver.time_integrator=ab2",
    ];
    checkpoints_move("ckpt", &case, &sets, 20, &[(2, 1), (1, 3)]);
}
