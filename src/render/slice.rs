//! Axis-aligned planes through a 3D grid ([`Slice`]): which plane a view shows, and a cell
//! field's values on it.

use crate::solver::PlaneCut;

/// An axis-aligned plane through a 3D grid: normal to `axis` (0, 1, 2: x, y, z) at `position`,
/// a fraction of the domain's extent along it (0 to 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slice {
    pub axis: usize,
    pub position: f64,
}

impl Default for Slice {
    /// The mid-plane normal to z.
    fn default() -> Self {
        Slice {
            axis: 2,
            position: 0.5,
        }
    }
}

impl Slice {
    /// The two in-plane axes, ascending: the slice's horizontal and vertical axes.
    pub fn plane_axes(&self) -> [usize; 2] {
        match self.axis {
            0 => [1, 2],
            1 => [0, 2],
            _ => [0, 1],
        }
    }

    /// The in-plane velocity components' field names (`u, v` on a z slice).
    pub fn velocity_names(&self) -> [&'static str; 2] {
        const NAMES: [&str; 3] = ["u", "v", "w"];
        self.plane_axes().map(|a| NAMES[a])
    }

    /// The slice's coordinate along its axis for a domain starting at `origin` of `extent`.
    pub fn coordinate(&self, origin: f64, extent: f64) -> f64 {
        origin + self.position.clamp(0.0, 1.0) * extent
    }

    /// Where this plane cuts a 3D cell field of `n` cells: the layers and weight
    /// [`Slice::cut_into`] interpolates with (the device cuts with the same).
    pub fn cut(&self, n: [usize; 3]) -> PlaneCut {
        let a = self.axis;
        let s = (self.position.clamp(0.0, 1.0) * n[a] as f64 - 0.5).clamp(0.0, (n[a] - 1) as f64);
        let lo = (s.floor() as usize).min(n[a] - 1);
        PlaneCut {
            n,
            axis: a,
            plane_axes: self.plane_axes(),
            lo,
            hi: (lo + 1).min(n[a] - 1),
            t: s - lo as f64,
        }
    }

    /// The values of a 3D cell field (`n[0] x n[1] x n[2]`, x fastest) on this plane, into
    /// `out`: linearly interpolated between the two cell layers around it (cell centres at
    /// `(i + 1/2) h`; beyond the first or last centre the nearest layer), x-fastest over the
    /// plane's axes ([`Slice::plane_axes`]). The mid-plane of an even grid is the mean of the
    /// two middle layers, of an odd one the middle layer.
    pub fn cut_into(&self, field: &[f64], n: [usize; 3], out: &mut Vec<f64>) {
        let PlaneCut {
            axis: a, lo, hi, t, ..
        } = self.cut(n);
        let stride = [1, n[0], n[0] * n[1]];
        let [p, q] = self.plane_axes();
        out.clear();
        out.reserve(n[p] * n[q]);
        for j in 0..n[q] {
            for i in 0..n[p] {
                let base = i * stride[p] + j * stride[q];
                let (x0, x1) = (field[base + lo * stride[a]], field[base + hi * stride[a]]);
                out.push(if t == 0.0 { x0 } else { (1.0 - t) * x0 + t * x1 });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field linear in the cell centres is cut exactly; the mid-plane of an even grid is the
    /// mean of the two middle layers, of an odd one the middle layer.
    #[test]
    fn slices_interpolate_between_cell_layers() {
        let n = [4, 5, 6];
        let centre = |i: usize| i as f64 + 0.5;
        let field: Vec<f64> = (0..n[2])
            .flat_map(|k| (0..n[1]).flat_map(move |j| (0..n[0]).map(move |i| (i, j, k))))
            .map(|(i, j, k)| centre(i) + 10.0 * centre(j) + 100.0 * centre(k))
            .collect();
        for (axis, position) in [(0, 0.3), (1, 0.5), (2, 0.5), (2, 0.71)] {
            let s = Slice { axis, position };
            let mut f = Vec::new();
            s.cut_into(&field, n, &mut f);
            let [p, q] = s.plane_axes();
            assert_eq!(f.len(), n[p] * n[q]);
            let at = position * n[axis] as f64;
            let weight = [1.0, 10.0, 100.0];
            for j in 0..n[q] {
                for i in 0..n[p] {
                    let exact = weight[p] * centre(i) + weight[q] * centre(j) + weight[axis] * at;
                    let got = f[j * n[p] + i];
                    assert!(
                        (got - exact).abs() < 1e-9,
                        "{s:?} at ({i}, {j}): {got} against {exact}"
                    );
                }
            }
        }
        // Beyond the last centre: the last layer.
        let mut f = Vec::new();
        Slice {
            axis: 2,
            position: 1.0,
        }
        .cut_into(&field, n, &mut f);
        assert_eq!(f[0], field[5 * 20]);
        assert_eq!(Slice::default().velocity_names(), ["u", "v"]);
        assert_eq!(
            Slice {
                axis: 0,
                position: 0.5
            }
            .velocity_names(),
            ["v", "w"]
        );
    }
}
