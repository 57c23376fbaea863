//! The device buffers of [`super::CudaSimple`] and its outer iteration's kernels, bound to them
//! once ([`Launches`], rebuilt when the configuration changes).

use super::*;
use crate::solver::incompressible::cuda::rotor::DeviceRotor;

/// The device buffers of a [`CudaSimple`] (one per velocity component where in a `Vec`).
pub(super) struct Buffers {
    /// Ghosted staggered velocity components, pressure, cell and edge viscosities, momentum
    /// `d`, SIMPLER's pseudo-velocities (as [`Simple`]).
    pub(super) vel: Vec<DevBuf<f64>>,
    pub(super) p: DevBuf<f64>,
    pub(super) mu_c: DevBuf<f64>,
    pub(super) mu_e: Vec<DevBuf<f64>>,
    pub(super) d: Vec<DevBuf<f64>>,
    pub(super) hat: Vec<DevBuf<f64>>,
    /// Pressure correction, unknown vectors of the components, pseudo-velocity scratch.
    pub(super) pc: DevBuf<f64>,
    pub(super) x: Vec<DevBuf<f64>>,
    pub(super) hat_x: DevBuf<f64>,
    pub(super) sys: Vec<DeviceSystem>,
    pub(super) sys_p: DeviceSystem,
    /// Block partial sums, and the scalar block (`S_*` of [`slots`]).
    pub(super) partial: DevBuf<f64>,
    pub(super) sc: Scalars<f64>,
    /// The rotor's sources on the device (`[rotor]`).
    pub(super) rotor: Option<DeviceRotor<f64>>,
}

/// `a` followed by three device arrays (the third, or the last two, null where absent).
fn three(a: Args, bufs: &[DevBuf<f64>]) -> Args {
    a.axes(bufs.iter().map(|b| b.ptr))
}

/// The kernels of an outer iteration, bound to a solver's [`Buffers`] and configuration
/// (rebuilt when the configuration changes); per component `c` where in a `Vec`.
pub(super) struct Launches {
    /// `simple_viscosity`, `simple_viscosity_edges` per pair of axes and
    /// `simple_viscosity_ghosts` (non-Newtonian fluids only).
    pub(super) viscosity: Vec<Launch>,
    /// `momentum_assemble` and the sum of its norm partials into the component's norm slot.
    pub(super) assemble: Vec<[Launch; 2]>,
    /// `unknowns_copy` of the velocity into `x[c]`, of `x[c]` back, and of `hat_x` into the
    /// pseudo-velocity (SIMPLER), and the pseudo-velocity's periodic seam.
    pub(super) to_x: Vec<Launch>,
    pub(super) from_x: Vec<Launch>,
    pub(super) from_hat: Vec<Launch>,
    pub(super) hat_seams: Vec<Launch>,
    /// `pressure_assemble` from the velocities (0) or the pseudo-velocities (1); then
    /// `mass_finalize` and `subtract_mean` of the right-hand side.
    pub(super) pressure: [Launch; 2],
    pub(super) mass: Launch,
    pub(super) rhs_mean: Launch,
    /// `p -= mean(p)`: `sum_partial`, `sum_into` `S_PSUM`, `finalize_mean`, `subtract_mean`.
    pub(super) remove_mean: [Launch; 4],
    pub(super) add_pressure: Vec<Launch>,
    /// `outflow_faces` (where a side is an outflow) and `wall_rule` per wall side and
    /// tangential component.
    pub(super) outflow: Option<Launch>,
    pub(super) wall_rule: Vec<Launch>,
    pub(super) correct: Launch,
    /// `max_abs_partial` (block maxima over the ghosted nodes) and `max_abs` into `S_VMAX`.
    pub(super) max_abs: [Launch; 2],
}

