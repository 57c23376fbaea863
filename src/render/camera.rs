//! The orbit camera of the 3D views: it looks at a target point from a distance, at an azimuth
//! and an elevation, and maps the world into wgpu's clip space.
//!
//! Conventions: right-handed world coordinates in metres, as the case's grid (x, y, z). The
//! azimuth is the angle about +y from +z towards +x; the elevation is the angle above the x-z
//! plane (both in radians). At azimuth 0 and elevation 0 the camera sits on +z of the target and
//! looks along -z with +y up. Clip space is wgpu's: x and y in [-1, 1] (y up), depth in [0, 1]
//! from the near to the far plane. Normalised device coordinates (`ndc`) of a pixel `(px, py)` of
//! a `w x h` view are `(2 px / w - 1, 1 - 2 py / h)`.

use glam::{Mat4, Vec2, Vec3, Vec4Swizzles};

/// The largest elevation: the camera never looks straight down the up axis, where the view
/// matrix loses its orientation.
const MAX_ELEVATION: f32 = 89.0 * std::f32::consts::PI / 180.0;

/// An orbit camera (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    pub azimuth: f32,
    pub elevation: f32,
    /// From the target to the eye.
    pub distance: f32,
    /// Vertical field of view.
    pub fov_y: f32,
    /// Radius of the sphere around the target that the near and far planes keep in view.
    pub radius: f32,
}

impl OrbitCamera {
    /// A view of the box `min..max`: its centre from azimuth 30 and elevation 20 degrees, at the
    /// distance at which its bounding sphere fills the vertical field of view of 40 degrees
    /// (and the horizontal one of any aspect ratio of at least 1).
    pub fn framing(min: Vec3, max: Vec3) -> Self {
        let fov_y = 40f32.to_radians();
        let radius = 0.5 * (max - min).length().max(f32::MIN_POSITIVE);
        Self {
            target: 0.5 * (min + max),
            azimuth: 30f32.to_radians(),
            elevation: 20f32.to_radians(),
            distance: radius / (0.5 * fov_y).sin(),
            fov_y,
            radius,
        }
    }

    /// Unit vector from the target towards the eye.
    pub fn backward(&self) -> Vec3 {
        let (sa, ca) = self.azimuth.sin_cos();
        let (se, ce) = self.elevation.sin_cos();
        Vec3::new(ce * sa, se, ce * ca)
    }

    pub fn eye(&self) -> Vec3 {
        self.target + self.distance * self.backward()
    }

    /// World to view space (right-handed, looking along -z).
    pub fn view(&self) -> Mat4 {
        Mat4::look_at_rh(self.eye(), self.target, Vec3::Y)
    }

    /// The near and far planes: the sphere of `radius` about the target between them.
    fn depth_range(&self) -> (f32, f32) {
        let far = self.distance + 1.01 * self.radius;
        let near = (self.distance - 1.01 * self.radius).max(far * 1e-4);
        (near, far)
    }

    /// View to clip space for a view `aspect` = width / height wide.
    pub fn projection(&self, aspect: f32) -> Mat4 {
        let (near, far) = self.depth_range();
        Mat4::perspective_rh(self.fov_y, aspect, near, far)
    }

    /// World to clip space.
    pub fn view_projection(&self, aspect: f32) -> Mat4 {
        self.projection(aspect) * self.view()
    }

    /// Turns the camera about the target (a drag); the elevation stays within +-89 degrees and
    /// the azimuth within (-pi, pi].
    pub fn orbit(&mut self, d_azimuth: f32, d_elevation: f32) {
        use std::f32::consts::{PI, TAU};
        let a = (self.azimuth + d_azimuth).rem_euclid(TAU);
        self.azimuth = if a > PI { a - TAU } else { a };
        self.elevation = (self.elevation + d_elevation).clamp(-MAX_ELEVATION, MAX_ELEVATION);
    }

    /// Moves the eye towards the target (`factor` < 1) or away (a wheel step), keeping it
    /// between 1 % and 100 times the scene radius from it.
    pub fn zoom(&mut self, factor: f32) {
        self.distance = (self.distance * factor).clamp(0.01 * self.radius, 100.0 * self.radius);
    }

