//! The rotor's momentum sources on the device (`kernels/rotor_source.cu`): the CPU's tables
//! ([`RotorSource`]) uploaded once, the kernels bound to them and to the solver's velocity
//! once, and each step's loads, accelerations and totals made on the device with no host
//! copy; only the four totals reach the host, read with the step's scalars. On a part of a
//! grid cut over several GPUs the part's tables ([`RotorSource::part`]) are uploaded, and each
//! part's evaluations are gathered over NCCL between the loads and their spreading.

use super::super::rotor_source::{EVALUATION, PointOwners, RotorSetup, RotorSource};
use super::super::staggered::Layout;
use super::grid1;
use crate::backend::cuda::slots::ROTOR_THREADS;
use crate::backend::cuda::{Arg, Args, CudaError, DevBuf, Gpu, KernelSet, Launch, Module, Pinned};
use crate::solver::Grid;
use crate::solver::real::Real;
use crate::solver::rotor::{DiskLoads, Loading};
use std::sync::Arc;

/// Threads a block of the per-point and per-row kernels.
const BLOCK: u32 = 256;

/// A rotor on the device.
pub(crate) struct DeviceRotor<T> {
    pub(crate) setup: RotorSetup,
    /// The device's totals of the last step read.
    pub(crate) loads: DiskLoads,
    /// Per component, the accelerations (ghosted, as the velocity; zero off the disk).
    pub(crate) accel: Vec<DevBuf<T>>,
    /// The module, the tables, the forces and the shares, kept alive for the bound launches.
    _module: Module,
    _tables: Vec<DevBuf<u32>>,
    _reals: Vec<DevBuf<f64>>,
    /// The totals (thrust, torque, inflow times area, work) and their host copy.
    totals_d: DevBuf<f64>,
    totals_h: Pinned<f64>,
    disk_loads: Launch,
    /// On a part: its evaluations packed, gathered and put back in point order.
    gathered: Option<Gathered>,
    spread_sources: Vec<Launch>,
    disk_totals: Launch,
}

/// A part's evaluations on their way to every part ([`PointOwners`]): packed into `mine`,
/// gathered from all parts in part order into `all`, then put back in point order.
struct Gathered {
    mine: DevBuf<f64>,
    all: DevBuf<f64>,
    /// Values each part sends.
    values: Vec<usize>,
    pack: Launch,
    unpack: Launch,
    /// The pack's and unpack's point tables, kept alive for their launches.
    _tables: [DevBuf<u32>; 2],
}

/// The transport of a part's rotor: concatenates every part's `counts[r]` values (at the
/// device address `mine` on this part) into `all` in part order, on the compute stream.
pub(crate) type AllGather<'a> = &'a dyn Fn(u64, &[usize], &DevBuf<f64>) -> Result<(), CudaError>;

fn upload<X: Copy>(gpu: &Arc<Gpu>, v: &[X]) -> Result<DevBuf<X>, CudaError> {
    let b = gpu.alloc(v.len())?;
    if !v.is_empty() {
        gpu.upload(&b, v)?;
    }
    Ok(b)
}

impl<T: Real> DeviceRotor<T> {
    /// The rotor of `setup` on `grid` reading the velocity `vel`.
    pub(crate) fn new<const D: usize>(
        gpu: &Arc<Gpu>,
        setup: RotorSetup,
        grid: &Grid,
        l: &Layout<D>,
        vel: &[DevBuf<T>],
    ) -> Result<Self, CudaError> {
        Self::of_tables(gpu, RotorSource::new(setup, grid, l), l, vel)
    }

