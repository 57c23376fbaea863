//! One array's layers along the cut axis shared among parts: each part owns a contiguous range
//! of the array's global layers and stores a wider range, the layers it stores but does not own
//! held by its neighbours. The general form of [`super::Slabs`] for solvers whose arrays are cut
//! differently (the SIMPLE family's parts: cell layers, ghosted face layers and the unknown rows
//! of the velocity component normal to the cut each have their own owned ranges).

use super::Communicator;
use crate::solver::real::Real;
use std::ops::Range;

/// Part `r` owns global layers `owned[r]` (the ranges follow each other and cover the array)
/// and stores `stored[r]`, which contains `owned[r]` and reaches no further than its
/// neighbours' owned layers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layers {
    owned: Vec<Range<usize>>,
    stored: Vec<Range<usize>>,
}

impl Layers {
    /// `Err` says which part's stored layers reach past its neighbours' (then a layer it stores
    /// would have no neighbour to refresh it from).
    pub fn new(owned: Vec<Range<usize>>, stored: Vec<Range<usize>>) -> Result<Self, String> {
        let parts = owned.len();
        assert!(
            parts > 0 && stored.len() == parts,
            "one range of each kind a part"
        );
        assert!(
            owned[0].start == 0 && owned.windows(2).all(|w| w[0].end == w[1].start),
            "owned layers follow each other: {owned:?}"
        );
        for r in 0..parts {
            let (o, s) = (&owned[r], &stored[r]);
            let lowest = if r == 0 { o.start } else { owned[r - 1].start };
            let highest = if r + 1 == parts { o.end } else { owned[r + 1].end };
            if o.is_empty() || s.start > o.start || s.end < o.end || s.start < lowest || s.end > highest {
                return Err(format!(
                    "part {r} owns layers {o:?} and needs {s:?}, beyond its neighbours' {lowest}..{highest}"
                ));
            }
        }
        Ok(Self { owned, stored })
    }

    pub fn parts(&self) -> usize {
        self.owned.len()
    }

    /// Global layers part `r` owns.
    pub fn owned(&self, r: usize) -> Range<usize> {
        self.owned[r].clone()
    }

    /// Global layers part `r` stores.
    pub fn stored(&self, r: usize) -> Range<usize> {
        self.stored[r].clone()
    }

    /// Layers of the whole array.
    pub fn whole(&self) -> usize {
        self.owned[self.parts() - 1].end
    }

    /// Part `r`'s owned layers counted from its first stored one.
    pub fn owned_here(&self, r: usize) -> Range<usize> {
        let (o, s) = (&self.owned[r], &self.stored[r]);
        o.start - s.start..o.end - s.start
    }

    /// Refreshes the layers of part `comm.rank()`'s `x` (its stored layers, `layer_len` values
    /// each) that it does not own from their owners, sending its own layers that its neighbours
    /// store.
    pub fn exchange<T: Real>(&self, comm: &dyn Communicator, x: &mut [T], layer_len: usize) {
        let r = comm.rank();
        let here = self.owned_here(r);
        let start = self.stored[r].start;
        let (from_lower, rest) = x.split_at_mut(here.start * layer_len);
        let (own, from_upper) = rest.split_at_mut(here.len() * layer_len);
        let o = &self.owned[r];
        let to_lower: &[T] = match r {
            0 => &[],
            _ => &own[..(self.stored[r - 1].end - o.start) * layer_len],
        };
        let to_upper: &[T] = if r + 1 < self.parts() {
            &own[(self.stored[r + 1].start - o.start) * layer_len..]
        } else {
            &[]
        };
        debug_assert_eq!(start + here.start, o.start);
        comm.exchange(
            bytemuck::cast_slice(to_lower),
            bytemuck::cast_slice(to_upper),
            bytemuck::cast_slice_mut(from_lower),
            bytemuck::cast_slice_mut(from_upper),
        );
    }

    /// Every part's owned layers of `x` (its stored layers) gathered in order into `whole`, the
    /// whole array, on the first part (`None` on the others).
    pub fn gather<T: Real>(
        &self,
        comm: &dyn Communicator,
        x: &[T],
        layer_len: usize,
        whole: Option<&mut [T]>,
    ) {
        let here = self.owned_here(comm.rank());
        comm.gather(
            bytemuck::cast_slice(&x[here.start * layer_len..here.end * layer_len]),
            &self.byte_counts::<T>(layer_len),
            whole.map(|w| bytemuck::cast_slice_mut(w)),
        );
    }

