//! The memory a case's solver needs, counted from the arrays it allocates before any is
//! allocated, checked against what the backend has: the host's available memory
//! ([`host_available`]) for every case, the device's free memory for a CUDA solver.
//!
//! The count is per cell of the grid padded by two ghost layers per side (the most any
//! solver carries), in values of the solver's precision:
//! - projection: the `D` velocity components, their predictors and convection histories
//!   (`3 D`: 6 in 2D, 9 in 3D), pressure and right-hand side (2), and the pressure solver's workspace (Jacobi 1, SOR 0,
//!   PCG 4, multigrid 4: residual, correction and right-hand side over levels summing to
//!   4/3 of the grid, the transform solve 3);
//! - SIMPLE, SIMPLEC, SIMPLER (f64): `u, v`, cell and node viscosities, `d_u, d_v`,
//!   pseudo-velocities (8), pressure, correction and the two momentum unknowns (4), three
//!   five-point systems of six coefficient arrays (18), and the linear solvers' workspaces
//!   (two momentum, one pressure: ADI 0, Jacobi 1, CG 5, multigrid CG 7, BiCGSTAB 8) times the
//!   overlap growth of Schwarz strips;
//! - compressible: the conserved state (4) and the scheme's arrays: MUSCL-Hancock's primitive
//!   state (4), four face states (16), x and y fluxes (4 each, y in 2D only) and the next state
//!   (4); CE/SE's two gradients (8) and three corner states (12); one byte of solid flag.
//!   On the device MUSCL-Hancock keeps only the state and the `2 D` face states (`4 + 8 D`:
//!   the fluxes live in shared memory, `kernels/muscl_hancock.cu`) and CE/SE the state, its `D`
//!   gradients and `1 + D` corner states (`8 + 8 D`).
//!
//! A rotor ([`crate::case::RotorSpec`]) adds its source tables: the spreading's entries, the
//! sampling's corners and one acceleration array per component.
//!
//! The host also holds three f64 fields at a time while fields are derived and written (the
//! stream function, a field being written, the display copy). A CUDA solver keeps a CPU mirror
//! of its state on the host (the same count) and the solver's arrays plus four display fields
//! on the device.

use crate::backend::cuda::Gpu;
use crate::case::{CaseSpec, Invalid, Kind, LinearSolverKind, Method, Precision, PressureSolverKind};
use crate::solver::incompressible::{Config, SimpleConfig};

/// Bytes a solver of `spec` needs, on the host and (for a CUDA solver) on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Need {
    pub host: u64,
    pub device: u64,
    /// Padded cells the count is made of.
    pub cells: u64,
}

/// Workspace of a stencil (five- or seven-point) linear solver, in arrays of its system's size.
fn linear_workspace(kind: LinearSolverKind) -> u64 {
    match kind {
        LinearSolverKind::Adi => 0,
        LinearSolverKind::Jacobi => 1,
        LinearSolverKind::Cg => 5,
        LinearSolverKind::MultigridCg => 7,
        LinearSolverKind::Bicgstab => 8,
    }
}

