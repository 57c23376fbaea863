//! Exports of what the app shows: PNG images and videos (ffmpeg, or a PNG sequence).

pub mod png;
pub mod video;
