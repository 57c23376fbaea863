//! What a view that draws from the solver's device asks of it and gets back
//! ([`crate::solver::Solver::display_fields_on_device`]): where each field goes and in what
//! shape ([`DisplayTarget`], [`PlaneCut`]), and what a colour scale needs of its values
//! ([`ValueStats`], which [`crate::render::view::color_range`] takes on the host too). The
//! device computes them with `kernels/shown_field.cu` and gives the same numbers as the host
//! path: min and max do not depend on the order they are taken in, the sample is the same
//! values, and a cut interpolates in double as [`crate::render::slice::Slice::cut_into`] does.

use crate::backend::cuda::SharedBuffer;

/// A plane of a 3D cell field (`n[0] x n[1] x n[2]`, x fastest) normal to `axis`: the values
/// linearly interpolated between cell layers `lo` and `hi` with weight `t` on `hi`
/// (`(1 - t) x_lo + t x_hi` in double, or `x_lo` where `t` is 0), x-fastest over the plane's
/// axes `plane_axes` ([`crate::render::slice::Slice::cut`] makes one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlaneCut {
    pub n: [usize; 3],
    pub axis: usize,
    pub plane_axes: [usize; 2],
    pub lo: usize,
    pub hi: usize,
    pub t: f64,
}

impl PlaneCut {
    /// Values in the plane.
    pub fn cells(&self) -> usize {
        self.n[self.plane_axes[0]] * self.n[self.plane_axes[1]]
    }
}

/// Values a shown field takes: a plane's, or the whole field's `whole`.
pub fn shown_values(plane: Option<&PlaneCut>, whole: usize) -> usize {
    plane.map_or(whole, PlaneCut::cells)
}

/// Where one shown field goes: the renderer's buffer, the whole field or a plane of it, and
/// whether its [`ValueStats::sample`] is wanted.
pub struct DisplayTarget<'a> {
    pub buffer: &'a SharedBuffer,
    pub plane: Option<PlaneCut>,
    pub sample: bool,
}

impl DisplayTarget<'_> {
    /// Values this target receives of a field of `whole` values.
    pub fn values(&self, whole: usize) -> usize {
        shown_values(self.plane.as_ref(), whole)
    }
}

/// At most this many values in [`ValueStats::sample`].
pub const SAMPLE_VALUES: usize = 1 << 16;

/// The sample's stride over `len` values: every `stride`-th value, from the first.
pub fn sample_stride(len: usize) -> usize {
    len.div_ceil(SAMPLE_VALUES).max(1)
}

/// The statistics of a field's values `v` (f32, as drawn).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValueStats {
    /// The least finite value (`+inf` when none is finite).
    pub min: f32,
    /// The greatest finite value (`-inf` when none is finite).
    pub max: f32,
    /// The smallest `|v| > 0` (`+inf` when none).
    pub smallest_magnitude: f32,
    /// `v[0], v[s], v[2 s], ...` with `s = sample_stride(len)` (robust ranges take percentiles
    /// of it); empty unless asked for.
    pub sample: Vec<f32>,
}

impl ValueStats {
    /// The statistics of `data`, with the sample when `sample` is set.
    pub fn of(data: &[f32], sample: bool) -> ValueStats {
        let (mut min, mut max, mut smallest) = (f32::INFINITY, f32::NEG_INFINITY, f32::INFINITY);
        for &v in data {
            if v.is_finite() {
                min = min.min(v);
                max = max.max(v);
            }
            let a = v.abs();
            if a > 0.0 {
                smallest = smallest.min(a);
            }
        }
        ValueStats {
            min,
            max,
            smallest_magnitude: smallest,
            sample: if sample {
                data.iter().step_by(sample_stride(data.len())).copied().collect()
            } else {
                Vec::new()
            },
        }
    }

    /// The statistics of several blocks' partial results (min, max, smallest magnitude each),
    /// as the device's reduction leaves them.
    pub fn from_partials(partials: &[f32], sample: Vec<f32>) -> ValueStats {
        let mut s = ValueStats {
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
            smallest_magnitude: f32::INFINITY,
            sample,
        };
        for p in partials.chunks_exact(3) {
            s.min = s.min.min(p[0]);
            s.max = s.max.max(p[1]);
            s.smallest_magnitude = s.smallest_magnitude.min(p[2]);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_values_are_left_out_and_zero_has_no_magnitude() {
        let s = ValueStats::of(&[f32::NAN, -2.0, 0.0, f32::INFINITY, 0.25, -0.0], true);
        assert_eq!((s.min, s.max, s.smallest_magnitude), (-2.0, 0.25, 0.25));
        assert_eq!(s.sample.len(), 6);
        let none = ValueStats::of(&[f32::NAN], false);
        assert_eq!((none.min, none.max), (f32::INFINITY, f32::NEG_INFINITY));
        assert!(none.sample.is_empty());
    }

    #[test]
    fn partials_combine_to_the_whole() {
        let data: Vec<f32> = (0..1000).map(|k| ((k * 37 % 101) as f32 - 50.0) * 0.1).collect();
        let partials: Vec<f32> = data
            .chunks(77)
            .flat_map(|c| {
                let s = ValueStats::of(c, false);
                [s.min, s.max, s.smallest_magnitude]
            })
            .collect();
        assert_eq!(
            ValueStats::from_partials(&partials, Vec::new()),
            ValueStats::of(&data, false)
        );
    }

    #[test]
    fn the_sample_has_at_most_its_size_and_starts_at_the_first_value() {
        let data: Vec<f32> = (0..300_001).map(|k| k as f32).collect();
        let s = ValueStats::of(&data, true);
        assert!(s.sample.len() <= SAMPLE_VALUES);
        assert_eq!(s.sample[1], sample_stride(data.len()) as f32);
    }
}