/// Arrays per padded cell of the solver, and the bytes of one value.
fn arrays_per_cell(spec: &CaseSpec) -> Result<(u64, u64), Invalid> {
    let real = |p: Precision| match p {
        Precision::F32 => 4,
        Precision::F64 => 8,
    };
    Ok(match spec.case.kind {
        Kind::Incompressible if crate::solver::incompressible::steady(spec) => {
            let c = SimpleConfig::from_spec(spec)?;
            let d = c.flow.grid.dim as u64;
            let workspaces = d * linear_workspace(c.momentum_solver) + linear_workspace(c.pressure_solver);
            // Each of `subdomains` slabs also holds `2 overlap` layers of its neighbours.
            let layers = c.flow.grid.n[c.flow.grid.dim - 1].max(1) as u64;
            let growth = 1 + (2 * c.overlap as u64 * c.subdomains as u64).div_ceil(layers);
            // Ghosted: velocity, d and pseudo-velocity per component, the cell viscosity and one
            // edge viscosity per pair of axes; cell-sized: p, p', the momentum unknowns; the
            // D + 1 systems of a_P, 2 D links and b (2D: 8 + 4 + 18).
            let ghosted = 3 * d + 1 + d * (d - 1) / 2;
            let systems = (d + 1) * (2 * d + 2);
            (ghosted + 2 + d + systems + workspaces * growth, 8)
        }
        Kind::Incompressible => {
            let c = Config::from_spec(spec)?;
            let workspace = match c.poisson.kind {
                PressureSolverKind::Jacobi => 1,
                PressureSolverKind::Sor => 0,
                PressureSolverKind::Pcg | PressureSolverKind::Multigrid => 4,
                // The reordered field, its spectrum, cuFFT's work area; in 2D FACR's chunk
                // ends, separators and their factors (0.75 of a field in f32) and its chunks'
                // pivots (64 a column: a quarter of a field once ny >= 256).
                PressureSolverKind::Fft => 3 + (c.grid.dim == 2) as u64,
            };
            (3 * c.grid.dim as u64 + 2 + workspace, real(c.precision))
        }
        Kind::Compressible => {
            let c = crate::solver::compressible::Config::from_spec(spec)?;
            let scheme = match c.method {
                Method::Cese => 20,
                _ if c.dim == 2 => 32,
                _ => 28,
            };
            (4 + scheme, real(c.precision))
        }
    })
}

/// Arrays per padded cell of a CUDA solver of `spec` (the module's count), where they differ from
/// the CPU solver's `host` count: the compressible schemes'.
fn device_arrays_per_cell(spec: &CaseSpec, host: u64) -> Result<u64, Invalid> {
    if !matches!(spec.case.kind, Kind::Compressible) {
        return Ok(host);
    }
    let c = crate::solver::compressible::Config::from_spec(spec)?;
    let d = c.dim as u64;
    Ok(match c.method {
        Method::Cese => 8 + 8 * d,
        _ => 4 + 8 * d,
    })
}

/// The key of the grid's largest axis count (the one to reduce).
fn largest_axis_key(spec: &CaseSpec) -> &'static str {
    let g = &spec.grid;
    let counts = [("grid.nx", g.nx), ("grid.ny", g.ny), ("grid.nz", g.nz)];
    counts
        .iter()
        .take((spec.case.dim as usize).clamp(1, 3))
        .max_by_key(|(_, n)| *n)
        .map_or("grid.nx", |(k, _)| k)
}

/// The memory a solver of `spec` needs ([the module's count](self)), overflow-checked: a grid
/// whose count does not fit in 64 bits is an error naming its largest axis.
pub fn need(spec: &CaseSpec) -> Result<Need, Invalid> {
    let dim = (spec.case.dim as usize).clamp(1, 3);
    let g = &spec.grid;
    let too_big = || {
        Invalid::new(
            largest_axis_key(spec),
            format!(
                "a grid of {} x {} x {} cells is too large to count (its memory overflows 64 bits)",
                g.nx, g.ny, g.nz
            ),
        )
    };
    let cells = [g.nx, g.ny, g.nz]
        .iter()
        .take(dim)
        .try_fold(1u64, |acc, &n| acc.checked_mul((n as u64).checked_add(4)?))
        .ok_or_else(too_big)?;
    let (arrays, real) = arrays_per_cell(spec)?;
    let bytes = |values: u64| cells.checked_mul(values)?.checked_mul(real);
    let solver = bytes(arrays).ok_or_else(too_big)?;
    let output = cells.checked_mul(3 * 8 + 1).ok_or_else(too_big)?;
    let rotor = rotor_tables(spec, cells, real)?;
    let host = solver
        .checked_add(output)
        .and_then(|b| b.checked_add(rotor))
        .ok_or_else(too_big)?;
    let device = bytes(device_arrays_per_cell(spec, arrays)? + 4)
        .and_then(|b| b.checked_add(rotor))
        .ok_or_else(too_big)?;
    Ok(Need { host, device, cells })
}