    /// Moves the target (and the eye with it) across the view by `ndc` (a drag in normalised
    /// device coordinates): a point on the plane through the target follows the pointer.
    pub fn pan(&mut self, ndc: Vec2, aspect: f32) {
        let half_height = self.distance * (0.5 * self.fov_y).tan();
        let right = Vec3::Y.cross(self.backward()).normalize();
        let up = self.backward().cross(right);
        self.target -= half_height * (ndc.x * aspect * right + ndc.y * up);
    }

    /// Looks along axis `axis` (0 = x, 1 = y, 2 = z), towards -axis when `from_positive` (the
    /// eye on the positive side), keeping the target and distance.
    pub fn look_along(&mut self, axis: usize, from_positive: bool) {
        use std::f32::consts::FRAC_PI_2;
        let s = if from_positive { 1.0 } else { -1.0 };
        (self.azimuth, self.elevation) = match axis {
            0 => (s * FRAC_PI_2, 0.0),
            1 => (0.0, s * MAX_ELEVATION),
            _ => (if from_positive { 0.0 } else { std::f32::consts::PI }, 0.0),
        };
    }

    /// The ray through the point `ndc` of a view `aspect` wide: its origin (the eye) and unit
    /// direction, in world coordinates.
    pub fn ray(&self, ndc: Vec2, aspect: f32) -> (Vec3, Vec3) {
        let inverse = self.view_projection(aspect).inverse();
        let far = inverse * ndc.extend(1.0).extend(1.0);
        let eye = self.eye();
        (eye, (far.xyz() / far.w - eye).normalize())
    }

    /// Where the ray through `ndc` meets the plane `x[axis] = value` in front of the eye (a
    /// slice picked or dragged), if it does.
    pub fn pick_on_plane(&self, ndc: Vec2, aspect: f32, axis: usize, value: f32) -> Option<Vec3> {
        let (origin, dir) = self.ray(ndc, aspect);
        if dir[axis].abs() < 1e-6 {
            return None;
        }
        let t = (value - origin[axis]) / dir[axis];
        (t > 0.0).then(|| origin + t * dir)
    }

