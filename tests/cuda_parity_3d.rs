//! The 3D CUDA projection solver (`CudaProjection<T, 3>`, kernels compiled with `-DDIM=3`)
//! against the CPU reference `Projection<T, 3>`: a 16 x 12 x 10 cavity whose lid moves with
//! `[1, 0, 0.5]`, and a 16 x 12 x 8 channel with inflow, an outflow side and a periodic z axis,
//! stepped 200 times by both backends for every convection scheme (TVD with two limiters), both
//! time integrators and every iterative pressure solver, in f64 and f32 (the matrix and its
//! bounds: `common::parity::run_matrix`, relative L2 of u, v, w, p at most 1e-10 in f64, 1e-4 in
//! f32 or twice the CPU's own f32-to-f64 distance), the transform (fft) solve where the sides pair
//! up (the cavity; with Dirichlet or periodic front and back), batched transform steps against
//! single ones; the device-derived 3D fields against the host's derivation; snapshot and restore
//! across backends. Skipped (with the reason printed) where no CUDA device, driver or NVRTC is
//! usable.

mod common;

use common::{gpu, parity, rel_l2};
use flowlab::case::Case;
use flowlab::solver::{self, Solver};

const FIELDS: [&str; 4] = ["u", "v", "w", "p"];

/// The lid-driven cube: walls on every side, the top one moving in its plane with [1, 0, 0.5].
const CAVITY: &str = r#"
[case]
name = "3D cavity"
kind = "incompressible"
dim = 3

[grid]
nx = 16
ny = 12
nz = 10
extents = [1.0, 0.75, 0.625]

[physics]
re = 100.0

[boundary]
left = { type = "wall" }
right = { type = "wall" }
bottom = { type = "wall" }
top = { type = "wall", velocity = [1.0, 0.0, 0.5] }
front = { type = "wall" }
back = { type = "wall" }

[initial]
type = "rest"

[solver]
method = "projection"
precision = "f64"
cfl = 0.5
convection = "central"
pressure_solver = "multigrid"
tolerance = 1e-9
"#;

/// The cavity made a channel periodic along z: inflow on the left, outflow on the right
/// (Dirichlet pressure), symmetry below, a sliding wall above (assignments on [`CAVITY`]).
const CHANNEL: [&str; 7] = [
    "grid.nz=8",
    "grid.extents=[2.0, 1.0, 0.75]",
    "physics.re=200.0",
    "boundary={left={type=\"inflow\", velocity=[1.0, 0.0, 0.25]}, right={type=\"outflow\"}, \
     bottom={type=\"symmetry\"}, top={type=\"wall\", velocity=[0.5, 0.0, -0.25]}, \
     front={type=\"periodic\"}, back={type=\"periodic\"}}",
    "initial={type=\"uniform\", velocity=[0.5, 0.0, 0.1]}",
    "solver.convection=\"tvd\"",
    "solver.limiter=\"van_leer\"",
];

/// The cavity on the CPU (unless the sets name a backend) with `--set`-style assignments.
fn cavity(sets: &[String]) -> Case {
    let mut case = Case::parse(CAVITY, "test").unwrap_or_else(|e| panic!("{e:?}"));
    common::on_cpu_unless_named(&mut case);
    for s in sets {
        case.set_assignment(s).expect("override applies");
    }
    case
}

/// The channel ([`CHANNEL`]) with further assignments.
fn channel(sets: &[String]) -> Case {
    let all: Vec<String> = CHANNEL
        .iter()
        .map(|x| x.to_string())
        .chain(sets.iter().cloned())
        .collect();
    cavity(&all)
}

