//! The `flowlab` command line: outputs, overwrite protection and error messages.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn flowlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flowlab"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("flowlab runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The numbers of a CSV table's last row.
fn last_row(csv: &str) -> Vec<f64> {
    csv.lines()
        .last()
        .unwrap()
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect()
}

fn out_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn run_writes_profile_summary_and_residuals_for_a_shock_tube() {
    let out = out_dir("cli_sod");
    let o = flowlab(&[
        "run",
        "cases/sod.toml",
        "--set",
        "grid.nx=200",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let profile = std::fs::read_to_string(out.join("profile.csv")).unwrap();
    assert!(
        profile.starts_with("x,rho,u,p,e,mach,exact_rho,"),
        "{}",
        &profile[..80]
    );
    assert_eq!(profile.lines().count(), 201);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["time"].as_f64(), Some(0.2), "lands on t_end exactly");
    assert_eq!(summary["grid"]["n"][0].as_u64(), Some(200));
    assert!(summary["results"]["l1_error"]["rho"].as_f64().unwrap() < 0.01);
    assert!(summary["cell_updates_per_second"].as_f64().unwrap() > 0.0);
    let residuals = std::fs::read_to_string(out.join("residuals.csv")).unwrap();
    assert!(residuals.starts_with("step,time,dt"));
    // A second run into the same folder is refused, and allowed with --force.
    let o = flowlab(&["run", "cases/sod.toml", "--quiet", "--out", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--force"), "{}", stderr(&o));
    let o = flowlab(&[
        "run",
        "cases/sod.toml",
        "--quiet",
        "--force",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

/// A 3D run writes 3D image data with the 3D fields, samples a 3D line and a plane, writes a
/// speed isosurface as PLY, and summarises kinetic energy and centreline extrema; a 2D line, a
/// plane outside the box or an isosurface of no field is refused before the run, naming the
/// option.
#[test]
fn run_writes_3d_fields_lines_and_planes() {
    let out = out_dir("cli_cavity_3d");
    let grid = ["--set", "grid.nx=12", "--set", "grid.ny=10", "--set", "grid.nz=8"];
    let mut args = vec!["run", "cases/cavity_3d_re100.toml"];
    args.extend(grid);
    args.extend([
        "--steps",
        "10",
        "--line",
        "0.5,0,0.5,0.5,1,0.5,21",
        "--plane",
        "z=0.5",
        "--iso",
        "speed=0.01",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let o = flowlab(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let vti = std::fs::read_to_string(out.join("fields.vti")).unwrap();
    assert!(vti.contains("WholeExtent=\"0 12 0 10 0 8\""));
    for name in [
        "u",
        "v",
        "w",
        "vorticity_x",
        "vorticity_magnitude",
        "q_criterion",
        "lambda2",
        "helicity",
    ] {
        assert!(vti.contains(&format!("Name=\"{name}\"")), "{name} missing");
    }
    let line = std::fs::read_to_string(out.join("line_0.csv")).unwrap();
    assert!(line.starts_with("s,x,y,z,u,v,w,speed"), "{line}");
    assert_eq!(line.lines().count(), 22);
    // The lid end of the vertical centreline moves with the lid.
    let last = last_row(&line);
    assert!((last[4] - 1.0).abs() < 1e-12, "u at the lid: {}", last[4]);
    let plane = std::fs::read_to_string(out.join("plane_0.csv")).unwrap();
    assert!(plane.starts_with("x,y,z,u,v,w"), "{plane}");
    assert_eq!(plane.lines().count(), 1 + 12 * 10);
    let ply = std::fs::read(out.join("iso_0.ply")).unwrap();
    let header = String::from_utf8_lossy(&ply[..ply.len().min(400)]).to_string();
    assert!(
        header.starts_with("ply\nformat binary_little_endian 1.0"),
        "{header}"
    );
    let faces: usize = header
        .lines()
        .find_map(|l| l.strip_prefix("element face "))
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(faces > 0, "the speed surface of the moving lid's flow is empty");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let r = &summary["results"];
    assert!(r["kinetic_energy"].as_f64().unwrap() > 0.0);
    assert!(r["centreline_u_min"].as_f64().unwrap() < 0.0, "{r}");
    assert_eq!(summary["grid"]["dim"].as_u64(), Some(3));
    for (option, value, says) in [
        ("--line", "0,0,1,1,5", "3D case"),
        ("--plane", "y=2", "outside the domain"),
        ("--plane", "q=1", "x, y, z"),
        ("--iso", "nosuch=0.1", "speed"),
        ("--iso", "speed", "FIELD=LEVEL"),
    ] {
        let mut args = vec!["run", "cases/cavity_3d_re100.toml"];
        args.extend(grid);
        args.extend([
            "--steps",
            "1",
            option,
            value,
            "--quiet",
            "--force",
            "--out",
            out.to_str().unwrap(),
        ]);
        let o = flowlab(&args);
        assert!(!o.status.success());
        assert!(
            stderr(&o).contains(option) && stderr(&o).contains(says),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn run_writes_vti_and_line_samples_for_the_cavity() {
    let out = out_dir("cli_cavity");
    let o = flowlab(&[
        "run",
        "cases/lid_driven_cavity_re100.toml",
        "--set",
        "grid.nx=32",
        "--set",
        "grid.ny=32",
        "--steps",
        "20",
        "--line",
        "0.5,0,0.5,1,11",
        "--line",
        "0,0.5,1,0.5,5",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let vti = std::fs::read_to_string(out.join("fields.vti")).unwrap();
    for name in ["u", "v", "p", "vorticity", "stream_function"] {
        assert!(vti.contains(&format!("Name=\"{name}\"")), "{name} missing");
    }
    assert!(vti.contains("WholeExtent=\"0 32 0 32 0 1\""));
    let line = std::fs::read_to_string(out.join("line_0.csv")).unwrap();
    assert!(line.starts_with("s,x,y,u,v,speed,p,vorticity"), "{line}");
    assert_eq!(line.lines().count(), 12);
    // The lid end of the vertical centreline has u = 1 (the wall value).
    let last = last_row(&line);
    assert!((last[3] - 1.0).abs() < 1e-12, "u at the lid: {}", last[3]);
    assert_eq!(
        std::fs::read_to_string(out.join("line_1.csv"))
            .unwrap()
            .lines()
            .count(),
        6
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["steps"].as_u64(), Some(20));
    assert!(summary["results"]["psi_min"].as_f64().unwrap() < 0.0);
}

#[test]
fn errors_name_the_file_key_and_choices_and_exit_nonzero() {
    let dir = out_dir("cli_bad");
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.toml");
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("cases/sod.toml")).unwrap();
    std::fs::write(&bad, text.replace("riemann = \"hllc\"", "riemann = \"hlcc\"")).unwrap();
    let o = flowlab(&[
        "run",
        bad.to_str().unwrap(),
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("bad.toml:") && e.contains("solver.riemann") && e.contains("hllc"),
        "{e}"
    );

    let o = flowlab(&[
        "run",
        "cases/sod.toml",
        "--set",
        "grid.nx=2",
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--set grid.nx=2: key `grid.nx`: must be at least 4"),
        "{}",
        stderr(&o)
    );

    let o = flowlab(&[
        "run",
        "cases/missing.toml",
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("cases/missing.toml") && stderr(&o).contains("cannot read"),
        "{}",
        stderr(&o)
    );

    let o = flowlab(&[
        "run",
        "cases/sod.toml",
        "--line",
        "0,0,1",
        "--out",
        dir.join("o").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("x0,y0,x1,y1,N"), "{}", stderr(&o));
}

#[test]
fn a_failing_run_reports_the_step_and_a_remedy_and_keeps_its_summary() {
    let out = out_dir("cli_fail");
    // Roe without the entropy fix and without limiting produces negative pressure on the 123 problem.
    let o = flowlab(&[
        "run",
        "cases/toro_test2.toml",
        "--set",
        "solver.riemann=roe_no_fix",
        "--set",
        "solver.limiter=none",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("step") && e.contains("cfl"), "{e}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(
        summary["error"].as_str().unwrap().contains("diverged"),
        "{summary}"
    );
}

/// `flowlab run CASE --quiet EXTRA... --out OUT`.
fn run_quiet(case: &str, extra: &[&str], out: &Path) -> Output {
    let mut args = vec!["run", case, "--quiet"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--out", out.to_str().unwrap()]);
    flowlab(&args)
}

fn summary_of(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn run_rejects_stop_options_that_never_end_with_the_case_file_rules() {
    let out = out_dir("cli_bad_stop");
    for (option, value, rule) in [
        ("--t-end", "nan", "finite number > 0"),
        ("--t-end", "-1", "finite number > 0"),
        ("--t-end", "inf", "finite number > 0"),
        ("--until-steady", "0", "finite number > 0"),
        ("--steps", "0", "at least 1"),
    ] {
        let o = run_quiet("cases/sod.toml", &[option, value], &out);
        assert_eq!(o.status.code(), Some(1), "{option} {value}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(&format!("option `{option}`")) && e.contains(rule),
            "{option} {value}: {e}"
        );
    }
}

#[test]
fn run_checks_lines_and_the_output_folder_before_the_run() {
    let out = out_dir("cli_bad_line");
    let cavity = "cases/lid_driven_cavity_re100.toml";
    let o = run_quiet(cavity, &["--steps", "1", "--line", "2,2,3,3,10"], &out);
    let e = stderr(&o);
    assert!(!o.status.success() && e.contains("outside the domain"), "{e}");
    assert!(!out.join("summary.json").exists(), "refused before the run");
    // A folder nothing can be written into (procfs refuses new files, even to root).
    let proc_self = Path::new("/proc/self");
    if proc_self.is_dir() {
        let o = run_quiet("cases/sod.toml", &["--steps", "1"], proc_self);
        let e = stderr(&o);
        assert!(
            !o.status.success() && e.contains("cannot write into the output folder /proc/self"),
            "{e}"
        );
    }
}

#[test]
fn a_pressure_solve_stopped_at_its_cap_is_warned_about_and_marked_in_the_summary() {
    let cavity = "cases/lid_driven_cavity_re100.toml";
    let small = ["--steps", "2", "--set", "grid.nx=32", "--set", "grid.ny=32"];
    let out = out_dir("cli_capped");
    let long = [
        "--set",
        "grid.extents=[1000.0, 1.0]",
        "--set",
        "solver.max_iterations=20",
    ];
    let o = run_quiet(cavity, &[&small[..], &long[..]].concat(), &out);
    let e = stderr(&o);
    assert!(o.status.success(), "{e}");
    assert_eq!(e.matches("iteration cap").count(), 1, "one warning per run: {e}");
    let summary = summary_of(&out);
    assert_eq!(summary["pressure_solve_capped"], true, "{summary}");
    assert_eq!(summary["capped_pressure_solves"].as_u64(), Some(2), "{summary}");
    assert!(
        summary["warnings"][0].as_str().unwrap().contains("iteration cap"),
        "{summary}"
    );
    // A converging run says so too.
    let out = out_dir("cli_not_capped");
    let o = run_quiet(cavity, &small, &out);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary = summary_of(&out);
    assert_eq!(summary["pressure_solve_capped"], false, "{summary}");
    assert_eq!(summary["warnings"].as_array().map(Vec::len), Some(0), "{summary}");
}

#[test]
fn bench_rejects_nonsense_options_by_name() {
    for (option, value) in [
        ("--seconds", "-1"),
        ("--seconds", "nan"),
        ("--batch", "0"),
        ("--tolerance", "2"),
    ] {
        let o = flowlab(&["bench", option, value]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{option} {value}: {e}");
        assert!(e.contains(&format!("option `{option}`")), "{option} {value}: {e}");
    }
}