impl Launches {
    pub(super) fn new<const D: usize>(
        simple_kernels: &Module,
        poisson_kernels: &Module,
        cfg: &SimpleConfig,
        l: &Layout<D>,
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
        let bind_simple = |name, shape, a| bind(simple_kernels, name, shape, a);
        let one = ((1, 1, 1), (1024, 1, 1));
        let lin = |n: usize| (grid1(n), (B1, 1, 1));
        let h: [f64; D] = std::array::from_fn(|a| cfg.flow.grid.spacing[a]);
        let h3 = cfg.flow.grid.spacing;
        let spacing = |a: Args| a.r(h3[0]).r(h3[1]).r(h3[2]);
        let cells: usize = l.n.iter().product();
        let ghosted = l.len();
        let sum_into = |nb: usize, slot: usize| {
            let a = Args::new().p(&b.partial).i(nb as i64).p(&b.sc.dev).i(slot as i64);
            bind_simple("sum_into", one, a)
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
        let mut viscosity = Vec::new();
        if let Some((model, m)) = model {
            let params = |a: Args| spacing(a).i(model).r(m[0]).r(m[1]).r(m[2]).r(m[3]);
            let a = params(layout(three(Args::new(), &b.vel).p(&b.mu_c), l));
            viscosity.push(bind_simple("simple_viscosity", lin(cells), a)?);
            for c in 0..D {
                for e in c + 1..D {
                    let mut n = l.n;
                    (n[c], n[e]) = (n[c] + 1, n[e] + 1);
                    let a = three(Args::new(), &b.vel)
                        .p(&b.mu_e[coefficients::edge(c, e)])
                        .i(c as i64)
                        .i(e as i64);
                    viscosity.push(bind_simple(
                        "simple_viscosity_edges",
                        lin(n.iter().product()),
                        params(layout(a, l)),
                    )?);
                }
            }
            viscosity.push(bind_simple(
                "simple_viscosity_ghosts",
                lin(ghosted),
                layout(Args::new().p(&b.mu_c), l),
            )?);
        }
        let lim = match cfg.scheme {
            super::super::Scheme::PowerLaw => -1,
            super::super::Scheme::Deferred(lim) => limiter_code(lim),
        };
        let assemble = |c: usize| -> Result<[Launch; 2], CudaError> {
            // Each side's tangential condition for component c (imposed, value), side 2 axis + s.
            let sides: [(i64, f64); 6] = std::array::from_fn(|s| match s / 2 < D {
                true => side_velocity(cfg.flow.side(s), Side::ALL[s]).map_or((0, 0.0), |v| (1, v[c])),
                false => (0, 0.0),
            });
            let ap0 = h.iter().fold(cfg.flow.density, |m, h| m * h) / cfg.pseudo_dt;
            let b0 = -cfg.pressure_gradient[c] * h[c] * coefficients::face_area(h, c);
            let sys = &b.sys[c];
            let a = three(three(Args::new(), &b.vel).p(&b.mu_c), &b.mu_e);
            let a = a.p(&sys.buf).p(&b.d[c]).p(&b.partial).i(c as i64);
            let a = spacing(layout(a, l)).i(lim);
            let a = sides.iter().fold(a, |a, s| a.i(s.0));
            let a = sides
                .iter()
                .fold(a, |a, s| a.r(s.1))
                .r(cfg.flow.density)
                .r(cfg.alpha_u)
                .i(cfg.algorithm.consistent() as i64)
                .i(!cfg.viscosity.is_newtonian() as i64)
                .r(ap0)
                .r(b0);
            let a = match &b.rotor {
                Some(r) => a.p(&r.accel[c]),
                None => a.null(),
            };
            let a = a.r(h[c] * coefficients::face_area(h, c));
            Ok([
                bind_simple("momentum_assemble", lin(sys.len()), a)?,
                sum_into(grid1(sys.len()).0 as usize, S_NORM[c])?,
            ])
        };
        // `unknowns_copy` of component `c` between the ghosted array `q` and `x` (to `x` or back).
        let unknowns = |c: usize, q: &DevBuf<f64>, x: &DevBuf<f64>, to_x: bool| {
            let a = layout(Args::new().p(q).p(x).i(c as i64), l).i(to_x as i64);
            bind_simple("unknowns_copy", lin(b.sys[c].len()), a)
        };
        let each =
            |f: &dyn Fn(usize) -> Result<Launch, CudaError>| (0..D).map(f).collect::<Result<Vec<_>, _>>();
        let nb = grid1(cells).0 as usize;
        let rho = cfg.flow.density;
        let pressure = |q: &[DevBuf<f64>]| {
            let a = three(three(Args::new(), &b.d), q).p(&b.sys_p.buf).p(&b.partial);
            let areas: [f64; 3] = std::array::from_fn(|a| {
                if a < D {
                    rho * coefficients::face_area(h, a)
                } else {
                    0.0
                }
            });
            bind_simple(
                "pressure_assemble",
                lin(cells),
                layout(a, l).r(areas[0]).r(areas[1]).r(areas[2]),
            )
        };
        // The right-hand side of the pressure system: its last array.
        let rhs = b.sys_p.buf.ptr + ((1 + 2 * D) * cells * std::mem::size_of::<f64>()) as u64;
        let bc = &cfg.flow.bc;
        let mask = |f: &dyn Fn(&Boundary) -> bool| {
            (0..2 * D)
                .filter(|&s| f(&bc[s / 2][s % 2]))
                .fold(0i64, |m, s| m | 1 << s)
        };
        let out_mask = mask(&|b| *b == Boundary::Outflow {});
        let outflow = if out_mask != 0 {
            let areas: [f64; 3] =
                std::array::from_fn(|a| if a < D { coefficients::face_area(h, a) } else { 0.0 });
            let a = layout(three(Args::new(), &b.vel), l)
                .i(out_mask)
                .i(mask(&|b| *b == Boundary::Periodic {}))
                .r(areas[0])
                .r(areas[1])
                .r(areas[2]);
            Some(bind_simple("outflow_faces", one, a)?)
        } else {
            None
        };
        let mut wall_rule = Vec::new();
        for a in 0..D {
            for s in 0..2 {
                let Some(wall) = side_velocity(&bc[a][s], side(a, s)) else {
                    continue;
                };
                for c in (0..D).filter(|&c| c != a) {
                    let mut n = l.n;
                    (n[c], n[a]) = (n[c] + 1, 1);
                    let args = Args::new()
                        .p(&b.vel[c])
                        .i(c as i64)
                        .i(a as i64)
                        .i(s as i64)
                        .r(wall[c]);
                    wall_rule.push(bind_simple(
                        "wall_rule",
                        lin(n.iter().product()),
                        layout(args, l),
                    )?);
                }
            }
        }
        let alpha_p = if cfg.algorithm.pseudo_velocities() {
            0.0
        } else {
            cfg.alpha_p
        };
        let seam = |c: usize| {
            let mut n = l.n;
            n[c] = 1;
            bind_simple(
                "hat_seams",
                lin(n.iter().product()),
                layout(Args::new().p(&b.hat[c]).i(c as i64), l),
            )
        };
        Ok(Launches {
            viscosity,
            assemble: (0..D).map(assemble).collect::<Result<_, _>>()?,
            to_x: each(&|c| unknowns(c, &b.vel[c], &b.x[c], true))?,
            from_x: each(&|c| unknowns(c, &b.vel[c], &b.x[c], false))?,
            from_hat: each(&|c| unknowns(c, &b.hat[c], &b.hat_x, false))?,
            hat_seams: each(&seam)?,
            pressure: [pressure(&b.vel)?, pressure(&b.hat)?],
            mass: bind_simple(
                "mass_finalize",
                one,
                Args::new()
                    .p(&b.partial)
                    .i(nb as i64)
                    .p(&b.sc.dev)
                    .r(cells as f64),
            )?,
            rhs_mean: bind(
                poisson_kernels,
                "subtract_mean",
                lin(cells),
                Args::new()
                    .arg(Arg::Ptr(rhs))
                    .p(&b.sc.dev)
                    .null()
                    .null()
                    .i(cells as i64),
            )?,
            remove_mean: [
                bind(
                    poisson_kernels,
                    "sum_partial",
                    lin(cells),
                    Args::new().p(&b.p).p(&b.partial).null().i(cells as i64),
                )?,
                sum_into(nb, S_PSUM)?,
                bind(
                    poisson_kernels,
                    "finalize_mean",
                    one,
                    Args::new()
                        .p(&b.partial)
                        .i(nb as i64)
                        .p(&b.sc.dev)
                        .null()
                        .r(cells as f64),
                )?,
                bind(
                    poisson_kernels,
                    "subtract_mean",
                    lin(cells),
                    Args::new().p(&b.p).p(&b.sc.dev).null().null().i(cells as i64),
                )?,
            ],
            add_pressure: each(&|c| {
                let sys = &b.sys[c];
                let a =
                    layout(Args::new().p(&b.p).p(&sys.buf).i(c as i64), l).r(coefficients::face_area(h, c));
                bind_simple("add_pressure", lin(sys.len()), a)
            })?,
            outflow,
            wall_rule,
            correct: bind_simple(
                "correct_velocity",
                lin(cells),
                layout(
                    three(three(Args::new(), &b.d).p(&b.pc), &b.vel)
                        .p(&b.p)
                        .r(alpha_p),
                    l,
                ),
            )?,
            max_abs: [
                bind_simple(
                    "max_abs_partial",
                    lin(ghosted),
                    layout(three(Args::new(), &b.vel).p(&b.partial), l),
                )?,
                bind_simple(
                    "max_abs",
                    one,
                    Args::new().p(&b.partial).i(grid1(ghosted).0 as i64).p(&b.sc.dev),
                )?,
            ],
        })
    }
}
