//! NCCL between the GPUs of a decomposed run (cudarc's `nccl` feature; `libnccl.so` loaded at
//! run time like the driver): one communicator over the parts, one GPU per part, its unique id
//! made on the first part and carried to the others by the host transport
//! ([`crate::parallel::Communicator`], MPI). Every call is enqueued on one of the part's streams
//! (the compute stream, or the exchange stream, which the caller orders against it with events),
//! so the host does not wait.
//! Every part enqueues the same calls in the same order.
//!
//! NVLink multicast (NVLS) is never asked for: `NCCL_NVLS_ENABLE=0` is set before the first
//! communicator unless the environment sets it.

use super::{CudaError, DevBuf, Gpu, Stream};
use crate::parallel::Communicator;
use crate::solver::real::Real;
use cudarc::nccl::result as nccl;
use cudarc::nccl::sys;
use std::ffi::c_void;
use std::sync::Arc;

/// Whether the NCCL library can be loaded (`libnccl.so` on `LD_LIBRARY_PATH` or the system
/// paths; cudarc panics on a missing library otherwise).
pub fn available() -> bool {
    // SAFETY: only tries to dlopen the library under cudarc's candidate names.
    unsafe { sys::is_culib_present() }
}

impl From<nccl::NcclError> for CudaError {
    fn from(e: nccl::NcclError) -> Self {
        CudaError(format!("NCCL error {:?}", e.0))
    }
}

/// One part's NCCL communicator on its GPU.
pub struct Nccl {
    comm: sys::ncclComm_t,
    gpu: Arc<Gpu>,
    rank: usize,
    size: usize,
}

// SAFETY: a communicator may be used from any thread, one at a time (the solver owning it is
// used by one thread at a time).
unsafe impl Send for Nccl {}
unsafe impl Sync for Nccl {}

fn data_type<T: Real>() -> sys::ncclDataType_t {
    if std::mem::size_of::<T>() == 4 {
        sys::ncclDataType_t::ncclFloat32
    } else {
        sys::ncclDataType_t::ncclFloat64
    }
}