/// The cavity's sides with front and back of type `kind` (an assignment).
fn z_sides(kind: &str) -> String {
    format!(
        "boundary={{left={{type=\"wall\"}}, right={{type=\"wall\"}}, bottom={{type=\"wall\"}}, \
         top={{type=\"wall\", velocity=[1.0, 0.0, 0.5]}}, front={{type=\"{kind}\"}}, back={{type=\"{kind}\"}}}}"
    )
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// The test's cases are valid 3D cases and step on the CPU (no GPU needed), the transform solve
/// too (the CPU's Hartley transform on the periodic z axis).
/// The velocity's ghosts and boundary faces filled on the device (`ghosts`, the three axes in
/// one launch, each point written by the thread of the last axis that sets it) against the CPU's
/// fill (axis by axis), bit for bit, on a velocity scrambled everywhere
/// (`common::ghosts::device_fill_equals_host`): the cavity (moving lid, walls meeting at every
/// edge), the channel (inflow, outflow, symmetry, periodic z), openings meeting an inflow and
/// periodic x, in f64 and f32.
#[test]
fn velocity_ghosts_equal_the_host_fill() {
    if !gpu() {
        return;
    }
    let openings = "boundary={left={type=\"periodic\"}, right={type=\"periodic\"}, \
                    bottom={type=\"inflow\", velocity=[0.2, 1.0, -0.3]}, top={type=\"opening\"}, \
                    front={type=\"opening\"}, back={type=\"wall\", velocity=[0.5, 0.25, 0.0]}}";
    let variants: [(&str, Vec<String>); 3] = [
        ("cavity", s(&["grid.nx=9", "grid.ny=7", "grid.nz=6"])),
        (
            "channel",
            CHANNEL
                .iter()
                .map(|x| x.to_string())
                .chain(s(&["grid.nx=7", "grid.ny=6"]))
                .collect(),
        ),
        ("openings", s(&[openings, "grid.nx=6", "grid.ny=8", "grid.nz=5"])),
    ];
    common::ghosts::in_both_precisions::<3>(&variants, cavity);
}

#[test]
fn cases_build_and_step_on_the_cpu() {
    let fft = "solver.pressure_solver=\"fft\"".to_string();
    for c in [
        cavity(&[]),
        channel(&[]),
        cavity(&[fft.clone(), z_sides("outflow")]),
        cavity(&[fft.clone(), z_sides("opening")]),
        cavity(&[fft, z_sides("periodic")]),
    ] {
        let mut cpu = solver::build(&c.spec).expect("cpu solver");
        assert_eq!(cpu.info().grid.dim, 3);
        for _ in 0..3 {
            cpu.step().expect("cpu step");
        }
        assert_eq!(cpu.field_names(), flowlab::solver::incompressible::FIELDS_3D);
    }
}

#[test]
fn parity_3d_convection_schemes() {
    let variants = parity::convection_variants(&["van_leer", "superbee"]);
    parity::run_matrix("3d convection", &cavity, &FIELDS, &variants);
    parity::run_matrix(
        "3d channel convection",
        &channel,
        &FIELDS,
        &[
            s(&["solver.convection=\"quick\""]),
            s(&["solver.limiter=\"minmod\""]),
        ],
    );
}

#[test]
fn parity_3d_ab2() {
    let variants = [
        s(&["solver.time_integrator=\"ab2\"", "solver.convection=\"central\""]),
        s(&[
            "solver.time_integrator=\"ab2\"",
            "solver.convection=\"tvd\"",
            "solver.limiter=\"superbee\"",
        ]),
    ];
    parity::run_matrix("3d ab2", &cavity, &FIELDS, &variants);
    parity::run_matrix("3d channel ab2", &channel, &FIELDS, &variants[..1]);
}

/// Every iterative pressure solver on both cases: the cavity (Neumann on every side, singular)
/// and the channel (a Dirichlet side, a periodic axis; multigrid coarsens it to 4 x 3 x 2).
#[test]
fn parity_3d_pressure_solvers() {
    let variants = [
        s(&["solver.pressure_solver=\"multigrid\""]),
        s(&["solver.pressure_solver=\"jacobi\"", "solver.max_iterations=400"]),
        s(&["solver.pressure_solver=\"sor\""]),
        s(&["solver.pressure_solver=\"pcg\""]),
    ];
    parity::run_matrix("3d pressure", &cavity, &FIELDS, &variants);
    parity::run_matrix("3d channel pressure", &channel, &FIELDS, &variants);
}

/// The transform solve (3D R2C cuFFT with the multidimensional Makhoul reordering,
/// `dct_divide`): the cavity (Neumann on every axis), the cavity with outflow front and back (the
/// Dirichlet z axis: the DST through sign flips), with opening front and back (the lid's z
/// motion draws the fluid in through one and out through the other: the held total pressure,
/// also under multigrid) and periodic front and back (the DFT along z, where the CPU uses the
/// Hartley transform).
#[test]
fn parity_3d_fft() {
    let fft = "solver.pressure_solver=\"fft\"".to_string();
    let variants = [
        vec![fft.clone()],
        vec![fft.clone(), z_sides("outflow")],
        vec![fft.clone(), z_sides("opening")],
        vec![z_sides("opening")],
        vec![fft, z_sides("periodic")],
    ];
    parity::run_matrix("3d fft", &cavity, &FIELDS, &variants);
}

/// A flow that varies along the periodic axis: the cavity's state after 30 steps (walls front
/// and back, so w and p vary along z) loaded ([`Solver::load_state`]) into the periodic-z cavity
/// on both backends, then 200 transform-solve steps (every DFT wavenumber along z in play):
/// relative L2 of u, v, w, p at most 1e-10 in f64, 1e-4 in f32.
#[test]
fn parity_3d_fft_periodic_axis_with_varying_flow() {
    if !gpu() {
        return;
    }
    for (precision, bound) in [("f64", 1e-10), ("f32", 1e-4)] {
        let sets = |backend: &str| {
            vec![
                "solver.tolerance=1e-4".to_string(),
                format!("solver.precision=\"{precision}\""),
                format!("solver.backend=\"{backend}\""),
            ]
        };
        let mut source = solver::build(&cavity(&sets("cpu")).spec).expect("cpu solver");
        source.advance(30).expect("steps");
        let run = |backend: &str| {
            let mut v = sets(backend);
            v.extend(["solver.pressure_solver=\"fft\"".to_string(), z_sides("periodic")]);
            let mut s = solver::build(&cavity(&v).spec).expect("solver");
            s.load_state(source.as_ref()).expect("load");
            s.advance(parity::STEPS as u64).expect("steps");
            s
        };
        let (cpu, cuda) = (run("cpu"), run("cuda"));
        for f in FIELDS {
            let d = rel_l2(&common::field(cuda.as_ref(), f), &common::field(cpu.as_ref(), f));
            eprintln!("periodic z, varying flow, {precision} {f}: rel L2 {d:.3e}");
            assert!(d <= bound, "{precision} {f}: rel L2 {d:.3e} > {bound:e}");
        }
    }
}

/// Transform-solve steps in batches ([`Solver::advance`]: one graph replay per step, the health
/// check and dt on the device) equal the same steps one by one, bit for bit, in 3D.
#[test]
fn batched_3d_fft_steps_equal_single_steps() {
    if !gpu() {
        return;
    }
    for precision in ["f64", "f32"] {
        let c = cavity(&s(&[
            "solver.backend=\"cuda\"",
            "solver.pressure_solver=\"fft\"",
            "solver.tolerance=1e-4",
            "solver.time_integrator=\"ab2\"",
            &format!("solver.precision=\"{precision}\""),
        ]));
        parity::batches_equal_single_steps(&c, &FIELDS, [15, 25], precision);
    }
}

/// The fields derived on the device (`kernels/display.cu` with `-DDIM=3`: the velocity, speed,
/// pressure, divergence, vorticity vector and magnitude, Q-criterion, lambda-2 and helicity)
/// against the CPU's derivation (`derived::View`, `derived/vortex.rs`) of the same device
/// state: relative L2 at most 1e-12 in f64 (the same operations; hypot, acos and cos are the
/// device's, within an ulp or two) and 1e-6 in f32 (the device rounds the f64 value once).
#[test]
fn device_derived_3d_fields_equal_the_host_derivation() {
    if !gpu() {
        return;
    }
    for base in [cavity(&[]), channel(&[])] {
        fields_match::<f64>(base.clone(), 1e-12);
        fields_match::<f32>(base, 1e-6);
    }
}

fn fields_match<T: flowlab::solver::real::Real>(mut c: Case, bound: f64) {
    use flowlab::solver::incompressible::{CudaProjection, FIELDS_3D};
    for set in [
        "physics.density=1.25",
        "solver.tolerance=1e-5",
        &format!("solver.precision=\"{}\"", T::NAME),
    ] {
        c.set_assignment(set).expect("override applies");
    }
    let cfg = flowlab::solver::incompressible::Config::from_spec(&c.spec).expect("config");
    let mut g = CudaProjection::<T, 3>::new(cfg, 0).expect("cuda solver");
    common::device_fields_match(&mut g, FIELDS_3D, CudaProjection::host_field, T::NAME, bound);
    let mut out = Vec::new();
    assert!(g.field("stream_function", &mut out).is_none(), "a 2D field");
}

/// A snapshot of the CUDA run (u, v, w, p and the AB2 histories hu, hv, hw, as the CPU solver
/// saves them) restored into a fresh CUDA solver steps on bit for bit as the original, and
/// restored into a CPU solver steps on within the f64 parity bound (the cavity: the channel
/// amplifies rounding-level differences, see `parity::run_matrix`).
#[test]
fn snapshot_restore_round_trip_3d() {
    if !gpu() {
        return;
    }
    let sets = s(&["solver.time_integrator=\"ab2\""]);
    let mut cuda_case = cavity(&sets);
    cuda_case.set_assignment("solver.backend=\"cuda\"").unwrap();
    let mut a = solver::build(&cuda_case.spec).expect("cuda solver");
    a.advance(30).expect("steps");
    let snap = a.snapshot().expect("snapshot");
    for name in ["u", "v", "w", "p", "hu", "hv", "hw"] {
        assert!(snap.values::<f64>(name).is_ok(), "snapshot lacks {name}");
    }
    let mut b = solver::build(&cuda_case.spec).expect("cuda solver");
    b.restore(&snap).expect("cuda restore");
    let mut cpu = solver::build(&cavity(&sets).spec).expect("cpu solver");
    cpu.restore(&snap).expect("cpu restore");
    for s in [&mut a, &mut b, &mut cpu] {
        s.advance(50).expect("steps");
    }
    assert_eq!((a.steps(), b.steps(), cpu.steps()), (80, 80, 80));
    assert_eq!(a.time().to_bits(), b.time().to_bits(), "time");
    for f in FIELDS {
        let (x, y) = (common::field(a.as_ref(), f), common::field(b.as_ref(), f));
        assert!(
            x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits()),
            "{f}: the restored CUDA run differs"
        );
        let d = rel_l2(&x, &common::field(cpu.as_ref(), f));
        eprintln!("snapshot on the cpu, {f}: rel L2 {d:.3e}");
        assert!(d <= 1e-10, "{f}: restored on the cpu, rel L2 {d:.3e}");
    }
}
