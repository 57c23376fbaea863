//! On the GPU machine, runs cut into slabs over several GPUs, with one process a GPU (`mpirun`,
//! NCCL between the processes' GPUs) or one process driving several (`--devices 0,1,...`,
//! `solver.devices`), give the one-GPU results bit for bit (layers of a multiple of 256 cells;
//! else to round-off), as `tests/mpi_decomposition.rs` holds the processes on the CPU to. Each
//! test needs at least two GPUs and NCCL; without them it is skipped, and fails under
//! `FLOWLAB_REQUIRE_GPU=1`.
//!
//! Needs the `mpi` feature (the runs over processes use `mpirun`).
#![cfg(feature = "mpi")]

mod common;

use common::decomposition::*;

/// The GPUs the GPU tests below can use (at least 2, with NCCL), or `None` after skipping the
/// test (a failure under `FLOWLAB_REQUIRE_GPU=1`).
fn gpus() -> Option<usize> {
    if !common::gpu() {
        return None;
    }
    let count = flowlab::backend::cuda::probe().map_or(0, |i| i.device_count as usize);
    if count < 2 {
        common::skip_gpu_test(&format!("two GPUs are needed, the driver sees {count}"));
        return None;
    }
    if !flowlab::backend::cuda::nccl::available() {
        common::skip_gpu_test("the NCCL library (libnccl.so) was not found");
        return None;
    }
    Some(count)
}

