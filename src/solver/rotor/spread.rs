//! Spreading the disk's point forces ([`Sample`]) to the points where one velocity component
//! lives (a staggered grid's faces, or cell centres), conservatively: each sample's force is
//! shared by the points within `3 width` of it with Gaussian weights `exp(-(d / width)^2)`
//! normalised over those points, so the sources times the points' volume sum to the samples'
//! force to round-off. The width is the smoothing of actuator-disk methods (Sørensen & Shen,
//! J. Fluids Eng. 124, 2002), one to two cells: a disk thinner than a cell is not resolved.

use super::Sample;

/// Points `origin + i * spacing`, `i` in `[0, n)` per axis, x fastest: where one velocity
/// component lives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Points {
    pub origin: [f64; 3],
    pub spacing: [f64; 3],
    pub n: [usize; 3],
}

/// Adds to `out` (one value per point of `points`) the force per unit volume of component
/// `component` of `samples`, each spread over `width` (module docs). A point's volume is the
/// product of the spacings. Fails, naming the sample, when no point lies within `3 width` of
/// one (its force would be lost).
pub fn spread(
    samples: &[Sample],
    points: &Points,
    component: usize,
    width: f64,
    out: &mut [f64],
) -> Result<(), String> {
    let Points { origin, spacing, n } = *points;
    assert_eq!(out.len(), n[0] * n[1] * n[2], "one value per point");
    let volume = spacing[0] * spacing[1] * spacing[2];
    let reach = 3.0 * width;
    let mut weights = Vec::new();
    for s in samples {
        // The index box of the points within `reach` of the sample, clipped to the grid.
        let mut range = [(0, 0); 3];
        let mut inside = true;
        for a in 0..3 {
            let lo = ((s.position[a] - reach - origin[a]) / spacing[a]).ceil().max(0.0);
            let hi = ((s.position[a] + reach - origin[a]) / spacing[a])
                .floor()
                .min(n[a] as f64 - 1.0);
            inside &= hi >= lo;
            range[a] = (lo as usize, hi.max(0.0) as usize);
        }
        weights.clear();
        let mut total = 0.0;
        if inside {
            for k in range[2].0..=range[2].1 {
                for j in range[1].0..=range[1].1 {
                    for i in range[0].0..=range[0].1 {
                        let p = [i, j, k];
                        let d2: f64 = (0..3)
                            .map(|a| {
                                let d = origin[a] + p[a] as f64 * spacing[a] - s.position[a];
                                d * d
                            })
                            .sum();
                        if d2 <= reach * reach {
                            let w = (-d2 / (width * width)).exp();
                            total += w;
                            weights.push((i + n[0] * (j + n[1] * k), w));
                        }
                    }
                }
            }
        }
        if total <= 0.0 {
            return Err(format!(
                "the rotor's disk point at ({:.4}, {:.4}, {:.4}) has no grid point within {reach:.4}: the disk must lie inside the domain",
                s.position[0], s.position[1], s.position[2]
            ));
        }
        let f = s.force[component] / (total * volume);
        for &(at, w) in &weights {
            out[at] += f * w;
        }
    }
    Ok(())
}
