//! The exact Riemann solver against the reference star states (Toro 2009 table 4.3, Lax) in
//! tests/data/riemann_1d_tests.txt, and Sod's wave positions.

use flowlab::solver::compressible::exact_riemann::{ExactRiemann, GasState};

fn numbers(s: &str) -> Vec<f64> {
    s.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == 'e'))
        .filter_map(|t| t.parse().ok())
        .collect()
}

/// `(left, right, [p*, u*, rho*L, rho*R])` of Toro's tests 1-5 and Lax.
fn reference() -> Vec<(String, [f64; 3], [f64; 3], [f64; 4])> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/riemann_1d_tests.txt"
    ))
    .unwrap();
    let mut out = Vec::new();
    let mut in_ch4 = false;
    let lines: Vec<&str> = text.lines().collect();
    for (n, line) in lines.iter().enumerate() {
        if line.starts_with("==") {
            in_ch4 = line.contains("ch. 4");
        }
        if in_ch4 && line.starts_with(|c: char| c.is_ascii_digit()) {
            let (states, star) = line.split_once('|').unwrap();
            let v = numbers(states);
            let s = numbers(star);
            out.push((
                format!("toro {}", v[0]),
                [v[1], v[2], v[3]],
                [v[4], v[5], v[6]],
                [s[0], s[1], s[2], s[3]],
            ));
        }
        if line.starts_with("== Lax") {
            let v = numbers(line.split_once("left").unwrap().1);
            let s: Vec<f64> = lines[n + 1]
                .split(',')
                .map(|t| {
                    t.split('=')
                        .nth(1)
                        .unwrap()
                        .trim()
                        .trim_end_matches('.')
                        .parse()
                        .unwrap()
                })
                .collect();
            out.push((
                "lax".into(),
                [v[0], v[1], v[2]],
                [v[3], v[4], v[5]],
                [s[0], s[1], s[2], s[3]],
            ));
        }
    }
    out
}

fn gas(w: [f64; 3]) -> GasState {
    GasState {
        rho: w[0],
        u: w[1],
        p: w[2],
    }
}

#[test]
fn star_states_match_the_reference_to_1e_8() {
    let cases = reference();
    assert_eq!(cases.len(), 6, "tests 1-5 and Lax");
    for (name, l, r, refs) in cases {
        let star = ExactRiemann::new(1.4, gas(l), gas(r)).star().expect("no vacuum");
        let got = [star.p, star.u, star.rho_l, star.rho_r];
        for (k, (g, e)) in got.iter().zip(refs).enumerate() {
            let rel = (g - e).abs() / e.abs().max(1e-300);
            println!("{name} quantity {k}: {g:.12e} vs {e:.12e} (rel {rel:.2e})");
            assert!(
                (g - e).abs() <= 1e-8 * e.abs() + 1e-14,
                "{name} quantity {k}: {g} vs {e}"
            );
        }
    }
}

#[test]
fn sod_wave_positions_and_regions() {
    let l = gas([1.0, 0.0, 1.0]);
    let r = gas([0.125, 0.0, 0.1]);
    let e = ExactRiemann::new(1.4, l, r);
    let w = e.wave_speeds();
    let (t, x0) = (0.2, 0.5);
    let got = [
        x0 + w.left_head * t,
        x0 + w.left_tail * t,
        x0 + w.contact * t,
        x0 + w.right_head * t,
    ];
    let refs = [0.263357, 0.485945, 0.685491, 0.850431];
    for (g, r) in got.iter().zip(refs) {
        assert!((g - r).abs() < 1e-6, "{got:?} vs {refs:?}");
    }
    assert_eq!(w.right_head, w.right_tail, "the right wave is a shock");
    let star = e.star().unwrap();
    let at = |x: f64| e.at(x, t, x0);
    let eps = 1e-6;
    assert_eq!(at(refs[0] - eps), l);
    assert!((at(refs[1] + eps).rho - star.rho_l).abs() < 1e-12);
    assert!((at(refs[2] - eps).rho - star.rho_l).abs() < 1e-12);
    assert!((at(refs[2] + eps).rho - star.rho_r).abs() < 1e-12);
    assert!((at(refs[3] - eps).p - star.p).abs() < 1e-12);
    assert_eq!(at(refs[3] + eps), r);
    let fan = at(0.5 * (refs[0] + refs[1]));
    assert!(fan.rho < 1.0 && fan.rho > star.rho_l && fan.u > 0.0 && fan.u < star.u);
}
