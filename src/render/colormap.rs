//! Colormaps as 256-entry RGBA lookup tables (sampled from `colorous`), uploaded as a 256x1
//! texture the field shader indexes with the normalised value.

/// A colormap of the field view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colormap {
    Viridis,
    Cividis,
    Turbo,
    /// Blue-white-red (ColorBrewer RdBu reversed), meant for ranges centred on zero.
    Diverging,
}

impl Colormap {
    pub const ALL: [Colormap; 4] = [
        Colormap::Viridis,
        Colormap::Cividis,
        Colormap::Turbo,
        Colormap::Diverging,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Colormap::Viridis => "viridis",
            Colormap::Cividis => "cividis",
            Colormap::Turbo => "turbo",
            Colormap::Diverging => "diverging",
        }
    }

    pub fn from_name(name: &str) -> Option<Colormap> {
        Colormap::ALL.into_iter().find(|c| c.name() == name)
    }

    /// Whether the range is made symmetric about zero.
    pub fn is_diverging(self) -> bool {
        self == Colormap::Diverging
    }

    /// The colour at `t` in `[0, 1]`, sRGB-encoded RGBA.
    pub fn color(self, t: f64) -> [u8; 4] {
        let t = t.clamp(0.0, 1.0);
        let c = match self {
            Colormap::Viridis => colorous::VIRIDIS.eval_continuous(t),
            Colormap::Cividis => colorous::CIVIDIS.eval_continuous(t),
            Colormap::Turbo => colorous::TURBO.eval_continuous(t),
            Colormap::Diverging => colorous::RED_BLUE.eval_continuous(1.0 - t),
        };
        [c.r, c.g, c.b, 255]
    }

    /// The 256-entry table, entry `k` at `t = k / 255`.
    pub fn lut(self) -> Vec<[u8; 4]> {
        (0..256).map(|k| self.color(k as f64 / 255.0)).collect()
    }
}

/// Where `v` lies on the colour scale (0 to 1) of `range`: linear, or logarithmic in `|v|` from
/// `range[0]` (a diverging map's halves mirrored about 1/2), as `normalise` in
/// `shaders/colormap.wgsl` maps the field view's values.
pub fn scale_position(v: f32, range: [f32; 2], log_scale: bool, diverging: bool) -> f32 {
    let [lo, hi] = range;
    if log_scale {
        let l = ((v.abs().max(lo).ln() - lo.ln()) / (hi.ln() - lo.ln())).clamp(0.0, 1.0);
        return if diverging { 0.5 + 0.5 * v.signum() * l } else { l };
    }
    ((v - lo) / (hi - lo)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_positions_are_linear_or_logarithmic() {
        assert_eq!(scale_position(0.25, [0.0, 1.0], false, false), 0.25);
        assert_eq!(scale_position(-3.0, [0.0, 1.0], false, false), 0.0);
        assert!((scale_position(0.1, [0.01, 1.0], true, false) - 0.5).abs() < 1e-6);
        assert!((scale_position(-0.1, [0.01, 1.0], true, true) - 0.25).abs() < 1e-6);
    }

    #[test]
    fn diverging_is_blue_white_red() {
        let lut = Colormap::Diverging.lut();
        assert!(lut[0][2] > lut[0][0], "low end blue");
        assert!(lut[255][0] > lut[255][2], "high end red");
        let mid = Colormap::Diverging.color(0.5);
        assert!(mid.iter().take(3).all(|&c| c > 230), "centre near white: {mid:?}");
    }
}
