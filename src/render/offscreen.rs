//! Offscreen render targets and their readback into an RGBA image (headless rendering,
//! screenshots at a chosen resolution, video frames).

use image::RgbaImage;

/// Format of every offscreen target (gamma-space, like the window surface).
pub const FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;

/// Bytes per pixel of [`FORMAT`].
const PIXEL_BYTES: u32 = 4;

/// Largest staging buffer of one readback band: larger images are read back in bands of rows,
/// so the image size is limited by the device's largest texture, not by its largest buffer.
const BAND_BYTES: u64 = 64 << 20;

/// A colour texture that can be rendered to and copied out.
pub struct Target {
    pub texture: wgpu::Texture,
    pub view: wgpu::TextureView,
    pub width: u32,
    pub height: u32,
}

/// Checks that an image of `width x height` pixels fits the device: both sides from 1 to its
/// largest 2D texture dimension. The error names the size and the limit.
pub fn check_size(device: &wgpu::Device, width: u32, height: u32) -> Result<(), String> {
    let max = device.limits().max_texture_dimension_2d;
    if (1..=max).contains(&width) && (1..=max).contains(&height) {
        Ok(())
    } else {
        Err(format!(
            "image size {width}x{height}: each side must be from 1 to {max} pixels, the largest texture this GPU \
             renders"
        ))
    }
}

/// A `width x height` 2D texture of one mip level and sample (a render target or depth buffer).
pub fn attachment(
    device: &wgpu::Device,
    label: &str,
    width: u32,
    height: u32,
    format: wgpu::TextureFormat,
    usage: wgpu::TextureUsages,
) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats: &[],
    })
}

impl Target {
    /// A target of `width x height` pixels, or why the device cannot hold it ([`check_size`]).
    pub fn new(device: &wgpu::Device, width: u32, height: u32) -> Result<Target, String> {
        check_size(device, width, height)?;
        let usage = wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::COPY_SRC;
        let texture = attachment(device, "offscreen", width, height, FORMAT, usage);
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        Ok(Target {
            texture,
            view,
            width,
            height,
        })
    }

    /// Copies the texture back to the CPU (blocking until the GPU is done), in bands of rows
    /// whose staging buffer stays within [`BAND_BYTES`] and the device's largest buffer.
    pub fn read(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<RgbaImage, String> {
        self.read_in_bands(device, queue, BAND_BYTES)
    }

    /// [`Target::read`] with staging buffers of at most `band_bytes` (at least one row).
    fn read_in_bands(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        band_bytes: u64,
    ) -> Result<RgbaImage, String> {
        let (width, height) = (self.width, self.height);
        let row = (width * PIXEL_BYTES).div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT)
            * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let band_bytes = band_bytes.min(device.limits().max_buffer_size);
        let band_rows = u32::try_from(band_bytes / u64::from(row))
            .unwrap_or(u32::MAX)
            .clamp(1, height);
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: u64::from(row) * u64::from(band_rows),
            usage: wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ,
            mapped_at_creation: false,
        });
        let line = (width * PIXEL_BYTES) as usize;
        let mut pixels = Vec::with_capacity(line * height as usize);
        let mut y0 = 0;
        while y0 < height {
            let rows = band_rows.min(height - y0);
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("readback"),
            });
            encoder.copy_texture_to_buffer(
                wgpu::TexelCopyTextureInfo {
                    texture: &self.texture,
                    mip_level: 0,
                    origin: wgpu::Origin3d { x: 0, y: y0, z: 0 },
                    aspect: wgpu::TextureAspect::All,
                },
                wgpu::TexelCopyBufferInfo {
                    buffer: &buffer,
                    layout: wgpu::TexelCopyBufferLayout {
                        offset: 0,
                        bytes_per_row: Some(row),
                        rows_per_image: Some(rows),
                    },
                },
                wgpu::Extent3d {
                    width,
                    height: rows,
                    depth_or_array_layers: 1,
                },
            );
            queue.submit([encoder.finish()]);
            let slice = buffer.slice(..u64::from(row) * u64::from(rows));
            super::gpu::read_mapped(device, slice, |data| {
                for r in data.chunks_exact(row as usize) {
                    pixels.extend_from_slice(&r[..line]);
                }
            })?;
            buffer.unmap();
            y0 += rows;
        }
        RgbaImage::from_raw(width, height, pixels).ok_or_else(|| "readback size mismatch".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A texture filled with known bytes (`write_texture`) reads back the same whole and in
    /// bands of a few rows; sizes outside the device's texture limit are refused.
    #[test]
    fn banded_readback_returns_the_texture() {
        let gpu = match crate::render::gpu::headless() {
            Ok(g) => g,
            Err(e) => {
                eprintln!("banded_readback_returns_the_texture: skipped, no GPU adapter: {e}");
                return;
            }
        };
        let (w, h) = (70u32, 37u32);
        let mut target = Target::new(&gpu.device, w, h).unwrap();
        // The same texture with `COPY_DST`, to be written from the CPU.
        let usage = wgpu::TextureUsages::COPY_DST | wgpu::TextureUsages::COPY_SRC;
        target.texture = attachment(&gpu.device, "written", w, h, FORMAT, usage);
        let bytes: Vec<u8> = (0..w * h * PIXEL_BYTES).map(|i| (i * 7 % 251) as u8).collect();
        gpu.queue.write_texture(
            target.texture.as_image_copy(),
            &bytes,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(w * PIXEL_BYTES),
                rows_per_image: Some(h),
            },
            wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
        );
        let whole = target.read(&gpu.device, &gpu.queue).unwrap();
        assert_eq!(whole.as_raw(), &bytes);
        // Bands of 3 rows (a padded row is 512 bytes), the last one shorter.
        let banded = target
            .read_in_bands(&gpu.device, &gpu.queue, 3 * 512 + 100)
            .unwrap();
        assert_eq!(banded.as_raw(), &bytes);
        let max = gpu.device.limits().max_texture_dimension_2d;
        for (w, h) in [(0, 10), (10, 0), (max + 1, 10), (10, max + 1)] {
            let e = Target::new(&gpu.device, w, h).err().unwrap();
            assert!(e.contains(&format!("from 1 to {max} pixels")), "{e}");
        }
    }
}
