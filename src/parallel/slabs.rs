//! Slabs along the last axis: which cells each part owns and stores, and the exchange of the
//! layers a part stores but does not own.

use super::Communicator;
use crate::solver::real::Real;
use std::ops::Range;
use std::sync::Arc;

/// Layers a part stores beyond its own on each side it shares with another part: the reach
/// of the widest stencil (the TVD and QUICK convection schemes read two faces upstream), and
/// even, so that every part's first stored layer has the parity of a global layer and the
/// red-black colours agree.
pub const EXTENSION: usize = 2;

/// A grid of `n` cells along its last axis cut into `parts` slabs: part `r` owns cells
/// `starts[r]..starts[r + 1]` (0-based). Cuts fall on even layers, as equal as that allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slabs {
    starts: Vec<usize>,
}

impl Slabs {
    /// The split of `n` layers over `parts`; `Err` says why it cannot be cut (each part needs
    /// at least `EXTENSION + 1` layers, so that its neighbours' extensions lie in it).
    pub fn new(n: usize, parts: usize) -> Result<Self, String> {
        let min = 2 * EXTENSION;
        if parts == 0 || n < parts * min {
            return Err(format!(
                "{parts} parts need at least {} cells along the last axis ({min} each), the grid has {n}",
                parts * min
            ));
        }
        let pairs = n / 2;
        let starts = (0..=parts)
            .map(|r| if r == parts { n } else { 2 * (pairs * r / parts) })
            .collect();
        Ok(Self { starts })
    }

    /// The slabs of the grid coarsened once along the cut axis (every cut halved), if each
    /// part keeps at least `2 EXTENSION` layers and the cuts stay on even layers (multigrid's
    /// coarse levels).
    pub fn coarser(&self) -> Option<Self> {
        let ok = self.starts.iter().all(|s| s % 4 == 0 || *s == self.whole())
            && self.whole() % 2 == 0
            && self.starts.windows(2).all(|w| (w[1] - w[0]) / 2 >= 2 * EXTENSION);
        ok.then(|| self.halved())
    }

    /// Every cut halved (the cuts must be even): which coarse cells each part's own cells
    /// restrict to, whether or not the coarse grid could be stepped in slabs.
    pub fn halved(&self) -> Self {
        Self {
            starts: self.starts.iter().map(|s| s / 2).collect(),
        }
    }

    /// Cells along the cut axis.
    pub fn whole(&self) -> usize {
        *self.starts.last().expect("a part")
    }

    pub fn parts(&self) -> usize {
        self.starts.len() - 1
    }

    /// Cells part `r` owns.
    pub fn owned(&self, r: usize) -> Range<usize> {
        self.starts[r]..self.starts[r + 1]
    }

    /// Cells part `r` stores: its own and [`EXTENSION`] more towards each neighbour.
    pub fn stored(&self, r: usize) -> Range<usize> {
        let o = self.owned(r);
        let lo = if r == 0 { 0 } else { o.start - EXTENSION };
        let hi = if r + 1 == self.parts() {
            o.end
        } else {
            o.end + EXTENSION
        };
        lo..hi
    }
}

/// One part's link to the others: its slab, the transport, and the exchange of the layers it
/// stores but does not own.
#[derive(Clone)]
pub struct SlabLink {
    pub slabs: Slabs,
    pub comm: Arc<dyn Communicator>,
}

impl SlabLink {
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    pub fn has_lower(&self) -> bool {
        self.rank() > 0
    }

    pub fn has_upper(&self) -> bool {
        self.rank() + 1 < self.slabs.parts()
    }

    /// Global index of this part's first stored cell along the cut axis.
    pub fn offset(&self) -> usize {
        self.slabs.stored(self.rank()).start
    }