    /// The rotor of the tables `source` (on the host only until they are uploaded: the whole
    /// grid's, or a part's) on the layout `l` reading the velocity `vel`.
    pub(crate) fn of_tables<const D: usize>(
        gpu: &Arc<Gpu>,
        source: RotorSource<T>,
        l: &Layout<D>,
        vel: &[DevBuf<T>],
    ) -> Result<Self, CudaError> {
        let setup = source.setup;
        let module = gpu.module(KernelSet::RotorSource, T::NAME)?;
        let points = source.points.len();
        let geometry: Vec<f64> = source
            .points
            .iter()
            .flat_map(|p| [p.radius, p.area, p.e_psi[0], p.e_psi[1], p.e_psi[2]])
            .collect();
        let (mut tables, mut reals) = (Vec::new(), Vec::new());
        reals.push(upload(gpu, &geometry)?);
        let mut args = Args::new().i(points as i64).i(1 << D).p(&reals[0]);
        for c in 0..3 {
            match source.sampling.get(c) {
                Some(s) => {
                    tables.push(upload(gpu, &s.index)?);
                    reals.push(upload(gpu, &s.weight)?);
                    args = args
                        .p(tables.last().expect("pushed"))
                        .p(reals.last().expect("pushed"));
                }
                None => args = args.null().null(),
            }
        }
        let force: DevBuf<f64> = gpu.alloc_zeros(3 * points)?;
        let shares: DevBuf<f64> = gpu.alloc_zeros(4 * points)?;
        args = args.axes(vel.iter().map(|b| b.ptr)).p(&force).p(&shares);
        // SAFETY: the tables, forces, shares and totals are this rotor's (kept in it), sized for
        // its points; the velocity belongs to the solver that owns this rotor.
        let disk_loads =
            unsafe { Launch::new(module.function("disk_loads")?, grid1(points), (BLOCK, 1, 1), args)? };
        let gathered = match source.owners() {
            Some(owners) => Some(Gathered::new(gpu, &module, owners, &force, &shares)?),
            None => None,
        };
        let accel = (0..D)
            .map(|_| gpu.alloc_zeros::<T>(l.len()))
            .collect::<Result<Vec<_>, _>>()?;
        let mut spread_sources = Vec::with_capacity(D);
        for (c, s) in source.spreading.iter().enumerate() {
            let rows = s.rows.len();
            for t in [&s.rows, &s.start, &s.point] {
                tables.push(upload(gpu, t)?);
            }
            reals.push(upload(gpu, &s.weight)?);
            let n = tables.len();
            let a = Args::new()
                .i(rows as i64)
                .p(&tables[n - 3])
                .p(&tables[n - 2])
                .p(&tables[n - 1])
                .p(reals.last().expect("pushed"))
                .p(&force)
                .i(c as i64)
                .p(&accel[c]);
            // SAFETY: as above; `accel[c]` has the ghosted length the rows index. One warp a row.
            spread_sources.push(unsafe {
                Launch::new(
                    module.function("spread_sources")?,
                    // BLOCK / 32 rows a block (rows fit 32 bits: RotorSetup::from_spec).
                    ((rows as u32).div_ceil(BLOCK / 32).max(1), 1, 1),
                    (BLOCK, 1, 1),
                    a,
                )?
            });
        }
        let totals_d: DevBuf<f64> = gpu.alloc_zeros(4)?;
        let a = Args::new().i(points as i64).p(&shares).p(&totals_d);
        // SAFETY: as above.
        let disk_totals = unsafe {
            Launch::new(
                module.function("disk_totals")?,
                (1, 1, 1),
                (ROTOR_THREADS as u32, 1, 1),
                a,
            )?
        };
        reals.push(force);
        reals.push(shares);
        Ok(DeviceRotor {
            setup,
            loads: DiskLoads::default(),
            accel,
            _module: module,
            _tables: tables,
            _reals: reals,
            totals_h: gpu.pinned(4)?,
            totals_d,
            disk_loads,
            gathered,
            spread_sources,
            disk_totals,
        })
    }

    /// The rotor's parameters as `disk_loads` takes them after its bound arguments
    /// (`ROTOR_PARAMS`; a uniform disk's blade parameters are zeros the kernel does not read).
    fn parameters(&self) -> Vec<Arg> {
        let r = &self.setup.rotor;
        let (per_area, blades) = match r.loading {
            Loading::Uniform { thrust } => (thrust / r.area(), None),
            Loading::Blades(b) => (0.0, Some(b)),
        };
        let head = [r.axis[0], r.axis[1], r.axis[2], r.rho, per_area];
        let tail = blades.map_or([0.0; 12], |b| {
            let a = b.airfoil;
            [
                b.omega,
                r.root,
                r.radius,
                b.chord[0],
                b.chord[1],
                b.collective,
                b.twist,
                a.lift_slope,
                a.zero_lift_angle,
                a.drag[0],
                a.drag[1],
                a.drag[2],
            ]
        });
        let mut out: Vec<Arg> = head.into_iter().map(Arg::F64).collect();
        out.push(Arg::I32(blades.map_or(0, |b| b.count as i32)));
        out.extend(tail.into_iter().map(Arg::F64));
        out
    }