    /// Part `r`'s stored layers of the whole array `whole` into `x`.
    pub fn scatter<T: Real>(&self, r: usize, whole: &[T], layer_len: usize, x: &mut [T]) {
        let s = &self.stored[r];
        x.copy_from_slice(&whole[s.start * layer_len..s.end * layer_len]);
    }

    /// `sum_j partial[j]` over the whole array's rows in order, `partial` this part's row values
    /// (`rows_per_layer` a stored layer) of which the owned ones are gathered from every part:
    /// the same additions on any number of parts. `all` receives every part's row values (grown
    /// once to the whole array's rows), `counts` their bytes a part.
    pub fn sum<T: Real>(
        &self,
        comm: &dyn Communicator,
        partial: &[T],
        rows_per_layer: usize,
        all: &mut Vec<T>,
        counts: &mut Vec<usize>,
    ) -> T {
        let here = self.owned_here(comm.rank());
        let rows = self.whole() * rows_per_layer;
        if all.len() < rows {
            all.resize(rows, T::zero());
        }
        counts.clear();
        counts.extend(
            self.owned
                .iter()
                .map(|o| o.len() * rows_per_layer * std::mem::size_of::<T>()),
        );
        comm.all_gather(
            bytemuck::cast_slice(&partial[here.start * rows_per_layer..here.end * rows_per_layer]),
            counts,
            bytemuck::cast_slice_mut(&mut all[..rows]),
        );
        all[..rows].iter().fold(T::zero(), |s, &x| s + x)
    }

    /// Bytes of the owned layers of every part.
    fn byte_counts<T>(&self, layer_len: usize) -> Vec<usize> {
        self.owned
            .iter()
            .map(|o| o.len() * layer_len * std::mem::size_of::<T>())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_layers_stay_with_the_neighbours() {
        let owned = vec![0..5, 5..10, 10..16];
        assert!(Layers::new(owned.clone(), vec![0..8, 2..13, 7..16]).is_ok());
        let e = Layers::new(owned, vec![0..8, 2..13, 4..16]).unwrap_err();
        assert!(e.contains("part 2"), "{e}");
    }

    /// Three parts of a 16-layer array, two values a layer (the value is the global layer):
    /// after the exchange every stored layer holds its owner's value, and the gathered whole
    /// and the sums are the undivided array's.
    #[test]
    fn exchange_gather_and_sum_give_the_whole_array() {
        use crate::parallel::threads::Threads;
        let layers = Layers::new(vec![0..5, 5..10, 10..16], vec![0..8, 2..13, 7..16]).unwrap();
        let ends = Threads::new(3);
        let out: Vec<(Vec<f64>, Option<Vec<f64>>, f64)> = std::thread::scope(|s| {
            let handles: Vec<_> = ends
                .iter()
                .map(|c| {
                    let layers = &layers;
                    s.spawn(move || {
                        let r = c.rank();
                        let stored = layers.stored(r);
                        // Owned layers right, the others stale (-1).
                        let mut x: Vec<f64> = stored
                            .clone()
                            .flat_map(|j| {
                                let v = if layers.owned(r).contains(&j) {
                                    j as f64
                                } else {
                                    -1.0
                                };
                                [v, v]
                            })
                            .collect();
                        layers.exchange(&**c, &mut x, 2);
                        let mut whole = (r == 0).then(|| vec![0.0; 32]);
                        layers.gather(&**c, &x, 2, whole.as_deref_mut());
                        let rows: Vec<f64> = stored.map(|j| j as f64).collect();
                        let sum = layers.sum(&**c, &rows, 1, &mut Vec::new(), &mut Vec::new());
                        (x, whole, sum)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("a part")).collect()
        });
        for (r, (x, whole, sum)) in out.iter().enumerate() {
            let expected: Vec<f64> = layers.stored(r).flat_map(|j| [j as f64; 2]).collect();
            assert_eq!(x, &expected, "part {r}");
            assert_eq!(*sum, (0..16).fold(0.0, |s, j| s + j as f64));
            if r == 0 {
                let all: Vec<f64> = (0..16).flat_map(|j| [j as f64; 2]).collect();
                assert_eq!(whole.as_ref(), Some(&all));
            }
        }
    }
}
