//! PNG files of rendered images.

use image::RgbaImage;
use std::path::Path;

/// Writes `image` as a PNG file, creating the parent folder.
pub fn save(image: &RgbaImage, path: &Path) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    image
        .save_with_format(path, image::ImageFormat::Png)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}