    /// Enqueues one step's loads, accelerations and totals from the velocity of the step's
    /// start; on a part, `all_gather` gathers the parts' evaluations (collective).
    pub(crate) fn enqueue(&self, gpu: &Gpu, all_gather: Option<AllGather>) -> Result<(), CudaError> {
        self.disk_loads.run_with(gpu, &self.parameters())?;
        match (&self.gathered, all_gather) {
            (Some(g), Some(all_gather)) => {
                g.pack.run(gpu)?;
                all_gather(g.mine.ptr, &g.values, &g.all)?;
                g.unpack.run(gpu)?;
            }
            (None, None) => {}
            _ => {
                return Err(CudaError(
                    "a rotor on a part gathers its loads from every part".into(),
                ));
            }
        }
        for s in &self.spread_sources {
            s.run(gpu)?;
        }
        self.disk_totals.run(gpu)
    }

    /// The accelerations' device pointers, one per component.
    pub(crate) fn accel_ptrs(&self) -> impl Iterator<Item = u64> + '_ {
        self.accel.iter().map(|b| b.ptr)
    }

    /// Enqueues the copy of the totals to the host; after the host waits for the stream,
    /// [`DeviceRotor::take_totals`] reads them.
    pub(crate) fn download(&mut self, gpu: &Gpu) -> Result<(), CudaError> {
        gpu.download_async(&mut self.totals_h, &self.totals_d, 4)
    }

    /// Takes the totals [`DeviceRotor::download`] copied as the rotor's loads.
    pub(crate) fn take_totals(&mut self) {
        let t = self.totals_h.as_slice();
        self.loads = self.setup.rotor.totals([t[0], t[1], t[2], t[3]]);
    }

    /// Makes `rotor` the device sources of `setup`: a new loading keeps the tables and the
    /// next launches take it; a new geometry builds them again with `build`; no setup, no
    /// sources.
    pub(crate) fn follow(
        rotor: &mut Option<Self>,
        setup: Option<RotorSetup>,
        build: impl FnOnce(RotorSetup) -> Result<Self, CudaError>,
    ) -> Result<(), CudaError> {
        *rotor = match (rotor.take(), setup) {
            (Some(mut r), Some(s)) if r.setup.same_geometry(&s) => {
                r.setup = s;
                Some(r)
            }
            (_, Some(s)) => Some(build(s)?),
            (_, None) => None,
        };
        Ok(())
    }
}

impl Gathered {
    /// The buffers and launches that move `owners`' evaluations between the disk's `force`
    /// and `shares` (point order) and the gathered layout.
    fn new(
        gpu: &Arc<Gpu>,
        module: &Module,
        owners: &PointOwners,
        force: &DevBuf<f64>,
        shares: &DevBuf<f64>,
    ) -> Result<Self, CudaError> {
        let (own, points) = (owners.evaluated.len(), owners.slot.len());
        let mine: DevBuf<f64> = gpu.alloc_zeros(own * EVALUATION)?;
        let all: DevBuf<f64> = gpu.alloc_zeros(points * EVALUATION)?;
        let tables = [upload(gpu, &owners.evaluated)?, upload(gpu, &owners.slot)?];
        let a = Args::new()
            .i(own as i64)
            .p(&tables[0])
            .p(force)
            .p(shares)
            .p(&mine);
        // SAFETY: the tables and buffers are kept in the rotor with the launch; `evaluated`
        // holds `own` point indices below the points of `force` and `shares`, and `mine` has
        // room for `own` evaluations.
        let pack =
            unsafe { Launch::new(module.function("pack_evaluations")?, grid1(own), (BLOCK, 1, 1), a)? };
        let a = Args::new()
            .i(points as i64)
            .p(&tables[1])
            .p(&all)
            .p(force)
            .p(shares);
        // SAFETY: as above; `slot` holds one slot a point, each below `points`.
        let unpack = unsafe {
            Launch::new(
                module.function("unpack_evaluations")?,
                grid1(points),
                (BLOCK, 1, 1),
                a,
            )?
        };
        Ok(Self {
            mine,
            all,
            values: owners.values.clone(),
            pack,
            unpack,
            _tables: tables,
        })
    }
}