impl Nccl {
    /// The communicator of `host`'s parts, this one on `gpu` (collective over `host`).
    pub fn new(gpu: Arc<Gpu>, host: &dyn Communicator) -> Result<Self, CudaError> {
        if !available() {
            return Err(CudaError(
                "several GPUs need the NCCL library (libnccl.so), which was not found on LD_LIBRARY_PATH"
                    .into(),
            ));
        }
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            // SAFETY: set before NCCL is initialised, while this thread is the only one reading
            // the environment (the solver is being built).
            unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
        }
        let (rank, size) = (host.rank(), host.size());
        let mut id = sys::ncclUniqueId { internal: [0; 128] };
        let mine = if rank == 0 {
            nccl::get_uniqueid()?.internal
        } else {
            [0; 128]
        };
        let mut counts = vec![0; size];
        counts[0] = 128;
        let mine: Vec<u8> = mine.iter().map(|c| *c as u8).collect();
        let mut all = vec![0u8; 128];
        host.all_gather(if rank == 0 { &mine } else { &[] }, &counts, &mut all);
        for (i, b) in all.iter().enumerate() {
            id.internal[i] = *b as _;
        }
        gpu.bind()?;
        let mut comm = std::mem::MaybeUninit::uninit();
        // SAFETY: the id is the first part's, every part calls this with its own rank.
        let comm = unsafe {
            nccl::comm_init_rank(comm.as_mut_ptr(), size as i32, id, rank as i32)?;
            comm.assume_init()
        };
        Ok(Self {
            comm,
            gpu,
            rank,
            size,
        })
    }

    fn stream(&self, s: Stream) -> sys::cudaStream_t {
        self.gpu.handle(s) as sys::cudaStream_t
    }

    /// Refreshes the layers of each array in `xs` this part stores but does not own from their
    /// owners, in one NCCL group: the device twin of [`crate::parallel::SlabLink::exchange`]
    /// (the `reach` outermost layers of `layer_len` values on a shared side are received, the
    /// next `reach` inward sent). Each `x` is the device address of `len` values; the calls go
    /// to `stream`.
    pub fn exchange<T: Real>(
        &self,
        stream: Stream,
        xs: &[u64],
        len: usize,
        layer_len: usize,
        reach: usize,
    ) -> Result<(), CudaError> {
        let m = reach * layer_len;
        let dt = data_type::<T>();
        let s = self.stream(stream);
        nccl::group_start()?;
        // SAFETY: (each `x` holds `len` values) a part stores at least 3 m values between two
        // neighbours and 2 m beside one (`Slabs::new`), so each range lies in `x` and what is
        // received never overlaps what is sent; the neighbour posts the matching calls.
        let r = (|| unsafe {
            for &x in xs {
                let at = |i: usize| (x + (i * std::mem::size_of::<T>()) as u64) as *mut c_void;
                if self.rank > 0 {
                    let lower = self.rank as i32 - 1;
                    nccl::send(at(m), m, dt, lower, self.comm, s)?;
                    nccl::recv(at(0), m, dt, lower, self.comm, s)?;
                }
                if self.rank + 1 < self.size {
                    let upper = self.rank as i32 + 1;
                    nccl::send(at(len - 2 * m), m, dt, upper, self.comm, s)?;
                    nccl::recv(at(len - m), m, dt, upper, self.comm, s)?;
                }
            }
            Ok::<_, nccl::NcclError>(())
        })();
        nccl::group_end()?;
        r?;
        Ok(())
    }

    /// Concatenates every part's values into `all`, in part order, `segments` times: segment
    /// `s` of part `r` is `counts[r]` values at `mine + s * stride` on that part and lands at
    /// `all + s * total + sum(counts[..r])` on every part (`total = sum(counts)`). One NCCL
    /// all-gather a segment where the counts are equal, else a group of broadcasts, one from
    /// each part that gives values (every part knows the counts, so all skip the same ones); the
    /// calls go to `stream`.
    pub fn all_gather<T: Real>(
        &self,
        stream: Stream,
        mine: u64,
        stride: usize,
        counts: &[usize],
        segments: usize,
        all: &DevBuf<T>,
    ) -> Result<(), CudaError> {
        let size = std::mem::size_of::<T>();
        let total: usize = counts.iter().sum();
        if all.len < segments * total {
            return Err(CudaError(format!(
                "gather of {} values into a buffer of {}",
                segments * total,
                all.len
            )));
        }
        let dt = data_type::<T>();
        let equal = counts.iter().all(|c| *c == counts[0]);
        if total == 0 {
            return Ok(());
        }
        nccl::group_start()?;
        let r = (|| {
            for s in 0..segments {
                if equal {
                    // One all-gather a segment where every part gives as many values.
                    let src = (mine + (s * stride * size) as u64) as *const c_void;
                    let dst = (all.ptr + (s * total * size) as u64) as *mut c_void;
                    // SAFETY: as below; `total` = parts x count values land in `all`.
                    unsafe { nccl::all_gather(src, dst, counts[0], dt, self.comm, self.stream(stream))? };
                    continue;
                }
                let mut offset = s * total;
                for (root, &count) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
                    let dst = (all.ptr + (offset * size) as u64) as *mut c_void;
                    let src = if root == self.rank {
                        (mine + (s * stride * size) as u64) as *const c_void
                    } else {
                        dst as *const c_void
                    };
                    // SAFETY: `dst` lies in `all` (checked above); the root's `src` holds
                    // `count` values (the caller's layout); every part posts the same calls.
                    unsafe {
                        nccl::broadcast(src, dst, count, dt, root as i32, self.comm, self.stream(stream))?;
                    }
                    offset += count;
                }
            }
            Ok::<_, nccl::NcclError>(())
        })();
        nccl::group_end()?;
        r?;
        Ok(())
    }
}

impl Drop for Nccl {
    fn drop(&mut self) {
        let _ = self.gpu.bind();
        let _ = self.gpu.sync();
        // SAFETY: the communicator is this object's and no work of it is pending.
        unsafe {
            let _ = nccl::comm_destroy(self.comm);
        }
    }
}