    /// Refreshes the layers of `x` this part stores but does not own from their owners. `x` is
    /// `layers` layers of `layer_len` values along the cut axis: the stored cells plus `ghosts`
    /// ghost layers on each side (1 for the staggered velocity, 0 for cell-centred fields). The
    /// `EXTENSION + ghosts` outermost layers on a shared side are received; the next as many
    /// inward are sent, which are the owner's first or last own layers.
    pub fn exchange<T: Real>(&self, x: &mut [T], layer_len: usize, ghosts: usize) {
        let m = (EXTENSION + ghosts) * layer_len;
        let (lower, upper) = (self.has_lower(), self.has_upper());
        // A part owns at least 2 EXTENSION layers (`Slabs::new`), so it stores at least 3 m
        // values between two neighbours and 2 m beside one: what it receives never overlaps
        // what it sends.
        let (from_lower, rest) = x.split_at_mut(if lower { m } else { 0 });
        let (inner, from_upper) = rest.split_at_mut(rest.len() - if upper { m } else { 0 });
        let to_lower: &[T] = if lower { &inner[..m] } else { &[] };
        let to_upper: &[T] = if upper { &inner[inner.len() - m..] } else { &[] };
        self.comm.exchange(
            bytemuck::cast_slice(to_lower),
            bytemuck::cast_slice(to_upper),
            bytemuck::cast_slice_mut(from_lower),
            bytemuck::cast_slice_mut(from_upper),
        );
    }

    /// The global layers part `r` contributes to sums and gathers of an array with `ghosts`
    /// ghost layers each side: its own, and the outer ghost layers where it holds the grid's
    /// first or last cells.
    pub fn contributed(&self, r: usize, ghosts: usize) -> Range<usize> {
        let o = self.slabs.owned(r);
        let lo = o.start + if r == 0 { 0 } else { ghosts };
        let hi = o.end + ghosts + if r + 1 == self.slabs.parts() { ghosts } else { 0 };
        lo..hi
    }

    /// This part's [`SlabLink::contributed`] layers, counted from its first stored layer.
    pub fn contributed_here(&self, ghosts: usize) -> Range<usize> {
        let c = self.contributed(self.rank(), ghosts);
        c.start - self.offset()..c.end - self.offset()
    }

    /// Every part's contributed layers of the array `x` (`layer_len` values a layer, `ghosts`
    /// ghost layers each side) gathered into `whole`, the whole grid's array, on the first part
    /// (`None` on the others).
    pub fn gather<T: Real>(&self, x: &[T], layer_len: usize, ghosts: usize, whole: Option<&mut [T]>) {
        let here = self.contributed_here(ghosts);
        let mine = &x[here.start * layer_len..here.end * layer_len];
        self.comm.gather(
            bytemuck::cast_slice(mine),
            &self.byte_counts::<T>(layer_len, ghosts),
            whole.map(|w| bytemuck::cast_slice_mut(w)),
        );
    }

    /// Every part's contributed layers, `mine` on this one, gathered into `whole` on every part.
    pub fn all_gather<T: Real>(&self, mine: &[T], layer_len: usize, ghosts: usize, whole: &mut [T]) {
        self.comm.all_gather(
            bytemuck::cast_slice(mine),
            &self.byte_counts::<T>(layer_len, ghosts),
            bytemuck::cast_slice_mut(whole),
        );
    }

    /// Bytes each part contributes to a gather.
    fn byte_counts<T>(&self, layer_len: usize, ghosts: usize) -> Vec<usize> {
        (0..self.slabs.parts())
            .map(|r| self.contributed(r, ghosts).len() * layer_len * std::mem::size_of::<T>())
            .collect()
    }

    /// This part's stored layers (and ghost layers) of the whole grid's array `whole`.
    pub fn scatter<T: Real>(&self, whole: &[T], layer_len: usize, x: &mut [T]) {
        let start = self.offset() * layer_len;
        x.copy_from_slice(&whole[start..start + x.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_are_even_and_cover_the_grid() {
        let s = Slabs::new(64, 3).unwrap();
        assert_eq!((s.owned(0), s.owned(1), s.owned(2)), (0..20, 20..42, 42..64));
        assert_eq!((s.stored(0), s.stored(1), s.stored(2)), (0..22, 18..44, 40..64));
        let s = Slabs::new(9, 2).unwrap();
        assert_eq!((s.owned(0), s.owned(1)), (0..4, 4..9));
        assert!(Slabs::new(7, 2).unwrap_err().contains("at least 8 cells"));
    }
}
