//! Streamlines of a 3D state for the 3D view: seeded on the view's slice (the lattice, rake or
//! points of [`Seeding::seeds`], given in the plane's coordinates, placed on the plane) and
//! traced through the whole 3D velocity with the integrators of the 2D view ([`through`]), in
//! parallel; each point carries the value of a field there, which colours it.

use super::{GridVelocity, Integrator, Limits, through};
use crate::render::view::{Seeding, Slice};
use rayon::prelude::*;

/// Most seeds a side of a lattice in 3D (256 seeds).
pub const MAX_GRID_SEEDS_3D: usize = 16;
/// Most seeds on a rake or clicked, in 3D.
pub const MAX_SEEDS_3D: usize = 256;
/// Most accepted steps of one 3D trace.
pub const MAX_TRACE_STEPS_3D: usize = 4_000;
/// Most points of one frame's 3D streamlines in all (what their tubes are built from).
pub const MAX_POINTS_3D: usize = 400_000;

/// The seeds of `seeding` on `slice` of the box `origin + [0, extent]` (world coordinates),
/// within [`MAX_GRID_SEEDS_3D`] a side and [`MAX_SEEDS_3D`] in all.
pub fn slice_seeds(seeding: &Seeding, slice: &Slice, origin: [f64; 3], extent: [f64; 3]) -> Vec<[f64; 3]> {
    let [p, q] = slice.plane_axes();
    let along = slice.coordinate(origin[slice.axis], extent[slice.axis]);
    let seeding = match seeding {
        Seeding::Grid { n } => Seeding::Grid {
            n: (*n).min(MAX_GRID_SEEDS_3D),
        },
        other => other.clone(),
    };
    seeding
        .seeds([origin[p], origin[q]], [extent[p], extent[q]])
        .into_iter()
        .take(MAX_SEEDS_3D)
        .map(|s| {
            let mut x = [along; 3];
            x[p] = s[0];
            x[q] = s[1];
            x
        })
        .collect()
}

/// The streamline through each seed ([`through`]) as points `(x, y, z, value)`, `value` the
/// multilinear interpolation there of `colour` (a cell field of `velocity`'s grid). Paths past
/// [`MAX_POINTS_3D`] points in all are left out, in seed order.
pub fn paths(
    velocity: &GridVelocity<3>,
    colour: &[f64],
    seeds: &[[f64; 3]],
    integrator: Integrator,
    limits: &Limits,
) -> Vec<Vec<[f32; 4]>> {
    let traced: Vec<Vec<[f64; 3]>> = seeds
        .par_iter()
        .map(|&seed| through(velocity, seed, integrator, limits))
        .collect();
    let mut total = 0;
    traced
        .into_iter()
        .take_while(|p| {
            total += p.len();
            total <= MAX_POINTS_3D
        })
        .map(|path| {
            path.into_iter()
                .map(|x| {
                    let value = velocity.interp(colour, x);
                    [x[0] as f32, x[1] as f32, x[2] as f32, value as f32]
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::streamlines::Limits;

    #[test]
    fn seeds_lie_on_the_slice_within_the_3d_limits() {
        let slice = Slice {
            axis: 1,
            position: 0.25,
        };
        let seeds = slice_seeds(
            &Seeding::Grid { n: 40 },
            &slice,
            [0.0, -1.0, 0.0],
            [2.0, 4.0, 1.0],
        );
        assert_eq!(seeds.len(), MAX_GRID_SEEDS_3D * MAX_GRID_SEEDS_3D);
        assert!(
            seeds.iter().all(|s| s[1] == 0.0),
            "y = -1 + 0.25 x 4 on the slice"
        );
        // The plane's axes are x and z: the lattice spans x in (0, 2) and z in (0, 1).
        assert!(
            seeds
                .iter()
                .all(|s| s[0] > 0.0 && s[0] < 2.0 && s[2] > 0.0 && s[2] < 1.0)
        );
        let rake = Seeding::Rake {
            a: [0.5, 0.2],
            b: [1.5, 0.8],
            count: 1000,
        };
        let on_rake = slice_seeds(&rake, &slice, [0.0, -1.0, 0.0], [2.0, 4.0, 1.0]);
        assert_eq!(on_rake.len(), MAX_SEEDS_3D);
        assert_eq!(on_rake[0], [0.5, 0.0, 0.2]);
    }

    /// A helical flow about the axis `x = y = 0.5` of the unit cube on a 24^3 grid: `u = -2 (y -
    /// 1/2)`, `v = 2 (x - 1/2)`, `w = 0.25`, linear, so the trilinear interpolation is exact away
    /// from the walls and a streamline keeps its distance from the axis.
    #[test]
    fn paths_follow_a_helical_flow_and_carry_the_colour_field() {
        let n = 24;
        let h = 1.0 / n as f64;
        let mut velocity = GridVelocity::<3> {
            n: [n; 3],
            origin: [0.0; 3],
            spacing: [h; 3],
            components: Default::default(),
        };
        let mut height = Vec::new();
        for k in 0..n {
            for j in 0..n {
                for i in 0..n {
                    let [x, y, z] = [i, j, k].map(|c| (c as f64 + 0.5) * h);
                    velocity.components[0].push(-2.0 * (y - 0.5));
                    velocity.components[1].push(2.0 * (x - 0.5));
                    velocity.components[2].push(0.25);
                    height.push(z);
                }
            }
        }
        let slice = Slice {
            axis: 2,
            position: 0.3,
        };
        let seeds = slice_seeds(
            &Seeding::Points(vec![[0.8, 0.5], [0.5, 0.3]]),
            &slice,
            [0.0; 3],
            [1.0; 3],
        );
        let limits = Limits {
            max_length: 4.0,
            min_speed: 1e-6,
            scale: 0.5 * h,
            max_step: 2.0 * h,
            closure: 0.0,
            max_steps: MAX_TRACE_STEPS_3D,
        };
        let paths = paths(
            &velocity,
            &height,
            &seeds,
            Integrator::Rk45 { tolerance: 1e-7 },
            &limits,
        );
        assert_eq!(paths.len(), 2);
        for (path, r) in paths.iter().zip([0.3f32, 0.2]) {
            // Both ways from the seed: down to the floor and up to the lid, turning round.
            let (low, high) = path
                .iter()
                .fold((1.0f32, 0.0f32), |(l, u), p| (l.min(p[2]), u.max(p[2])));
            assert!(low < 0.05 && high > 0.95, "the path spans z {low} to {high}");
            assert!(
                path.windows(2).all(|w| w[1][2] > w[0][2]),
                "the path does not rise with w > 0"
            );
            for p in path {
                let off_axis = (p[0] - 0.5).hypot(p[1] - 0.5);
                assert!(
                    (off_axis - r).abs() < 1e-4,
                    "point {p:?} is {off_axis} off the axis, not {r}"
                );
                if p[2] > h as f32 && p[2] < 1.0 - h as f32 {
                    assert!(
                        (p[3] - p[2]).abs() < 1e-5,
                        "colour value {} at z = {}",
                        p[3],
                        p[2]
                    );
                }
            }
        }
    }
}
