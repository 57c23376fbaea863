//! The numbers the host and the kernels share, defined once: slots of the scalar (`sc`) and
//! control (`ctrl`) blocks of the reductions and linear solvers, block sizes the host must
//! launch with, the codes of limiters, Riemann solvers and boundary kinds, and marker values. [`defines`] writes them as `#define NAME value` lines that
//! [`super::KernelSet::full_source`] puts at the top of every compilation unit, so no kernel
//! file or header defines them again.
//! The projection family's step clock (`CK_*`), halt flag and velocity boundary kinds, and the
//! compressible solvers' step clock (`EK_*`), are here too.

/// Declares each constant and lists it in [`ALL`] under its own name.
macro_rules! shared {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $value:expr;)*) => {
        $($(#[$doc])* pub const $name: $ty = $value;)*
        /// Every shared constant: (name, value).
        pub const ALL: &[(&str, i64)] = &[$((stringify!($name), $name as i64)),*];
    };
}

shared! {
    // The scalar block `sc` of the reductions and Krylov solvers (`SC_LEN` reals).
    /// `tol ||b||`, the stopping target of a linear solve.
    SC_TARGET: usize = 0;
    /// `||b||` (or `||r_0||`) of a linear solve.
    SC_BNORM: usize = 1;
    /// The latest residual norm of a linear solve.
    SC_RNORM: usize = 2;
    /// A mean removed from a vector.
    SC_MEAN: usize = 3;
    /// CG's `gamma = r . w`.
    SC_GAMMA: usize = 4;
    /// CG's step `alpha`.
    SC_ALPHA: usize = 5;
    /// CG's `beta`.
    SC_BETA: usize = 6;
    /// The largest |u|, |v| and |w| (projection family).
    SC_UMAX: usize = 8;
    SC_VMAX: usize = 9;
    SC_WMAX: usize = 14;
    /// The steady-state change and its norm (projection family).
    SC_CHANGE: usize = 10;
    SC_NORM: usize = 11;
    /// BiCGSTAB's `rho` and `omega` (`kernels/stencil.cu`).
    SC_RHO: usize = 12;
    SC_OMEGA: usize = 13;
    /// Reals in the scalar block.
    SC_LEN: usize = 18;
    /// Threads of the rotor's totals (`disk_totals`, one block; a power of two).
    ROTOR_THREADS: usize = 256;

    // The control block `ctrl` of the device-side stopping test (`CTRL_LEN` ints).
    /// Set when the solve is done: the guarded kernels return at once.
    CTRL_DONE: usize = 0;
    /// The iteration at which the solve stopped.
    CTRL_ITERS: usize = 1;
    /// Set when `||b|| = 0` (the solution is zero).
    CTRL_ZERO: usize = 2;
    /// BiCGSTAB: the iteration at which the half-step residual converged.
    CTRL_LAST: usize = 3;
    /// Projection: set by `step_dt` when the health check fails; every step kernel then returns
    /// at once (`HALTED` in `kernels/projection.cu`).
    CTRL_HALT: usize = 3;
    /// Ints in the control block.
    CTRL_LEN: usize = 4;

    // The projection's step clock (doubles): the current step's dt (the previous step's between
    // steps), the time after it, AB2's weights, whether the predictor stored the history H of a
    // step (AB2 only), the steps taken, and the host's cap on dt (`Solver::set_dt_cap`).
    CK_DT: usize = 0;
    CK_TIME: usize = 1;
    CK_W_NEW: usize = 2;
    CK_W_OLD: usize = 3;
    CK_HISTORY: usize = 4;
    CK_STEPS: usize = 5;
    CK_DT_CAP: usize = 6;
    /// Doubles in the clock.
    CK_LEN: usize = 8;

    // The SIMPLE family's scalar block (`kernels/simple.cu`; the linear solvers' slots below 8
    // are theirs).
    /// Momentum residual sums `sum |r|` of u and v (w: `S_RES_W`).
    S_RES_U: usize = 8;
    S_RES_V: usize = 9;
    /// Momentum norms `sum |a_P q|` of u and v (w: `S_NORM_W`).
    S_NORM_U: usize = 10;
    S_NORM_V: usize = 11;
    /// The mass imbalance `sum |b|` and the mass flux of the pressure system.
    S_IMBALANCE: usize = 12;
    S_FLUX: usize = 13;
    /// The largest velocity magnitude.
    S_VMAX: usize = 14;
    /// The pressure sum before the mean is removed (finite or not: the health check).
    S_PSUM: usize = 15;
    /// The momentum residual sum and norm of w (3D).
    S_RES_W: usize = 16;
    S_NORM_W: usize = 17;

    // The line solver of `kernels/stencil.cu`.
    /// Equations per thread of the parallel cyclic reduction.
    PCR_K: usize = 8;
    /// The largest block of the line kernel: lines of at most `PCR_K PCR_THREADS` cells.
    PCR_THREADS: usize = 512;

    // Codes of settings passed to the kernels as `int`s.
    /// TVD limiters (`psi` of `kernels/common.cuh`; [`super::limiter_code`]).
    LIM_NONE: i64 = 0;
    LIM_MINMOD: i64 = 1;
    LIM_SUPERBEE: i64 = 2;
    LIM_VAN_LEER: i64 = 3;
    LIM_MC: i64 = 4;
    LIM_VAN_ALBADA: i64 = 5;
    LIM_OSHER: i64 = 6;
    LIM_DOWNWIND: i64 = 7;
    LIM_CENTRAL: i64 = 8;
    LIM_SOU: i64 = 9;
    LIM_FROMM: i64 = 10;
    LIM_QUICK: i64 = 11;
    /// Velocity boundary kinds of the staggered solvers (`bck[side]`, side `2 axis + s`: left,
    /// right, bottom, top, front, back).
    BC_WALL: i32 = 0;
    BC_INFLOW: i32 = 1;
    BC_OUTFLOW: i32 = 2;
    BC_SYMMETRY: i32 = 3;
    BC_PERIODIC: i32 = 4;
    BC_OPENING: i32 = 5;
    /// Riemann solvers of `kernels/muscl_hancock.cu`.
    RS_EXACT: i64 = 0;
    RS_HLLC: i64 = 1;
    RS_ROE: i64 = 2;
    RS_ROE_NO_FIX: i64 = 3;
    RS_HLL: i64 = 4;
    RS_RUSANOV: i64 = 5;
    /// Compressible boundary kinds, two bits per side (left, right, bottom, top) in the `bcs`
    /// argument of `kernels/euler.cuh`.
    EBC_REFLECTIVE: i64 = 0;
    EBC_TRANSMISSIVE: i64 = 1;
    EBC_PERIODIC: i64 = 2;
    EBC_INFLOW: i64 = 3;

    // The compressible step clock (doubles, `kernels/euler.cuh`): first the slots the host
    // writes (`EK_HOST_LEN` of them) when its clock or cap changes, then those the device writes.
    /// The last step's dt.
    EK_DT: usize = 0;
    /// The time after the last step.
    EK_TIME: usize = 1;
    /// The steps taken.
    EK_STEPS: usize = 2;
    /// The host's cap on dt (`Solver::set_dt_cap`).
    EK_DT_CAP: usize = 3;
    /// Why the step was halted (`HALT_*`), 0 while stepping.
    EK_HALT: usize = 4;
    /// The end time steps land on and stop at (`Solver::advance_recorded`); infinity for none.
    EK_T_END: usize = 5;
    /// The wave rate the last step's dt came from.
    EK_STEP_RATE: usize = 6;
    /// The current state's step reduction: its largest wave rate, smallest density and pressure,
    /// and first inadmissible cell (`NO_BAD_CELL` if none).
    EK_RATE: usize = 7;
    EK_MIN_DENSITY: usize = 8;
    EK_MIN_PRESSURE: usize = 9;
    EK_BAD_CELL: usize = 10;
    /// The next step's dt (chosen on the device from the current state's reduction), by which
    /// the scheme's kernels step.
    EK_NEXT_DT: usize = 11;
    /// The records of the last `EK_HISTORY_STEPS` steps, from slot `EK_HISTORY` on: step `s`'s
    /// `EK_RECORD` doubles at `EK_HISTORY + EK_RECORD * (s % EK_HISTORY_STEPS)`, in the order
    /// `EK_REC_*` (its time, dt and wave rate; the new state's smallest density and pressure).
    EK_HISTORY: usize = 12;
    EK_HISTORY_STEPS: usize = 64;
    EK_RECORD: usize = 5;
    EK_REC_TIME: usize = 0;
    EK_REC_DT: usize = 1;
    EK_REC_STEP_RATE: usize = 2;
    EK_REC_MIN_DENSITY: usize = 3;
    EK_REC_MIN_PRESSURE: usize = 4;
    /// Slots the host writes, and doubles in the clock.
    EK_HOST_LEN: usize = 6;
    EK_LEN: usize = EK_HISTORY + EK_RECORD * EK_HISTORY_STEPS;
    /// Halt codes: the wave rate was not finite and positive; the state had an inadmissible cell;
    /// the end time was reached.
    HALT_WAVE_RATE: i64 = 1;
    HALT_BAD_CELL: i64 = 2;
    HALT_END_TIME: i64 = 3;

    /// Terms of 4 reals a CE/SE old point keeps in its half-step's shared tile
    /// (`kernels/cese.cu` `store_terms`), in 2D and in 1D.
    CESE_TERMS_2D: usize = 5;
    CESE_TERMS_1D: usize = 3;
    /// Threads of a CE/SE half-step's block in float and in double (`kernels/cese.cu`
    /// `CESE_THREADS`, `launches.rs` `StepBlock`): 32 x 8 or 256 in float, 32 x 4 or 128 in double.
    CESE_THREADS_F32: u32 = 256;
    CESE_THREADS_F64: u32 = 128;
    /// Whether the CE/SE half-steps' blocks overlap (1) or not (0), in float and in double
    /// (`kernels/cese.cu` `CESE_OVERLAP`, `launches.rs` `StepBlock`).
    CESE_OVERLAP_F32: u32 = 1;
    CESE_OVERLAP_F64: u32 = 0;

    /// Threads of the compressible solvers' blocks (`launches.rs` `B2`, `B1`): 32 x 8 for 2D
    /// grids, 256 for 1D. MUSCL-Hancock's kernels are compiled for these shapes
    /// (`kernels/muscl_hancock.cu`).
    EULER_BLOCK_X: u32 = 32;
    EULER_BLOCK_Y: u32 = 8;
    EULER_BLOCK_1D: u32 = 256;

    /// Threads per block of the shown field's kernels (`kernels/shown_field.cu`).
    SHOWN_BLOCK: u32 = 256;

    /// The first-bad-cell marker of the compressible step reduction (`kernels/euler.cuh`): no
    /// inadmissible cell.
    NO_BAD_CELL: i32 = i32::MAX;
}

/// `#define NAME value` for every constant of [`ALL`], one a line.
pub fn defines() -> String {
    let mut s = String::from("// Shared with the host: src/backend/cuda/slots.rs.\n");
    for (name, value) in ALL {
        s += &format!("#define {name} {value}\n");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::KernelSet;
    use super::*;

    /// Every shared constant is defined exactly once in every compilation unit (by the
    /// generated lines: no kernel file or header defines it again), and no name is listed
    /// twice.
    #[test]
    fn every_shared_constant_is_defined_once() {
        for (k, (name, _)) in ALL.iter().enumerate() {
            assert!(ALL[..k].iter().all(|(n, _)| n != name), "{name} is listed twice");
        }
        for set in KernelSet::ALL {
            let source = set.full_source();
            for (name, value) in ALL {
                let lines: Vec<&str> = source
                    .lines()
                    .filter(|l| {
                        let mut t = l.split_whitespace();
                        t.next() == Some("#define") && t.next() == Some(name)
                    })
                    .collect();
                assert_eq!(
                    lines,
                    [format!("#define {name} {value}")],
                    "{name} in {}",
                    set.file_name()
                );
            }
        }
    }
}