/// The bytes of a rotor's source tables (`RotorSetup::table_bytes`), held on the host and, for a
/// CUDA solver, on the device too; 0 without a rotor.
fn rotor_tables(spec: &CaseSpec, cells: u64, real: u64) -> Result<u64, Invalid> {
    if spec.rotor.is_none()
        || !matches!(spec.case.kind, Kind::Incompressible)
        || crate::solver::incompressible::steady(spec)
    {
        return Ok(0);
    }
    let c = Config::from_spec(spec)?;
    Ok(c.rotor.map_or(0, |r| r.table_bytes(&c.grid, cells, real)))
}

/// Bytes of memory the host can give a new solver: `MemAvailable` of `/proc/meminfo`, or where
/// that cannot be read (not Linux) the largest allocation Rust admits (`isize::MAX`), so that
/// only counts that cannot be allocated at all are refused there.
pub fn host_available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kb.checked_mul(1024)
        })
        .unwrap_or(isize::MAX as u64)
}

/// `x` bytes for messages (`80.0 GB`).
fn show(bytes: u64) -> String {
    format!("{:.1} GB", bytes as f64 / 1e9)
}

fn refuse(spec: &CaseSpec, need: u64, where_: &str, limit: u64) -> Invalid {
    let g = &spec.grid;
    let n = [g.nx, g.ny, g.nz];
    let grid: Vec<String> = n
        .iter()
        .take(spec.case.dim.clamp(1, 3) as usize)
        .map(|n| n.to_string())
        .collect();
    Invalid::new(
        largest_axis_key(spec),
        format!(
            "a grid of {} cells needs about {} of {where_} memory, but {} is available; use fewer cells",
            grid.join(" x "),
            show(need),
            show(limit)
        ),
    )
}

/// The bytes of `whole` a slab of `stored` of the grid's `layers` layers needs (with 4 layers
/// for ghosts and the kernels' slack).
fn slab_share(whole: u64, stored: usize, layers: usize) -> u64 {
    whole / layers.max(1) as u64 * (stored as u64 + 4)
}

/// `Err` naming the grid key when one process of a run of `spec` over several
/// ([`crate::parallel`]) needs more host memory than [`host_available`]: its share of the
/// whole grid's count, `stored` of the `layers` cells along the cut axis, plus the whole count
/// on the first process, which gathers the whole state for output.
pub fn check_host_part(spec: &CaseSpec, stored: usize, layers: usize, first: bool) -> Result<(), Invalid> {
    let whole = need(spec)?.host;
    let need = slab_share(whole, stored, layers).saturating_add(if first { whole } else { 0 });
    let limit = host_available();
    if need > limit {
        return Err(refuse(spec, need, "host", limit));
    }
    Ok(())
}

/// `Err` naming the grid key when the solver of `spec` needs more host memory than
/// [`host_available`] (or its count overflows).
pub fn check_host(spec: &CaseSpec) -> Result<Need, Invalid> {
    let need = need(spec)?;
    let limit = host_available();
    if need.host > limit {
        return Err(refuse(spec, need.host, "host", limit));
    }
    Ok(need)
}

