//! `flowlab render` end to end (in process): a PNG of the cavity and a short video.

mod common;

use clap::Parser;
use flowlab::cli::render::{Args, run};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: Args,
}

#[test]
fn renders_png_and_video() {
    if common::headless_or_skip("renders_png_and_video").is_none() {
        return;
    }
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("render_cli");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let case = dir.join("cavity.toml");
    std::fs::write(&case, common::cavity_toml(100.0, 24)).unwrap();
    let png = dir.join("frame.png");
    let video = dir.join("out.mp4");
    let cli = Cli::try_parse_from([
        "render",
        case.to_str().unwrap(),
        "--set",
        "physics.re=400",
        "--steps",
        "50",
        "--view",
        "vorticity",
        "--contours",
        "10",
        "--streamlines",
        "grid:4",
        "--size",
        "320x240",
        "--out",
        png.to_str().unwrap(),
        "--video",
        video.to_str().unwrap(),
        "--frames",
        "6",
        "--steps-per-frame",
        "5",
    ])
    .unwrap();
    run(&cli.args).unwrap();
    let img = image::open(&png).unwrap();
    assert_eq!((img.width(), img.height()), (320, 240));
    if flowlab::export::video::ffmpeg_available("ffmpeg") {
        assert!(std::fs::metadata(&video).unwrap().len() > 0);
    } else {
        assert!(video.with_extension("frames").join("frame_00005.png").exists());
    }
    let bad = Cli::try_parse_from([
        "render",
        case.to_str().unwrap(),
        "--size",
        "12",
        "--out",
        png.to_str().unwrap(),
    ])
    .unwrap();
    assert!(run(&bad.args).unwrap_err().contains("WIDTHxHEIGHT"));
}
