//! Case-file errors: each names the file, the key (with line and column) and what is allowed.

use super::*;

const CAVITY: &str = include_str!("../../cases/lid_driven_cavity_re100.toml");

fn err(text: &str) -> CaseError {
    Case::parse(text, "bad.toml").expect_err("the case must be rejected")
}

#[test]
fn shipped_cavity_cases_load() {
    for re in [100, 400, 1000] {
        let path = format!(
            "{}/cases/lid_driven_cavity_re{re}.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        let case = Case::load(Path::new(&path)).expect("shipped case loads");
        assert_eq!(case.spec.physics.re, Some(re as f64));
    }
}

#[test]
fn unknown_key_names_file_key_line_and_column() {
    let text = CAVITY.replace("cfl = 0.8", "cfl = 0.8\nclf = 0.3");
    let e = err(&text);
    let shown = e.to_string();
    assert!(shown.starts_with("bad.toml:"), "{shown}");
    assert!(shown.contains("unknown field `clf`"), "{shown}");
    assert!(shown.contains("cfl"), "lists the valid keys: {shown}");
    let line = text.lines().position(|l| l.starts_with("clf")).unwrap() + 1;
    match e.origin {
        Origin::File {
            line_col: Some((l, _)),
            ..
        } => assert_eq!(l, line, "{shown}"),
        o => panic!("no position: {o:?}"),
    }
}

#[test]
fn bad_choice_lists_the_valid_ones() {
    let e = err(&CAVITY.replace("limiter = \"van_leer\"", "limiter = \"vanleer\""));
    let shown = e.to_string();
    assert_eq!(e.key.as_deref(), Some("solver.limiter"), "{shown}");
    for choice in ["minmod", "superbee", "van_leer", "mc", "van_albada"] {
        assert!(shown.contains(choice), "{shown}");
    }
    let e = err(&CAVITY.replace("pressure_solver = \"multigrid\"", "pressure_solver = \"fourier\""));
    for choice in ["jacobi", "pcg", "multigrid", "fft"] {
        assert!(e.to_string().contains(choice), "{e}");
    }
}

#[test]
fn wrong_type_is_reported_at_the_key() {
    let e = err(&CAVITY.replace("nx = 128", "nx = \"many\""));
    assert_eq!(e.key.as_deref(), Some("grid.nx"), "{e}");
    let line = CAVITY.lines().position(|l| l.starts_with("nx")).unwrap() + 1;
    assert!(e.to_string().contains(&format!("bad.toml:{line}:")), "{e}");
}

#[test]
fn impossible_values_are_rejected_with_the_rule() {
    let cases = [
        ("nx = 128", "nx = 3", "grid.nx", "at least 4"),
        ("re = 100.0", "re = -5.0", "physics.re", "> 0"),
        ("re = 100.0", "re = 0.0", "physics.re", "> 0"),
        ("cfl = 0.8", "cfl = 0.0", "solver.cfl", "> 0"),
        ("cfl = 0.8", "cfl = 1.5", "solver.cfl", "cfl <= 1"),
        (
            "tolerance = 1e-7",
            "tolerance = 2.0",
            "solver.tolerance",
            "(0, 1)",
        ),
        (
            "extents = [1.0, 1.0]",
            "extents = [1.0]",
            "grid.extents",
            "2 lengths",
        ),
    ];
    for (from, to, key, rule) in cases {
        let e = err(&CAVITY.replace(from, to));
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
        assert!(e.to_string().contains(rule), "{e}");
        assert!(
            matches!(
                e.origin,
                Origin::File {
                    line_col: Some(_),
                    ..
                }
            ),
            "{e}"
        );
    }
}

#[test]
fn inconsistent_periodic_sides_are_rejected() {
    let text = CAVITY.replacen(
        "[boundary.left]\ntype = \"wall\"",
        "[boundary.left]\ntype = \"periodic\"",
        1,
    );
    let e = err(&text);
    assert_eq!(e.key.as_deref(), Some("boundary.left"), "{e}");
    assert!(e.to_string().contains("boundary.right"), "{e}");
}

#[test]
fn missing_side_and_foreign_keys_are_rejected() {
    let text = CAVITY.replace("[boundary.bottom]\ntype = \"wall\"\n", "");
    assert_eq!(err(&text).key.as_deref(), Some("boundary.bottom"));
    let text = CAVITY.replace("[physics]\n", "[physics]\ngamma = 1.4\n");
    assert_eq!(err(&text).key.as_deref(), Some("physics.gamma"));
    let text = CAVITY.replace("[physics]\n", "[physics]\nviscosity = 0.01\n");
    assert!(err(&text).to_string().contains("not both"));
}

#[test]
fn syntax_errors_have_positions() {
    let e = err("[case\nname = 1");
    assert!(
        matches!(
            e.origin,
            Origin::File {
                line_col: Some((1, _)),
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("not valid TOML"), "{e}");
}

#[test]
fn set_overrides_with_validation_and_no_change_on_error() {
    let mut case = Case::parse(CAVITY, "cavity.toml").unwrap();
    case.set_assignment("grid.nx=64").unwrap();
    case.set_assignment("physics.re=400").unwrap();
    case.set_assignment("solver.limiter=mc").unwrap();
    case.set_assignment("solver.convection = tvd").unwrap();
    assert_eq!(case.spec.grid.nx, 64);
    assert_eq!(case.spec.physics.re, Some(400.0));
    assert_eq!(
        case.spec.solver.limiter,
        Some(crate::solver::limiter::Limiter::Mc)
    );
    let before = case.to_toml();
    for bad in [
        "grid.nx=2",
        "physics.re=-1",
        "solver.limiter=best",
        "solver.cfll=0.3",
        "nonsense",
        "grid.nx.deep=1",
    ] {
        let e = case.set_assignment(bad).expect_err(bad);
        assert!(matches!(e.origin, Origin::Override { .. }), "{bad}: {e}");
        assert!(e.to_string().starts_with(&format!("--set {bad}")), "{e}");
    }
    assert_eq!(case.to_toml(), before, "a rejected override must change nothing");
    // Saving keeps comments and the changed values, and reloads to the same spec.
    let saved = case.to_toml();
    assert!(saved.contains("# the lid"), "comments survive");
    let again = Case::parse(&saved, "saved.toml").unwrap();
    assert_eq!(again.spec, case.spec);
}

#[test]
fn single_precision_rejects_tolerances_it_cannot_reach() {
    let mut case = Case::parse(CAVITY, "cavity.toml").unwrap();
    let e = case
        .set_assignment("solver.precision=f32")
        .expect_err("1e-7 is out of f32's reach");
    assert_eq!(e.key.as_deref(), Some("solver.tolerance"), "{e}");
    assert!(e.to_string().contains("single precision"), "{e}");
    case.set_assignment("solver.tolerance=1e-5").unwrap();
    case.set_assignment("solver.precision=f32").unwrap();
}

#[test]
fn unknown_keys_beside_a_type_without_settings_are_rejected() {
    const SOD: &str = include_str!("../../cases/sod.toml");
    for (text, set) in [
        (SOD, "boundary.right.anything=1"),
        (SOD, "boundary.left.velocity=1"),
        (CAVITY, "initial.anything=1"),
    ] {
        let mut case = Case::parse(text, "case.toml").unwrap();
        let e = case.set_assignment(set).expect_err(set);
        let shown = e.to_string();
        assert!(shown.contains("unknown field"), "{set}: {shown}");
    }
    // In a file: the position of the key, and the type keeps working (its alias too).
    let text = SOD.replace(
        "[boundary.right]\ntype = \"transmissive\"",
        "[boundary.right]\ntype = \"transmissive\"\nspeed = 2.0",
    );
    assert_ne!(text, SOD, "the sod case has a transmissive right side");
    let e = err(&text);
    let line = text.lines().position(|l| l.starts_with("speed")).unwrap() + 1;
    assert!(e.to_string().starts_with(&format!("bad.toml:{line}:")), "{e}");
    assert!(e.to_string().contains("unknown field `speed`"), "{e}");
    let case = Case::parse(SOD, "sod.toml").unwrap();
    assert_eq!(case.spec.boundary.right, Some(Boundary::Outflow {}));
}

#[test]
fn stop_values_that_never_end_a_run_are_rejected() {
    let mut case = Case::parse(CAVITY, "cavity.toml").unwrap();
    for (set, key) in [
        ("stop.t_end=nan", "stop.t_end"),
        ("stop.t_end=inf", "stop.t_end"),
        ("stop.t_end=0", "stop.t_end"),
        ("stop.steady_tol=-1", "stop.steady_tol"),
        ("stop.steps=0", "stop.steps"),
    ] {
        let e = case.set_assignment(set).expect_err(set);
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
    }
}

#[test]
fn physically_meaningless_fluid_and_solver_values_are_rejected_with_the_reason() {
    const POWER_LAW: &str = include_str!("../../cases/poiseuille_power_law_periodic.toml");
    let mut case = Case::parse(POWER_LAW, "power_law.toml").unwrap();
    for (set, key, why) in [
        ("fluid.n=1000", "fluid.n", "shear-thickening"),
        ("fluid.n=0.01", "fluid.n", "shear-thinning"),
        ("fluid.k=1e300", "fluid.k", "glass"),
        (
            "solver.max_iterations=100000000",
            "solver.max_iterations",
            "1000000",
        ),
    ] {
        let e = case.set_assignment(set).expect_err(set);
        assert_eq!(e.key.as_deref(), Some(key), "{e}");
        assert!(e.to_string().contains(why), "{e}");
    }
    case.set_assignment("fluid.n=1.5").unwrap();
    const CESE: &str = include_str!("../../cases/cese_sod.toml");
    let mut case = Case::parse(CESE, "cese.toml").unwrap();
    let e = case
        .set_assignment("solver.alpha=1e6")
        .expect_err("alpha beyond 10");
    assert_eq!(e.key.as_deref(), Some("solver.alpha"), "{e}");
}
