//! Complete solver states: what a checkpoint file, the app's saved state and its rewind ring
//! hold, so that a run restored from one continues bit for bit as the uninterrupted run would.
//!
//! A [`Snapshot`] is the solver's identity (family, method, precision, grid), its clock (time,
//! step count, last step size) and every array and scalar the following steps read: the
//! velocities and pressure (also the iterative pressure solvers' starting guess), multi-step
//! history (AB2's `H^{n-1}` and its flag, CE/SE's gradients), never scratch that a step
//! overwrites before reading. Arrays keep the solver's precision and its storage layout
//! (ghost layers included); the CPU and CUDA solvers of a family store the same names in the
//! same layout, so a state saved on one backend restores on the other.
//!
//! Checkpoint files ([`write_checkpoint`], [`read_checkpoint`]) hold the case text next to the
//! snapshot: the magic line `FLOWLAB-CHECKPOINT 1`, the length of a JSON header (u64, little
//! endian), the header (case text, identity, clock, scalars, array names, types and lengths, an
//! FNV-1a checksum of the data; serde_json's `float_roundtrip` keeps its numbers exact) and the
//! arrays' raw little-endian values. Files are written to
//! a temporary name and renamed, so a checkpoint on disk is always whole.

use super::{Solver, SolverInfo};
use crate::case::Invalid;
use crate::solver::real::Real;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::path::Path;

/// One array of a state, in the solver's precision.
#[derive(Clone, Debug, PartialEq)]
pub enum Array {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl Array {
    fn len(&self) -> usize {
        match self {
            Array::F32(v) => v.len(),
            Array::F64(v) => v.len(),
        }
    }

    fn dtype(&self) -> &'static str {
        match self {
            Array::F32(_) => "f32",
            Array::F64(_) => "f64",
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Array::F32(v) => bytemuck::cast_slice(v),
            Array::F64(v) => bytemuck::cast_slice(v),
        }
    }
}

/// A solver's complete state (see the module documentation).
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// `Solver::info().method`, `.precision`, `.grid.n` of the solver it came from.
    pub method: String,
    pub precision: String,
    pub n: [usize; 3],
    pub time: f64,
    pub steps: u64,
    /// Size of the last step (multi-step methods weight their history with it).
    pub dt: f64,
    pub scalars: Vec<(String, f64)>,
    pub arrays: Vec<(String, Array)>,
}

impl Snapshot {
    /// An empty state of the solver described by `info` at its clock.
    pub fn new(info: &SolverInfo, time: f64, steps: u64, dt: f64) -> Snapshot {
        Snapshot {
            method: info.method.to_string(),
            precision: info.precision.to_string(),
            n: info.grid.n,
            time,
            steps,
            dt,
            scalars: Vec::new(),
            arrays: Vec::new(),
        }
    }

    /// Adds (or replaces) an array in the precision `T`.
    pub fn put<T: Real>(&mut self, name: &str, values: &[T]) {
        let a = if size_of::<T>() == 4 {
            Array::F32(bytemuck::cast_slice(values).to_vec())
        } else {
            Array::F64(bytemuck::cast_slice(values).to_vec())
        };
        match self.arrays.iter_mut().find(|(n, _)| n == name) {
            Some(entry) => entry.1 = a,
            None => self.arrays.push((name.to_string(), a)),
        }
    }

    pub fn put_scalar(&mut self, name: &str, value: f64) {
        self.scalars.push((name.to_string(), value));
    }

    /// Copies array `name` into `out`, which must have its length and precision.
    pub fn take<T: Real>(&self, name: &str, out: &mut [T]) -> Result<(), Invalid> {
        let a = self.array(name)?;
        if a.dtype() != T::NAME || a.len() != out.len() {
            return Err(Invalid::new(
                "restart",
                format!(
                    "the saved array `{name}` holds {} {} values; this solver needs {} {} values",
                    a.len(),
                    a.dtype(),
                    out.len(),
                    T::NAME
                ),
            ));
        }
        out.copy_from_slice(bytemuck::cast_slice(a.bytes()));
        Ok(())
    }

    /// Array `name` as `T` values (length unchecked: for a solver that sizes its buffers itself).
    pub fn values<T: Real>(&self, name: &str) -> Result<Vec<T>, Invalid> {
        let mut out = vec![T::zero(); self.array(name)?.len()];
        self.take(name, &mut out)?;
        Ok(out)
    }