    /// Where along `axis` the pointer at `ndc` drags a point held at `anchor`: the coordinate
    /// of the point of the line through `anchor` along `axis` nearest to the pointer's ray (a
    /// slice dragged along its normal). `None` while the axis points at the eye (the ray and
    /// the line nearly parallel: no position to read).
    pub fn drag_along(&self, ndc: Vec2, aspect: f32, anchor: Vec3, axis: usize) -> Option<f32> {
        let (origin, dir) = self.ray(ndc, aspect);
        let a = Vec3::AXES[axis];
        let w = anchor - origin;
        // Nearest points of anchor + s a and origin + t dir: s (1 - b^2) = b (dir.w) - a.w.
        let b = a.dot(dir);
        let denominator = 1.0 - b * b;
        (denominator > 1e-3).then(|| anchor[axis] + (b * dir.dot(w) - a.dot(w)) / denominator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn box_camera() -> OrbitCamera {
        OrbitCamera::framing(Vec3::ZERO, Vec3::new(1.0, 0.5, 2.0))
    }

    fn ndc_of(c: &OrbitCamera, p: Vec3, aspect: f32) -> glam::Vec3 {
        let q = c.view_projection(aspect) * p.extend(1.0);
        q.xyz() / q.w
    }

    #[test]
    fn view_puts_the_target_on_the_axis_at_its_distance() {
        let mut c = box_camera();
        c.orbit(0.7, -0.3);
        let t = c.view() * c.target.extend(1.0);
        assert!(
            (t.xyz() - Vec3::new(0.0, 0.0, -c.distance)).length() < 1e-5,
            "{t}"
        );
        let e = c.view() * c.eye().extend(1.0);
        assert!(e.xyz().length() < 1e-5);
        // Azimuth 0, elevation 0: on +z, looking along -z.
        let mut c = box_camera();
        c.look_along(2, true);
        assert!((c.backward() - Vec3::Z).length() < 1e-6);
        c.look_along(0, false);
        assert!((c.backward() + Vec3::X).length() < 1e-6);
    }

    #[test]
    fn projection_maps_the_depth_range_to_0_1_and_the_field_of_view_to_the_edges() {
        let c = box_camera();
        let (near, far) = c.depth_range();
        let p = c.projection(1.5);
        let depth = |z: f32| {
            let q = p * glam::Vec4::new(0.0, 0.0, -z, 1.0);
            q.z / q.w
        };
        assert!(depth(near).abs() < 1e-5 && (depth(far) - 1.0).abs() < 1e-5);
        // A point at half the vertical field of view above the axis lands on the top edge.
        let z = 0.5 * (near + far);
        let q = p * glam::Vec4::new(0.0, z * (0.5 * c.fov_y).tan(), -z, 1.0);
        assert!((q.y / q.w - 1.0).abs() < 1e-5);
    }

    #[test]
    fn framing_keeps_every_corner_of_the_box_in_view_at_any_orbit() {
        let (min, max) = (Vec3::ZERO, Vec3::new(1.0, 0.5, 2.0));
        for aspect in [1.0, 16.0 / 9.0] {
            for (da, de) in [(0.0, 0.0), (1.3, 0.4), (-2.5, -1.2), (3.0, 1.5)] {
                let mut c = OrbitCamera::framing(min, max);
                c.orbit(da, de);
                for k in 0..8 {
                    let p = Vec3::new(
                        if k & 1 == 0 { min.x } else { max.x },
                        if k & 2 == 0 { min.y } else { max.y },
                        if k & 4 == 0 { min.z } else { max.z },
                    );
                    let q = ndc_of(&c, p, aspect);
                    assert!(
                        q.x.abs() <= 1.0 && q.y.abs() <= 1.0 && (0.0..=1.0).contains(&q.z),
                        "corner {p} at {q} (aspect {aspect}, orbit {da}, {de})"
                    );
                }
            }
        }
    }

    #[test]
    fn picking_a_point_on_a_slice_returns_it() {
        let mut c = box_camera();
        c.orbit(0.4, 0.2);
        let aspect = 4.0 / 3.0;
        for (axis, value) in [(0, 0.25), (1, 0.3), (2, 1.4)] {
            for (u, v) in [(0.1, 0.2), (0.5, 0.5), (0.9, 0.7)] {
                let mut p = Vec3::new(u, 0.5 * v, 2.0 * u * v + 0.2);
                p[axis] = value;
                let q = ndc_of(&c, p, aspect);
                let picked = c
                    .pick_on_plane(Vec2::new(q.x, q.y), aspect, axis, value)
                    .expect("the plane is in front of the eye");
                assert!((picked - p).length() < 1e-4, "{p} picked as {picked}");
            }
        }
        // A plane behind the eye is not picked.
        let c = OrbitCamera {
            azimuth: 0.0,
            elevation: 0.0,
            ..box_camera()
        };
        assert!(c.pick_on_plane(Vec2::ZERO, 1.0, 2, c.eye().z + 1.0).is_none());
    }

    #[test]
    fn dragging_along_an_axis_follows_the_pointer() {
        let mut c = box_camera();
        c.orbit(0.5, 0.3);
        let aspect = 1.5;
        let anchor = Vec3::new(0.4, 0.2, 1.1);
        for axis in 0..3 {
            for shift in [-0.3, 0.05, 0.6] {
                // The pointer over the anchor moved `shift` along the axis.
                let mut p = anchor;
                p[axis] += shift;
                let q = ndc_of(&c, p, aspect);
                let to = c
                    .drag_along(Vec2::new(q.x, q.y), aspect, anchor, axis)
                    .expect("the axis is not along the view");
                assert!((to - p[axis]).abs() < 1e-4, "axis {axis}: {to} for {}", p[axis]);
            }
        }
        // Looking straight along the axis, there is nothing to read.
        let mut c = box_camera();
        c.look_along(2, true);
        assert!(c.drag_along(Vec2::ZERO, 1.0, anchor, 2).is_none());
    }

    #[test]
    fn orbit_zoom_and_pan_keep_their_limits() {
        let mut c = box_camera();
        c.orbit(10.0, 10.0);
        assert!(c.elevation <= MAX_ELEVATION && c.azimuth.abs() <= std::f32::consts::PI);
        let d = c.distance;
        c.zoom(0.5);
        assert!((c.distance - 0.5 * d).abs() < 1e-6);
        c.zoom(1e-9);
        assert!((c.distance - 0.01 * c.radius).abs() < 1e-6);
        // Panning by the whole view height moves the target by the view's height at its depth,
        // across the view (not along it).
        let mut c = box_camera();
        let before = c.target;
        c.pan(Vec2::new(0.0, 1.0), 1.0);
        let moved = c.target - before;
        assert!(moved.dot(c.backward()).abs() < 1e-5);
        assert!((moved.length() - c.distance * (0.5 * c.fov_y).tan()).abs() < 1e-4);
    }
}
