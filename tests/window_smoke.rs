//! Opens the real window (under Xvfb when no display is set), runs a few frames, saves a
//! screenshot with the UI and exits cleanly. Runs without the libtest harness so the event loop
//! owns the main thread. Without a display or Xvfb it is skipped, except under CI, where it fails.

mod common;

use flowlab::app::{Args, run_with};
use std::process::{Child, Command, Stdio};

struct Xvfb(Child);

impl Drop for Xvfb {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts Xvfb on a free display number if no display is set; None if there is one already.
fn display() -> Result<Option<Xvfb>, String> {
    if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() {
        return Ok(None);
    }
    for n in 90..110 {
        if std::path::Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() {
            continue;
        }
        let child = Command::new("Xvfb")
            .args([
                format!(":{n}").as_str(),
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("no display and Xvfb cannot be started ({e}); install xvfb"))?;
        let guard = Xvfb(child);
        for _ in 0..100 {
            if std::path::Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() {
                // SAFETY: no other thread exists yet in this harness-less test binary.
                unsafe { std::env::set_var("DISPLAY", format!(":{n}")) };
                return Ok(Some(guard));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        return Err("Xvfb did not come up".into());
    }
    Err("no free X display number".into())
}

fn main() {
    let _xvfb = match display() {
        Ok(x) => x,
        Err(e) if common::in_ci() => panic!("window_smoke: CI is set but there is no display: {e}"),
        Err(e) => {
            println!("test window_smoke ... skipped: {e}");
            println!("0 passed, 0 failed, 1 skipped");
            return;
        }
    };
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("window_smoke");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let case = dir.join("lid_driven_cavity.toml");
    std::fs::write(&case, common::cavity_toml(400.0, 32)).unwrap();
    let shot = dir.join("window.png");
    let result = run_with(
        Args {
            case: Some(case),
            set: vec![],
            frames: Some(20),
            screenshot: Some(shot.clone()),
            paused: false,
        },
        true,
    );
    if let Err(e) = &result {
        if !common::in_ci() && e.contains("no GPU adapter") {
            println!("test window_smoke ... skipped: {e}");
            println!("0 passed, 0 failed, 1 skipped");
            return;
        }
    }
    result.expect("the app runs and exits cleanly");
    let img = image::open(&shot).expect("the screenshot exists").to_rgba8();
    assert!(
        img.width() >= 640 && img.height() >= 400,
        "window-sized screenshot"
    );
    // The view shows the colour-mapped field: many distinct colours, not a blank window.
    let mut colours: Vec<[u8; 4]> = img.pixels().step_by(97).map(|p| p.0).collect();
    colours.sort_unstable();
    colours.dedup();
    assert!(
        colours.len() > 50,
        "only {} distinct colours in the screenshot",
        colours.len()
    );
    // A 3D case opens in the 3D view (a process of its own: an event loop runs once a process).
    let shot3d = dir.join("window3d.png");
    let out = std::process::Command::new(common::flowlab_bin())
        .args(["--frames", "15", "--screenshot"])
        .arg(&shot3d)
        .arg(common::root().join("cases").join("cavity_3d_re100.toml"))
        .args([
            "--set",
            "grid.nx=16",
            "--set",
            "grid.ny=16",
            "--set",
            "grid.nz=16",
        ])
        .args(["--set", "solver.backend=cpu"])
        .output()
        .expect("flowlab runs");
    assert!(
        out.status.success(),
        "the 3D case's window failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let img = image::open(&shot3d).expect("the 3D screenshot exists").to_rgba8();
    // Right of the panel: the slice's colour map and the isosurface, not a blank canvas.
    let canvas: Vec<[u8; 4]> = img
        .enumerate_pixels()
        .filter(|(x, _, _)| *x > img.width() / 2)
        .map(|(_, _, p)| p.0)
        .step_by(13)
        .collect();
    let coloured = canvas
        .iter()
        .filter(|p| {
            let [r, g, b, _] = p.map(i32::from);
            (r - g).abs().max((g - b).abs()).max((r - b).abs()) > 40
        })
        .count();
    assert!(
        coloured * 20 > canvas.len(),
        "{coloured} of {} canvas samples are coloured in the 3D view",
        canvas.len()
    );
    println!(
        "test window_smoke ... ok ({}, {})",
        shot.display(),
        shot3d.display()
    );
    println!("1 passed, 0 failed");
}
