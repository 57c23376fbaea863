//! The velocity's ghosts and boundary faces filled on the device against the host's fill, bit
//! for bit (`velocity_ghosts_equal_the_host_fill` of the 2D and 3D GPU parity suites).

use flowlab::case::Case;
use flowlab::solver::Solver;
use flowlab::solver::incompressible::{Config, CudaProjection};
use flowlab::solver::real::Real;

/// A value in [-1, 1) for entry `k` of component `c`, the same on every run.
fn scrambled(k: usize, c: usize) -> f64 {
    let h = (k as u64)
        .wrapping_mul(2_654_435_761)
        .wrapping_add(97 * c as u64 + 13)
        % 20_011;
    h as f64 / 10_005.5 - 1.0
}

/// For each case: a CUDA projection solver in `T` whose velocity is scrambled everywhere, ghosts
/// and boundary faces included (a snapshot with [`scrambled`] values, restored), then filled on
/// the device (`ghosts`, every axis in one launch) and on the host (`fill_velocity_ghosts`, axis
/// by axis; `CudaProjection::ghosts_on_device_and_host`). Every entry of every component must
/// agree to the bit, and the host's fill must have changed some entries (so a kernel that wrote
/// nothing fails).
pub fn device_fill_equals_host<T: Real, const D: usize>(cases: &[(&str, Case)]) {
    for (name, case) in cases {
        let cfg = Config::from_spec(&case.spec).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let mut s = CudaProjection::<T, D>::new(cfg, 0).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let mut snap = s.snapshot().expect("snapshot");
        let components = ["u", "v", "w"];
        let mut start = Vec::new();
        for (c, comp) in components[..D].iter().enumerate() {
            let len = snap.values::<T>(comp).expect("velocity in the snapshot").len();
            let values: Vec<T> = (0..len).map(|k| T::of(scrambled(k, c))).collect();
            snap.put(comp, &values);
            start.push(values);
        }
        s.restore(&snap).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let filled = s
            .ghosts_on_device_and_host()
            .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        for (c, ((device, host), start)) in filled.iter().zip(&start).enumerate() {
            let bits = |x: &T| x.f64().to_bits();
            let differ: Vec<usize> = (0..host.len())
                .filter(|&k| bits(&device[k]) != bits(&host[k]))
                .collect();
            let filled_here = (0..host.len())
                .filter(|&k| bits(&host[k]) != bits(&start[k]))
                .count();
            eprintln!(
                "GHOSTS {name} {} component {c}: {filled_here} entries filled by the host, {} differ",
                std::any::type_name::<T>(),
                differ.len()
            );
            assert!(filled_here > 0, "{name}: the host's fill changed nothing");
            if let Some(&k) = differ.first() {
                panic!(
                    "{name}, component {c}: {} entries differ; first at flat index {k}: device {}, host {}",
                    differ.len(),
                    device[k].f64(),
                    host[k].f64()
                );
            }
        }
    }
}

/// [`device_fill_equals_host`] in f64, then in f32, on the cases `case` makes of each variant's
/// `--set` assignments with the precision appended (and a tolerance of 1e-4, which f32 accepts:
/// no pressure solve runs here).
pub fn in_both_precisions<const D: usize>(
    variants: &[(&str, Vec<String>)],
    case: impl Fn(&[String]) -> Case,
) {
    for precision in ["f64", "f32"] {
        let cases: Vec<(&str, Case)> = variants
            .iter()
            .map(|(name, sets)| {
                let mut sets = sets.clone();
                sets.push("solver.tolerance=1e-4".into());
                sets.push(format!("solver.precision=\"{precision}\""));
                (*name, case(&sets))
            })
            .collect();
        if precision == "f64" {
            device_fill_equals_host::<f64, D>(&cases);
        } else {
            device_fill_equals_host::<f32, D>(&cases);
        }
    }
}