    fn array(&self, name: &str) -> Result<&Array, Invalid> {
        self.arrays
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, a)| a)
            .ok_or_else(|| Invalid::new("restart", format!("the saved state has no array `{name}`")))
    }

    pub fn scalar(&self, name: &str) -> Result<f64, Invalid> {
        self.scalars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| Invalid::new("restart", format!("the saved state has no value `{name}`")))
    }

    /// Whether `info` describes a solver this state can be restored into: the same method,
    /// precision and grid (the backend may differ).
    pub fn check(&self, info: &SolverInfo) -> Result<(), Invalid> {
        let what = |m: &str, p: &str, n: [usize; 3]| format!("{m} in {p} on {}x{}x{}", n[0], n[1], n[2]);
        if self.method != info.method || self.precision != info.precision || self.n != info.grid.n {
            return Err(Invalid::new(
                "restart",
                format!(
                    "the saved state is {}, this case is {}; restart with the case the state was saved from",
                    what(&self.method, &self.precision, self.n),
                    what(info.method, info.precision, info.grid.n)
                ),
            ));
        }
        Ok(())
    }

    /// Bytes the arrays hold (what a ring of snapshots costs).
    pub fn bytes(&self) -> usize {
        self.arrays.iter().map(|(_, a)| a.bytes().len()).sum()
    }
}

/// The JSON header of a checkpoint file.
#[derive(Serialize, Deserialize)]
struct Header {
    version: u32,
    case: String,
    method: String,
    precision: String,
    n: [usize; 3],
    time: f64,
    steps: u64,
    dt: f64,
    scalars: Vec<(String, f64)>,
    /// `(name, dtype, length)` in the order the data follows.
    arrays: Vec<(String, String, usize)>,
    /// FNV-1a (64 bit) of the data section.
    checksum: u64,
}

const MAGIC: &[u8] = b"FLOWLAB-CHECKPOINT 1\n";
/// Largest header a reader accepts (the case text and a few names).
const MAX_HEADER: u64 = 16 << 20;