/// `Err` naming the grid key when the CUDA solver of `spec` needs more device memory than the
/// device `device` has free (`cuMemGetInfo`); `solver.backend` when the device cannot be
/// asked. A part of a decomposed grid (`stored` of its `layers` layers along the last axis)
/// needs its share.
pub fn check_device(spec: &CaseSpec, device: usize, part: Option<(usize, usize)>) -> Result<(), Invalid> {
    // A part's host memory is checked by `check_host_part`.
    let need = match part {
        None => check_host(spec)?.device,
        Some((stored, layers)) => slab_share(need(spec)?.device, stored, layers),
    };
    let free = Gpu::on(device)
        .and_then(|gpu| gpu.free_memory())
        .map_err(|e| Invalid::new("solver.backend", format!("CUDA: {e}")))?;
    if need > free {
        return Err(refuse(spec, need, "device", free));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::Case;

    const CAVITY: &str = include_str!("../../cases/lid_driven_cavity_re100.toml");

    #[test]
    fn count_grows_with_the_grid_and_overflow_is_an_error() {
        let mut case = Case::parse(CAVITY, "cavity.toml").unwrap();
        let small = need(&case.spec).unwrap();
        case.spec.grid.nx *= 2;
        let wide = need(&case.spec).unwrap();
        assert!(wide.host > small.host && wide.host < 2 * small.host + small.host / 8);
        case.spec.grid.nx = usize::MAX;
        let e = need(&case.spec).unwrap_err();
        assert_eq!(e.key, "grid.nx", "{e:?}");
        case.spec.grid.nx = 1 << 31;
        case.spec.grid.ny = 1 << 31;
        let e = need(&case.spec).unwrap_err();
        assert!(e.message.contains("overflows"), "{e:?}");
    }

    #[test]
    fn projection_count_matches_its_arrays() {
        // 128^2 cavity, f64, multigrid: 8 + 4 arrays of the padded grid, plus 3 f64 outputs
        // and the solid flag byte.
        let case = Case::parse(CAVITY, "cavity.toml").unwrap();
        let (nx, ny) = (case.spec.grid.nx as u64 + 4, case.spec.grid.ny as u64 + 4);
        let n = need(&case.spec).unwrap();
        assert_eq!(n.cells, nx * ny);
        assert_eq!(n.host, nx * ny * (12 * 8 + 25));
    }

    #[test]
    fn compressible_counts_match_their_arrays() {
        // Host: the state and the scheme's arrays; device: the kernels' arrays and four display
        // fields. MUSCL-Hancock 2D f64: 4 + 32 on the host, 4 + 16 (+ 4) on the device; 1D:
        // 4 + 28 and 4 + 8 (+ 4). CE/SE 2D: 4 + 20 and 8 + 16 (+ 4); 1D: 4 + 20 and 8 + 8 (+ 4).
        let cases = [
            (
                "riemann_quadrant_config3.toml",
                include_str!("../../cases/riemann_quadrant_config3.toml"),
                36,
                24,
            ),
            ("sod.toml", include_str!("../../cases/sod.toml"), 32, 16),
            (
                "cese_quadrant_2d.toml",
                include_str!("../../cases/cese_quadrant_2d.toml"),
                24,
                28,
            ),
            ("cese_sod.toml", include_str!("../../cases/cese_sod.toml"), 24, 20),
        ];
        for (name, text, host, device) in cases {
            let case = Case::parse(text, name).unwrap();
            let n = need(&case.spec).unwrap();
            let config = crate::solver::compressible::Config::from_spec(&case.spec).unwrap();
            let real = match config.precision {
                Precision::F32 => 4,
                Precision::F64 => 8,
            };
            assert_eq!(n.host, n.cells * (host * real + 25), "{name}");
            assert_eq!(n.device, n.cells * device * real, "{name}");
        }
    }

    #[test]
    fn a_grid_beyond_the_host_memory_is_refused_with_key_estimate_and_limit() {
        let mut case = Case::parse(CAVITY, "cavity.toml").unwrap();
        let e = case
            .set("grid.nx", "100000")
            .and_then(|()| case.set("grid.ny", "100000"));
        let e = e.expect_err("a 10^10-cell grid does not fit");
        let shown = e.to_string();
        assert!(shown.contains("grid.n"), "{shown}");
        assert!(
            shown.contains("GB of host memory") && shown.contains("is available"),
            "{shown}"
        );
    }
}