/// The 32 x 32 x 48 cubic cavity on CUDA with the settings `extra`. Its layers of 32 x 32 = 1024
/// cells make the parts' linear sums' 256-cell blocks fall on the one-GPU blocks.
fn cavity_32(extra: &[&'static str]) -> Vec<&'static str> {
    ["grid.nx=32", "grid.ny=32", "grid.nz=48", "solver.backend=cuda"]
        .iter()
        .chain(extra)
        .copied()
        .collect()
}

/// Parts to try on `count` GPUs: 2, 3 and 4 where present.
fn gpu_parts(count: usize) -> Vec<usize> {
    (2..=count.min(4)).collect()
}

#[test]
fn gpu_slabs_give_the_one_gpu_result_bit_for_bit() {
    let Some(count) = gpus() else { return };
    let parts = gpu_parts(count);
    agrees_when_launched(
        "gpu-jacobi-tvd-ab2",
        "cavity_3d_re100",
        &cavity_32(&[
            "solver.pressure_solver=jacobi",
            "solver.tolerance=1e-5",
            "solver.convection=tvd",
            "solver.time_integrator=ab2",
        ]),
        12,
        &parts,
        Agreement::SameState,
        Launch::Processes,
    );
    agrees_when_launched(
        "gpu-sor-quick-f32",
        "cavity_3d_re100",
        &cavity_32(&[
            "solver.pressure_solver=sor",
            "solver.tolerance=1e-4",
            "solver.precision=f32",
            "solver.convection=quick",
        ]),
        12,
        &parts,
        Agreement::SameState,
        Launch::Processes,
    );
    agrees_when_launched(
        "gpu-pcg-upwind",
        "cavity_3d_re100",
        &cavity_32(&["solver.pressure_solver=pcg", "solver.convection=upwind"]),
        12,
        &parts,
        Agreement::SameState,
        Launch::Processes,
    );
}

#[test]
fn gpu_multigrid_with_cut_and_gathered_levels_gives_the_one_gpu_result_bit_for_bit() {
    let Some(count) = gpus() else { return };
    // 128^3: levels 0 and 1 (64^3, the smallest a GPU part cuts) are cut over 2 and 4 parts,
    // level 0 only over 3 (its cuts at 42 and 84 layers do not halve to even cuts); the next
    // level is gathered and cycled on every part down to its CG solve.
    agrees_when_launched(
        "gpu-multigrid-tvd",
        "cavity_3d_re100",
        &[
            "grid.nx=128",
            "grid.ny=128",
            "grid.nz=128",
            "solver.backend=cuda",
            "solver.pressure_solver=multigrid",
            "solver.tolerance=1e-8",
            "solver.convection=tvd",
        ],
        12,
        &gpu_parts(count),
        Agreement::SameState,
        Launch::Processes,
    );
    // An outflow on the cut axis: the pressure problem is not singular.
    agrees_when_launched(
        "gpu-devices-multigrid-outflow-f32",
        "cavity_3d_re100",
        &cavity_32(&[
            "boundary.back={ type = \"outflow\" }",
            "boundary.front={ type = \"inflow\", velocity = [0.0, 0.0, 1.0] }",
            "solver.pressure_solver=multigrid",
            "solver.tolerance=1e-4",
            "solver.precision=f32",
        ]),
        12,
        &gpu_parts(count),
        Agreement::SameState,
        Launch::Devices,
    );
}

#[test]
fn gpu_slabs_of_any_layer_size_agree_to_round_off() {
    let Some(count) = gpus() else { return };
    // 20 x 18 = 360 cells a layer: the parts' linear sums are cut differently from one GPU's;
    // an outflow on the cut axis (the pressure problem is not singular) on the last part.
    agrees_when_launched(
        "gpu-unaligned-outflow",
        "cavity_3d_re100",
        &[
            "grid.nx=20",
            "grid.ny=18",
            "grid.nz=40",
            "boundary.back={ type = \"outflow\" }",
            "boundary.front={ type = \"inflow\", velocity = [0.0, 0.0, 1.0] }",
            "solver.backend=cuda",
            "solver.pressure_solver=jacobi",
            "solver.tolerance=1e-6",
        ],
        10,
        &gpu_parts(count),
        Agreement::Within(1e-9),
        Launch::Processes,
    );
}

/// The rotor in hover on GPUs, on slabs that cut its disk (as `rotor_disk_cut_by_the_slabs`
/// on the CPU): each part evaluates the disk points in its own layers, the evaluations are
/// gathered over NCCL and put back in point order, so the fields, residuals and the rotor's
/// results are one GPU's bit for bit (layers of 32 x 48 = 6 x 256 cells). Over processes, and
/// over the GPUs of one process.
#[test]
fn gpu_rotor_disk_cut_by_the_slabs_gives_the_one_gpu_result_bit_for_bit() {
    let Some(count) = gpus() else { return };
    let sets = [
        "grid.nx=32",
        "grid.ny=48",
        "grid.nz=32",
        "solver.backend=cuda",
        "solver.pressure_solver=multigrid",
    ];
    for launch in [Launch::Processes, Launch::Devices] {
        agrees_when_launched(
            &format!("gpu-rotor-{launch:?}"),
            "rotor_hover",
            &sets,
            6,
            &gpu_parts(count),
            Agreement::SameState,
            launch,
        );
    }
}

/// A live change of the rotor's geometry on the GPUs of one process (`solver.devices`, as the
/// app drives them): after 6 steps the disk grows from R = 1 to 1.25 and moves 0.75 along the
/// cut axis (z), so its points move between the parts, each part builds its tables and its
/// share of the disk again, and 6 more steps give one GPU's state (clock, scalars, every
/// array) and rotor totals bit for bit; the larger disk's thrust is higher.
#[test]
fn gpu_parts_take_a_live_rotor_geometry_change_as_one_gpu_does() {
    let Some(count) = gpus() else { return };
    let run = |parts: usize| {
        let mut case = common::case(
            "rotor_hover",
            &[
                "grid.nx=32",
                "grid.ny=48",
                "grid.nz=32",
                "solver.backend=\"cuda\"",
                "solver.pressure_solver=\"multigrid\"",
            ],
        );
        if parts > 1 {
            let list: Vec<String> = (0..parts).map(|d| d.to_string()).collect();
            case.set_assignment(&format!("solver.devices=[{}]", list.join(",")))
                .expect("devices");
        }
        let mut s = flowlab::solver::build(&case.spec).expect("the rotor on the GPUs");
        s.advance(6).expect("steps before");
        let before = common::residual(s.as_ref(), "rotor_thrust");
        for set in ["rotor.radius=1.25", "rotor.centre=[0.0, 0.0, 0.75]"] {
            case.set_assignment(set).expect(set);
        }
        s.update(&case.spec).expect("the new geometry taken live");
        s.advance(6).expect("steps after");
        let rotor = s.summary()["rotor"].clone();
        (before, rotor, s.snapshot().expect("state"))
    };
    let (before, rotor, one) = run(1);
    let after = rotor["thrust"].as_f64().expect("thrust");
    assert!(
        after > 1.2 * before,
        "thrust {before} -> {after} with R 1 -> 1.25"
    );
    for n in gpu_parts(count) {
        let (b, r, state) = run(n);
        assert_eq!(
            b.to_bits(),
            before.to_bits(),
            "{n} GPUs: thrust before the change"
        );
        assert_eq!(r, rotor, "{n} GPUs: the rotor's totals after the change");
        assert_eq!(
            (state.time, state.steps, state.dt),
            (one.time, one.steps, one.dt),
            "{n} GPUs: clock"
        );
        assert_eq!(state.scalars, one.scalars, "{n} GPUs: scalars");
        assert_eq!(state.arrays.len(), one.arrays.len());
        for ((na, xa), (nb, xb)) in state.arrays.iter().zip(&one.arrays) {
            assert!(
                na == nb && xa == xb,
                "{n} GPUs: array {na} differs from one GPU's"
            );
        }
        eprintln!("rotor geometry changed live: {n} GPUs = 1 GPU, bit for bit");
    }
}

#[test]
fn gpu_settings_that_do_not_run_over_several_gpus_are_refused_by_key() {
    if gpus().is_none() {
        return;
    }
    let cube = ["grid.nz=16", "solver.backend=cuda"];
    for (case, sets, key) in [
        (
            "cavity_3d_re100",
            &["solver.pressure_solver=fft"][..],
            "solver.pressure_solver",
        ),
        (
            "cavity_3d_re100",
            &["solver.pressure_solver=multigrid", "grid.nx=15"][..],
            "solver.pressure_solver",
        ),
        (
            "lid_driven_cavity_re100",
            &["solver.pressure_solver=jacobi", "solver.backend=cuda"][..],
            "case.dim",
        ),
        (
            "cavity_3d_re100",
            &["solver.devices=[0, 99]", "solver.pressure_solver=jacobi"][..],
            "solver.backend",
        ),
    ] {
        let case = common::root().join("cases").join(format!("{case}.toml"));
        let mut sets = sets.to_vec();
        if case.ends_with("cavity_3d_re100.toml") {
            sets.extend(cube);
        }
        if refused_over_two(&case, &sets, key, "GPUs").is_none() {
            return;
        }
    }
}

#[test]
fn gpus_of_one_process_give_the_one_gpu_result_bit_for_bit() {
    let Some(count) = gpus() else { return };
    for (name, extra) in [
        (
            "gpu-devices-jacobi-tvd",
            &[
                "solver.pressure_solver=jacobi",
                "solver.tolerance=1e-5",
                "solver.convection=tvd",
            ][..],
        ),
        (
            "gpu-devices-pcg-f32",
            &[
                "solver.pressure_solver=pcg",
                "solver.tolerance=1e-4",
                "solver.precision=f32",
            ][..],
        ),
    ] {
        agrees_when_launched(
            name,
            "cavity_3d_re100",
            &cavity_32(extra),
            12,
            &gpu_parts(count),
            Agreement::SameState,
            Launch::Devices,
        );
    }
}

#[test]
fn gpus_of_one_process_are_refused_by_key_when_missing_or_listed_twice() {
    if gpus().is_none() {
        return;
    }
    let case = common::root().join("cases").join("cavity_3d_re100.toml");
    for (devices, says) in [("0,99", "device 99 was asked for"), ("0,0", "listed twice")] {
        let dir = out_dir("gpu-devices-refused");
        let mut args = run_args(
            &case,
            &[
                "grid.nz=16",
                "solver.backend=cuda",
                "solver.pressure_solver=jacobi",
            ],
            1,
            &dir,
        );
        args.extend(["--devices".into(), devices.into()]);
        let o = flowlab_on(1, &args).expect("one process");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "--devices {devices} ran");
        assert!(
            err.contains("solver.devices") && err.contains(says),
            "--devices {devices}: the error does not name solver.devices ({says}):\n{err}"
        );
    }
}
