//! What a colour scale needs of a shown field's f32 values ([`crate::render::view::color_range`]),
//! computed from host values here and by `kernels/shown_field.cu` on the device when the field
//! is drawn from device memory ([`crate::solver::Solver::display_fields_on_device`]): both give
//! the same numbers (min and max do not depend on the order they are taken in, and the sample
//! is the same values).

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
