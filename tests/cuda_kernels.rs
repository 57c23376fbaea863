//! Every kernel file compiles with NVRTC in both precisions, through the code path the solvers
//! use (`flowlab::backend::cuda::compile_ptx`); no GPU needed. Without NVRTC the test is skipped
//! with a printed reason, except under CI (`CI` set), where a missing NVRTC is a failure.

use flowlab::backend::cuda::{KernelSet, compile_ptx, nvrtc_available};

#[test]
fn every_kernel_file_compiles_in_both_precisions() {
    if !nvrtc_available() {
        let msg = "NVRTC (libnvrtc.so / libnvrtc.so.12) cannot be loaded; put its lib directory on \
                   LD_LIBRARY_PATH (pip install nvidia-cuda-nvrtc-cu12)";
        if std::env::var_os("CI").is_some() {
            panic!("CI is set and {msg}");
        }
        eprintln!("skipped: {msg}");
        return;
    }
    // Hopper (the target machines) and an older architecture the PTX must also build for.
    for arch in [(9, 0), (8, 0)] {
        for set in KernelSet::ALL {
            for precision in ["f32", "f64"] {
                let ptx = compile_ptx(set, precision, arch).unwrap_or_else(|e| panic!("{e}"));
                assert!(
                    ptx.contains(".entry"),
                    "{} {precision}: no kernel entry in the PTX",
                    set.file_name()
                );
                // The bench set is a 16-byte copy: no arithmetic in either precision.
                let real = if precision == "f64" { ".f64" } else { ".f32" };
                assert!(
                    set == KernelSet::Bench || ptx.contains(real),
                    "{} {precision}: no {real} arithmetic",
                    set.file_name()
                );
                let fused = fma_outside_libm(&ptx);
                assert!(
                    fused.is_empty(),
                    "{} {precision}: FMA contraction must be off (CPU parity); fma in {fused:?}",
                    set.file_name()
                );
            }
        }
    }
}

/// The functions of a PTX module (`.entry` kernels and `.func` device functions) that contain an
/// `fma` instruction, except the `libm_*` wrappers (`libm_pow_*` of `kernels/euler.cuh`,
/// `libm_hypot_f64` of `kernels/display.cu`) and the math library's own `__internal_*` helpers
/// they call: the library's `pow` and `hypot` fuse multiply-adds inside themselves, which no
/// compile option turns off, and are the only places they may appear.
fn fma_outside_libm(ptx: &str) -> Vec<String> {
    let mut current = String::new();
    let mut found = Vec::new();
    for line in ptx.lines() {
        let t = line.trim_start();
        if t.starts_with(".func")
            || t.starts_with(".entry")
            || t.starts_with(".visible")
            || t.starts_with(".weak")
        {
            current = t.to_string();
        }
        if t.starts_with("fma.")
            && !current.contains("libm_")
            && !current.contains("__internal_")
            && !found.contains(&current)
        {
            found.push(current.clone());
        }
    }
    found
}
