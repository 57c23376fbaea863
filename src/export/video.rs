//! Video export on a background thread: frames go through a bounded channel to either an
//! `ffmpeg` subprocess (raw RGBA piped to its stdin, H.264 MP4 out) or, when ffmpeg is missing,
//! a numbered PNG sequence. The producer never blocks in [`VideoWriter::offer`].

use image::RgbaImage;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;

/// Where the frames end up.
#[derive(Clone, Debug, PartialEq)]
pub enum Sink {
    /// An MP4 file written by `ffmpeg`.
    Ffmpeg { program: String, path: PathBuf },
    /// `frame_00000.png`, `frame_00001.png`, ... in a folder.
    PngSequence { dir: PathBuf },
}

/// Why a video could not be started or finished.
#[derive(Debug, PartialEq)]
pub enum VideoError {
    /// The ffmpeg program could not be run; the PNG sequence is the alternative.
    FfmpegMissing {
        program: String,
    },
    Failed(String),
}

impl std::fmt::Display for VideoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VideoError::FfmpegMissing { program } => write!(
                f,
                "`{program}` was not found, so no MP4 can be written; install ffmpeg, or export a PNG sequence instead"
            ),
            VideoError::Failed(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for VideoError {}

/// A video being written.
pub struct VideoWriter {
    tx: Option<SyncSender<RgbaImage>>,
    worker: Option<JoinHandle<Result<u64, String>>>,
    pub sink: Sink,
    /// Frame size; every frame must have it (even numbers, as H.264 needs).
    pub size: [u32; 2],
    /// Frames dropped because the encoder was behind.
    pub dropped: u64,
}

/// Rounds a frame size down to even numbers (at least 2).
pub fn even_size(width: u32, height: u32) -> [u32; 2] {
    [(width & !1).max(2), (height & !1).max(2)]
}

/// Crops an image to `size` (top-left part) if it is larger.
pub fn fit(image: RgbaImage, size: [u32; 2]) -> RgbaImage {
    if image.width() == size[0] && image.height() == size[1] {
        image
    } else {
        image::imageops::crop_imm(&image, 0, 0, size[0], size[1]).to_image()
    }
}

impl VideoWriter {
    /// Starts an MP4 through `program` (normally `ffmpeg`) at `fps` frames per second.
    pub fn ffmpeg(program: &str, path: &Path, size: [u32; 2], fps: u32) -> Result<VideoWriter, VideoError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| VideoError::Failed(format!("cannot create {}: {e}", dir.display())))?;
        }
        let child = Command::new(program)
            .args([
                "-hide_banner",
                "-loglevel",
                "error",
                "-y",
                "-f",
                "rawvideo",
                "-pix_fmt",
                "rgba",
                "-s",
            ])
            .arg(format!("{}x{}", size[0], size[1]))
            .args([
                "-r",
                &fps.to_string(),
                "-i",
                "-",
                "-c:v",
                "libx264",
                "-pix_fmt",
                "yuv420p",
                "-movflags",
                "+faststart",
            ])
            .arg(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => VideoError::FfmpegMissing {
                    program: program.to_string(),
                },
                _ => VideoError::Failed(format!("cannot start {program}: {e}")),
            })?;
        let (tx, rx) = sync_channel(8);
        let worker = std::thread::spawn(move || encode(child, rx));
        Ok(VideoWriter {
            tx: Some(tx),
            worker: Some(worker),
            sink: Sink::Ffmpeg {
                program: program.to_string(),
                path: path.to_path_buf(),
            },
            size,
            dropped: 0,
        })
    }

    /// Starts a PNG sequence in `dir`.
    pub fn png_sequence(dir: &Path, size: [u32; 2]) -> Result<VideoWriter, VideoError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| VideoError::Failed(format!("cannot create {}: {e}", dir.display())))?;
        let (tx, rx) = sync_channel::<RgbaImage>(8);
        let out = dir.to_path_buf();
        let worker = std::thread::spawn(move || {
            let mut n = 0u64;
            for frame in rx {
                crate::export::png::save(&frame, &out.join(format!("frame_{n:05}.png")))?;
                n += 1;
            }
            Ok(n)
        });
        Ok(VideoWriter {
            tx: Some(tx),
            worker: Some(worker),
            sink: Sink::PngSequence {
                dir: dir.to_path_buf(),
            },
            size,
            dropped: 0,
        })
    }

    /// Queues a frame without waiting; drops it (and counts it) if the writer is behind.
    pub fn offer(&mut self, frame: RgbaImage) {
        if let Some(tx) = &self.tx {
            match tx.try_send(fit(frame, self.size)) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => self.dropped += 1,
            }
        }
    }

    /// Queues a frame, waiting for room (headless export, where every frame counts).
    pub fn push(&mut self, frame: RgbaImage) -> Result<(), String> {
        let tx = self.tx.as_ref().ok_or("the video is finished")?;
        tx.send(fit(frame, self.size)).map_err(|_| self.finish_error())
    }

    fn finish_error(&mut self) -> String {
        match self.worker.take().map(|w| w.join()) {
            Some(Ok(Err(e))) => e,
            _ => "the video writer stopped".to_string(),
        }
    }

    /// Closes the stream and waits for the writer; returns the number of frames written.
    pub fn finish(mut self) -> Result<u64, String> {
        self.tx = None;
        match self.worker.take().map(|w| w.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err("the video writer thread panicked".to_string()),
            None => Err("the video writer already stopped".to_string()),
        }
    }
}

/// Feeds frames to ffmpeg's stdin until the channel closes, then waits for it.
fn encode(mut child: Child, rx: Receiver<RgbaImage>) -> Result<u64, String> {
    let mut stdin = child.stdin.take().ok_or("ffmpeg has no stdin")?;
    let mut n = 0u64;
    let mut write_error = None;
    for frame in rx {
        if let Err(e) = stdin.write_all(frame.as_raw()) {
            write_error = Some(e);
            break;
        }
        n += 1;
    }
    drop(stdin);
    let out = child
        .wait_with_output()
        .map_err(|e| format!("waiting for ffmpeg failed: {e}"))?;
    if !out.status.success() || write_error.is_some() {
        return Err(format!(
            "ffmpeg failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(n)
}

/// Whether `program -version` runs.
pub fn ffmpeg_available(program: &str) -> bool {
    Command::new(program)
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}