fn fnv1a(hash: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(hash, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}
const FNV_START: u64 = 0xcbf2_9ce4_8422_2325;

/// Writes `case_text` and `state` to `path` atomically (a temporary file in the same folder,
/// flushed to disk, then renamed over `path`).
pub fn write_checkpoint(path: &Path, case_text: &str, state: &Snapshot) -> std::io::Result<()> {
    let checksum = state
        .arrays
        .iter()
        .fold(FNV_START, |h, (_, a)| fnv1a(h, a.bytes()));
    let header = Header {
        version: 1,
        case: case_text.to_string(),
        method: state.method.clone(),
        precision: state.precision.clone(),
        n: state.n,
        time: state.time,
        steps: state.steps,
        dt: state.dt,
        scalars: state.scalars.clone(),
        arrays: state
            .arrays
            .iter()
            .map(|(n, a)| (n.clone(), a.dtype().to_string(), a.len()))
            .collect(),
        checksum,
    };
    let json = serde_json::to_vec(&header).map_err(std::io::Error::other)?;
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".partial");
    let tmp = path.with_file_name(tmp_name);
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
        f.write_all(MAGIC)?;
        f.write_all(&(json.len() as u64).to_le_bytes())?;
        f.write_all(&json)?;
        for (_, a) in &state.arrays {
            f.write_all(a.bytes())?;
        }
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// Reads a checkpoint: the case text and the state. Every length is checked against the file's
/// size before anything is allocated; a truncated or altered file is an error naming it.
pub fn read_checkpoint(path: &Path) -> Result<(String, Snapshot), String> {
    let bad = |why: String| format!("{}: not a usable FlowLab checkpoint: {why}", path.display());
    let mut f = std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let size = f
        .metadata()
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .len();
    let mut magic = vec![0u8; MAGIC.len()];
    f.read_exact(&mut magic)
        .ok()
        .filter(|_| magic == MAGIC)
        .ok_or_else(|| bad("it does not start with `FLOWLAB-CHECKPOINT 1`".into()))?;
    let mut len = [0u8; 8];
    f.read_exact(&mut len).map_err(|e| bad(e.to_string()))?;
    let header_len = u64::from_le_bytes(len);
    let data_start = MAGIC.len() as u64 + 8;
    if header_len > MAX_HEADER || data_start + header_len > size {
        return Err(bad(format!(
            "its header length {header_len} does not fit the file"
        )));
    }
    let mut json = vec![0u8; header_len as usize];
    f.read_exact(&mut json).map_err(|e| bad(e.to_string()))?;
    let h: Header = serde_json::from_slice(&json).map_err(|e| bad(format!("header: {e}")))?;
    if h.version != 1 {
        return Err(bad(format!(
            "version {} (this FlowLab reads version 1)",
            h.version
        )));
    }
    let mut data_bytes: u64 = 0;
    for (name, dtype, n) in &h.arrays {
        let width = match dtype.as_str() {
            "f32" => 4u64,
            "f64" => 8,
            _ => return Err(bad(format!("array `{name}` has the unknown type `{dtype}`"))),
        };
        data_bytes = (*n as u64)
            .checked_mul(width)
            .and_then(|b| data_bytes.checked_add(b))
            .ok_or_else(|| bad(format!("array `{name}` is too large")))?;
    }
    if data_start + header_len + data_bytes != size {
        return Err(bad(format!(
            "the header announces {data_bytes} bytes of data, the file holds {}",
            size.saturating_sub(data_start + header_len)
        )));
    }
    let mut hash = FNV_START;
    let mut arrays = Vec::with_capacity(h.arrays.len());
    let mut reader = std::io::BufReader::new(f);
    for (name, dtype, n) in &h.arrays {
        let array = if dtype == "f32" {
            let mut v = vec![0f32; *n];
            reader
                .read_exact(bytemuck::cast_slice_mut(&mut v))
                .map_err(|e| bad(e.to_string()))?;
            Array::F32(v)
        } else {
            let mut v = vec![0f64; *n];
            reader
                .read_exact(bytemuck::cast_slice_mut(&mut v))
                .map_err(|e| bad(e.to_string()))?;
            Array::F64(v)
        };
        hash = fnv1a(hash, array.bytes());
        arrays.push((name.clone(), array));
    }
    if hash != h.checksum {
        return Err(bad(
            "its data do not match their checksum (the file was altered or damaged)".into(),
        ));
    }
    Ok((
        h.case,
        Snapshot {
            method: h.method,
            precision: h.precision,
            n: h.n,
            time: h.time,
            steps: h.steps,
            dt: h.dt,
            scalars: h.scalars,
            arrays,
        },
    ))
}

/// A bounded ring of snapshots taken while a run goes on (the app's rewind): the oldest are
/// dropped once the ring's arrays would exceed `budget` bytes.
#[derive(Debug, Default)]
pub struct Ring {
    snapshots: std::collections::VecDeque<Snapshot>,
    bytes: usize,
    budget: usize,
    /// The size of a state that was larger than the budget: no state of this run is taken
    /// again while the budget stays below it (a 256^3 state is half a gigabyte read from the
    /// device; taking and dropping one every frame cost the 3D cavity 99 % of its throughput).
    refused: Option<usize>,
}

impl Ring {
    pub fn new(budget: usize) -> Ring {
        Ring {
            budget,
            ..Ring::default()
        }
    }

    /// Takes `solver`'s state in; returns false (and keeps nothing) when one state alone is
    /// larger than the budget or the solver cannot provide it. Once a state was too large, no
    /// state is taken until the budget grows past it or the ring is cleared ([`Ring::refused`]).
    pub fn push(&mut self, solver: &dyn Solver) -> bool {
        if self.refused.is_some_and(|r| r > self.budget) {
            return false;
        }
        let Ok(s) = solver.snapshot() else {
            return false;
        };
        let b = s.bytes();
        if b > self.budget {
            self.refused = Some(b);
            return false;
        }
        self.refused = None;
        while self.bytes + b > self.budget {
            let old = self
                .snapshots
                .pop_front()
                .expect("bytes > 0 means a snapshot is held");
            self.bytes -= old.bytes();
        }
        self.bytes += b;
        self.snapshots.push_back(s);
        true
    }

    /// Largest number of bytes held.
    pub fn budget(&self) -> usize {
        self.budget
    }

    /// Changes the budget, dropping the oldest snapshots that no longer fit.
    pub fn set_budget(&mut self, budget: usize) {
        self.budget = budget;
        while self.bytes > budget {
            let old = self
                .snapshots
                .pop_front()
                .expect("bytes > 0 means a snapshot is held");
            self.bytes -= old.bytes();
        }
    }

    /// Drops the snapshots after the `k`-th (the future of a rewound run).
    pub fn truncate(&mut self, k: usize) {
        while self.snapshots.len() > k + 1 {
            let s = self.snapshots.pop_back().expect("len > k + 1");
            self.bytes -= s.bytes();
        }
    }

    /// Forgets every state, and any state found too large (a new run, grid or method).
    pub fn clear(&mut self) {
        self.snapshots.clear();
        self.bytes = 0;
        self.refused = None;
    }

    /// The size of a state of this run found larger than the budget, while the budget stays
    /// below it.
    pub fn refused(&self) -> Option<usize> {
        self.refused.filter(|r| *r > self.budget)
    }

    pub fn get(&self, k: usize) -> Option<&Snapshot> {
        self.snapshots.get(k)
    }

    pub fn len(&self) -> usize {
        self.snapshots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.snapshots.is_empty()
    }

    /// Bytes held now.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The simulated time span held, `(first, last)`.
    pub fn span(&self) -> Option<(f64, f64)> {
        Some((self.snapshots.front()?.time, self.snapshots.back()?.time))
    }
}
