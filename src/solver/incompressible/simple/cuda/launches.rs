//! The device buffers of [`super::CudaSimple`] and its outer iteration's kernels, bound to them
//! once ([`Launches`], rebuilt when the configuration changes).

use super::*;

/// The device buffers of a [`CudaSimple`].
pub(super) struct Buffers {
    /// Ghosted staggered velocities, pressure, viscosities, momentum `d`, SIMPLER's
    /// pseudo-velocities (as [`Simple`]).
    pub(super) u: DevBuf<f64>,
    pub(super) v: DevBuf<f64>,
    pub(super) p: DevBuf<f64>,
    pub(super) mu_c: DevBuf<f64>,
    pub(super) mu_n: DevBuf<f64>,
    pub(super) du: DevBuf<f64>,
    pub(super) dv: DevBuf<f64>,
    pub(super) u_hat: DevBuf<f64>,
    pub(super) v_hat: DevBuf<f64>,
    /// Pressure correction, unknown vectors of u and v, pseudo-velocity scratch.
    pub(super) pc: DevBuf<f64>,
    pub(super) x: [DevBuf<f64>; 2],
    pub(super) hat: DevBuf<f64>,
    pub(super) sys: [DeviceSystem; 2],
    pub(super) sys_p: DeviceSystem,
    /// Block partial sums, and the scalar block (`S_*` of [`slots`]).
    pub(super) partial: DevBuf<f64>,
    pub(super) sc: Scalars<f64>,
}

impl Buffers {
    /// The velocity array of component `c` (u or v) and its pseudo-velocity array.
    pub(super) fn velocity(&self, c: usize) -> (&DevBuf<f64>, &DevBuf<f64>) {
        if c == 0 {
            (&self.u, &self.u_hat)
        } else {
            (&self.v, &self.v_hat)
        }
    }
}

/// The kernels of an outer iteration, bound to a solver's [`Buffers`] and configuration
/// (rebuilt when the configuration changes); per component `c` where in pairs.
pub(super) struct Launches {
    /// `simple_viscosity` and `simple_viscosity_ghosts` (non-Newtonian fluids only).
    pub(super) viscosity: Vec<Launch>,
    /// `momentum_assemble` and the sum of its norm partials into `S_NORM[c]`.
    pub(super) assemble: [[Launch; 2]; 2],
    /// `unknowns_copy` of the velocity into `x[c]`, of `x[c]` back, and of `hat` into the
    /// pseudo-velocity (SIMPLER).
    pub(super) to_x: [Launch; 2],
    pub(super) from_x: [Launch; 2],
    pub(super) from_hat: [Launch; 2],
    pub(super) hat_seams: Launch,
    /// `pressure_assemble` from the velocities (0) or the pseudo-velocities (1); then
    /// `mass_finalize` and `subtract_mean` of the right-hand side.
    pub(super) pressure: [Launch; 2],
    pub(super) mass: Launch,
    pub(super) rhs_mean: Launch,
    /// `p -= mean(p)`: `sum_partial`, `sum_into` `S_PSUM`, `finalize_mean`, `subtract_mean`.
    pub(super) remove_mean: [Launch; 4],
    pub(super) add_pressure: [Launch; 2],
    /// `outflow_faces` and `wall_rule`, where a side needs them.
    pub(super) outflow: Option<Launch>,
    pub(super) wall_rule: Option<Launch>,
    pub(super) correct: Launch,
    pub(super) max_abs: Launch,
}

