//! Video export: an MP4 through ffmpeg that ffprobe can read, and the PNG-sequence fallback
//! when the ffmpeg program is missing.

mod common;

use flowlab::export::video::{Sink, VideoError, VideoWriter, ffmpeg_available};
use image::{Rgba, RgbaImage};
use std::process::Command;

fn frames(n: u32, w: u32, h: u32) -> impl Iterator<Item = RgbaImage> {
    (0..n).map(move |k| {
        RgbaImage::from_fn(w, h, |x, y| {
            Rgba([(x * 4) as u8, (y * 4) as u8, (k * 20) as u8, 255])
        })
    })
}

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn mp4_through_ffmpeg_is_playable() {
    if !ffmpeg_available("ffmpeg") {
        assert!(!common::in_ci(), "CI is set but ffmpeg is not installed");
        eprintln!("mp4_through_ffmpeg_is_playable: skipped, ffmpeg is not installed");
        return;
    }
    let path = tmp("video_mp4").join("out.mp4");
    let mut w = VideoWriter::ffmpeg("ffmpeg", &path, [64, 48], 10).unwrap();
    for f in frames(12, 64, 48) {
        w.push(f).unwrap();
    }
    assert_eq!(w.finish().unwrap(), 12);
    let probe = Command::new("ffprobe")
        .args(["-v", "error", "-count_frames", "-select_streams", "v:0"])
        .args([
            "-show_entries",
            "stream=codec_name,width,height,nb_read_frames",
            "-of",
            "default=noprint_wrappers=1",
        ])
        .arg(&path)
        .output()
        .expect("ffprobe runs");
    let out = String::from_utf8_lossy(&probe.stdout);
    assert!(
        probe.status.success(),
        "ffprobe failed: {}",
        String::from_utf8_lossy(&probe.stderr)
    );
    for line in ["codec_name=h264", "width=64", "height=48", "nb_read_frames=12"] {
        assert!(
            out.lines().any(|l| l == line),
            "ffprobe says:\n{out}\nexpected {line}"
        );
    }
}

#[test]
fn missing_ffmpeg_is_reported_and_png_sequence_works() {
    let dir = tmp("video_fallback");
    let err = VideoWriter::ffmpeg("flowlab-test-no-such-ffmpeg", &dir.join("out.mp4"), [32, 32], 10)
        .err()
        .expect("a missing program is an error");
    assert_eq!(
        err,
        VideoError::FfmpegMissing {
            program: "flowlab-test-no-such-ffmpeg".into()
        }
    );
    assert!(err.to_string().contains("PNG sequence"));
    let seq = dir.join("frames");
    let mut w = VideoWriter::png_sequence(&seq, [32, 32]).unwrap();
    assert_eq!(w.sink, Sink::PngSequence { dir: seq.clone() });
    for f in frames(5, 40, 36) {
        w.push(f).unwrap();
    }
    assert_eq!(w.finish().unwrap(), 5);
    for k in 0..5 {
        let img = image::open(seq.join(format!("frame_{k:05}.png"))).unwrap();
        assert_eq!(
            (img.width(), img.height()),
            (32, 32),
            "frames are cropped to the video size"
        );
    }
}