impl Launches {
    pub(super) fn new(
        ms: &Module,
        mq: &Module,
        cfg: &SimpleConfig,
        l: &Layout<2>,
        b: &Buffers,
    ) -> Result<Self, CudaError> {
        type Shape = ((u32, u32, u32), (u32, u32, u32));
        let bind =
            |m: &Module, name: &'static str, (grid, block): Shape, a: Args| -> Result<Launch, CudaError> {
                // SAFETY: every call passes the arguments of the named kernel of kernels/simple.cu or
                // poisson.cu in order, with `b`'s buffers allocated for this grid; the solver owns
                // the buffers and the launches together.
                unsafe { m.bind(name, grid, block, a) }
            };
        let ks = |name, shape, a| bind(ms, name, shape, a);
        let one = ((1, 1, 1), (1024, 1, 1));
        let lin = |n: usize| (grid1(n), (B1, 1, 1));
        let (nx, ny) = (l.n[0], l.n[1]);
        let [dx, dy, _] = cfg.flow.grid.spacing;
        let sum_into = |nb: usize, slot: usize| {
            let a = Args::new().p(&b.partial).i(nb as i64).p(&b.sc.dev).i(slot as i64);
            ks("sum_into", one, a)
        };
        let model = match cfg.viscosity {
            Viscosity::Newtonian { .. } => None,
            Viscosity::PowerLaw { k, n } => Some((1, [k, n, 0.0, 0.0])),
            Viscosity::Carreau {
                mu0,
                mu_inf,
                lambda,
                n,
            } => Some((2, [mu0, mu_inf, lambda, n])),
        };
        let viscosity = match model {
            None => vec![],
            Some((model, m)) => {
                let a = Args::new()
                    .p(&b.u)
                    .p(&b.v)
                    .p(&b.mu_c)
                    .p(&b.mu_n)
                    .i(nx as i64)
                    .i(ny as i64)
                    .r(dx)
                    .r(dy)
                    .i(model)
                    .r(m[0])
                    .r(m[1])
                    .r(m[2])
                    .r(m[3]);
                let ghosts = layout(Args::new().p(&b.mu_c), l);
                vec![
                    ks("simple_viscosity", (grid2(nx + 1, ny + 1), (BX, BY, 1)), a)?,
                    ks(
                        "simple_viscosity_ghosts",
                        (grid2(nx + 2, ny + 2), (BX, BY, 1)),
                        ghosts,
                    )?,
                ]
            }
        };
        let lim = match cfg.scheme {
            super::super::Scheme::PowerLaw => -1,
            super::super::Scheme::Deferred(lim) => limiter_code(lim),
        };
        let assemble = |c: usize| -> Result<[Launch; 2], CudaError> {
            let (h_along, h_across) = if c == 0 { (dx, dy) } else { (dy, dx) };
            let (side_plus, side_minus) = if c == 0 { (3, 2) } else { (1, 0) };
            let tangential = |side: usize| {
                side_velocity(cfg.flow.side(side), Side::ALL[side]).map_or((0, 0.0), |v| (1, v[c]))
            };
            let ((tp, wp), (tm, wm)) = (tangential(side_plus), tangential(side_minus));
            let ap0 = cfg.flow.density * dx * dy / cfg.pseudo_dt;
            let b0 = -cfg.pressure_gradient[c] * h_along * h_across;
            let sys = &b.sys[c];
            let (q, o, d) = if c == 0 {
                (&b.u, &b.v, &b.du)
            } else {
                (&b.v, &b.u, &b.dv)
            };
            let a = Args::new()
                .p(q)
                .p(o)
                .p(&b.mu_c)
                .p(&b.mu_n)
                .p(&sys.buf)
                .p(d)
                .p(&b.partial)
                .i(c as i64);
            let a = layout(a, l)
                .i(sys.n[0] as i64)
                .i(sys.n[1] as i64)
                .i(lim)
                .i(tp)
                .r(wp)
                .i(tm)
                .r(wm)
                .r(h_along)
                .r(h_across)
                .r(cfg.flow.density)
                .r(cfg.alpha_u)
                .i(cfg.algorithm.consistent() as i64)
                .i(!cfg.viscosity.is_newtonian() as i64)
                .r(ap0)
                .r(b0);
            Ok([
                ks("momentum_assemble", lin(sys.len()), a)?,
                sum_into(grid1(sys.len()).0 as usize, S_NORM[c])?,
            ])
        };
        // `unknowns_copy` of component `c` between the ghosted array `q` and `x` (to `x` or back).
        let unknowns = |c: usize, q: &DevBuf<f64>, x: &DevBuf<f64>, to_x: bool| {
            let sys = &b.sys[c];
            let a = Args::new()
                .p(q)
                .p(x)
                .i(nx as i64)
                .i(sys.n[0] as i64)
                .i(sys.n[1] as i64)
                .i(to_x as i64);
            ks("unknowns_copy", lin(sys.len()), a)
        };
        let both = |f: &dyn Fn(usize) -> Result<Launch, CudaError>| -> Result<[Launch; 2], CudaError> {
            Ok([f(0)?, f(1)?])
        };
        let n = nx * ny;
        let nb = grid1(n).0 as usize;
        let rho = cfg.flow.density;
        let pressure = |u: &DevBuf<f64>, v: &DevBuf<f64>| {
            let a = Args::new()
                .p(&b.du)
                .p(&b.dv)
                .p(u)
                .p(v)
                .p(&b.sys_p.buf)
                .p(&b.partial);
            ks("pressure_assemble", lin(n), layout(a, l).r(rho * dy).r(rho * dx))
        };
        // The right-hand side of the pressure system: the sixth array of the system.
        let rhs = b.sys_p.buf.ptr + (5 * n * std::mem::size_of::<f64>()) as u64;
        let bc: [&Boundary; 4] = std::array::from_fn(|s| cfg.flow.side(s));
        let outflow = if bc.contains(&&Boundary::Outflow {}) {
            let mut a = Args::new().p(&b.u).p(&b.v).i(nx as i64).i(ny as i64);
            for side in bc {
                a = a.i((*side == Boundary::Outflow {}) as i64);
            }
            for side in bc {
                a = a.i((*side == Boundary::Periodic {}) as i64);
            }
            Some(ks("outflow_faces", one, a.r(dx).r(dy))?)
        } else {
            None
        };
        let wall =
            |side: usize| side_velocity(bc[side], Side::ALL[side]).map(|v| v[if side < 2 { 1 } else { 0 }]);
        let walls: [Option<f64>; 4] = std::array::from_fn(wall);
        let wall_rule = if walls.iter().any(Option::is_some) {
            let mut a = Args::new().p(&b.u).p(&b.v).i(nx as i64).i(ny as i64);
            for w in walls {
                a = a.i(w.is_some() as i64);
            }
            for w in walls {
                a = a.r(w.unwrap_or(0.0));
            }
            Some(ks("wall_rule", lin(nx.max(ny) + 1), a)?)
        } else {
            None
        };
        let alpha_p = if cfg.algorithm.pseudo_velocities() {
            0.0
        } else {
            cfg.alpha_p
        };
        Ok(Launches {
            viscosity,
            assemble: [assemble(0)?, assemble(1)?],
            to_x: both(&|c| unknowns(c, b.velocity(c).0, &b.x[c], true))?,
            from_x: both(&|c| unknowns(c, b.velocity(c).0, &b.x[c], false))?,
            from_hat: both(&|c| unknowns(c, b.velocity(c).1, &b.hat, false))?,
            hat_seams: ks(
                "hat_seams",
                lin(nx.max(ny) + 1),
                layout(Args::new().p(&b.u_hat).p(&b.v_hat), l),
            )?,
            pressure: [pressure(&b.u, &b.v)?, pressure(&b.u_hat, &b.v_hat)?],
            mass: ks(
                "mass_finalize",
                one,
                Args::new().p(&b.partial).i(nb as i64).p(&b.sc.dev).r(n as f64),
            )?,
            rhs_mean: bind(
                mq,
                "subtract_mean",
                lin(n),
                Args::new().arg(Arg::Ptr(rhs)).p(&b.sc.dev).null().i(n as i64),
            )?,
            remove_mean: [
                bind(
                    mq,
                    "sum_partial",
                    lin(n),
                    Args::new().p(&b.p).p(&b.partial).null().i(n as i64),
                )?,
                sum_into(nb, S_PSUM)?,
                bind(
                    mq,
                    "finalize_mean",
                    one,
                    Args::new()
                        .p(&b.partial)
                        .i(nb as i64)
                        .p(&b.sc.dev)
                        .null()
                        .r(n as f64),
                )?,
                bind(
                    mq,
                    "subtract_mean",
                    lin(n),
                    Args::new().p(&b.p).p(&b.sc.dev).null().i(n as i64),
                )?,
            ],
            add_pressure: both(&|c| {
                let sys = &b.sys[c];
                let a = Args::new()
                    .p(&b.p)
                    .p(&sys.buf)
                    .i(c as i64)
                    .i(nx as i64)
                    .i(ny as i64)
                    .i(sys.n[0] as i64)
                    .i(sys.n[1] as i64)
                    .r(if c == 0 { dy } else { dx });
                ks("add_pressure", lin(sys.len()), a)
            })?,
            outflow,
            wall_rule,
            correct: ks(
                "correct_velocity",
                (grid2(nx, ny), (BX, BY, 1)),
                Args::new()
                    .p(&b.du)
                    .p(&b.dv)
                    .p(&b.pc)
                    .p(&b.u)
                    .p(&b.v)
                    .p(&b.p)
                    .r(alpha_p)
                    .i(nx as i64)
                    .i(ny as i64),
            )?,
            max_abs: ks(
                "max_abs",
                one,
                layout(Args::new().p(&b.u).p(&b.v).p(&b.sc.dev), l),
            )?,
        })
    }
}
