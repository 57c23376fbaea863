//! Every kernel file compiles with NVRTC in both precisions, through the code path the solvers
//! use (`flowlab::backend::cuda::compile_ptx`); no GPU needed. Without NVRTC the test is skipped
//! with a printed reason, except under CI (`CI` set), where a missing NVRTC is a failure.

use flowlab::backend::cuda::{Args, Gpu, KernelSet, compile_ptx, nvrtc_available, probe};

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

/// A launch with the wrong number of arguments is refused with an error naming the kernel
/// (checked against the driver's parameter list of the kernel), and the right number runs: a
/// kernel given one argument too few would read garbage for it (an illegal address at best).
/// Needs a GPU with a CUDA 12.4 or later driver; skipped with the reason otherwise.
#[test]
fn a_launch_with_the_wrong_argument_count_is_refused() {
    if let Err(why) = probe() {
        eprintln!("skipped: {why}");
        return;
    }
    let gpu = Gpu::new().expect("device");
    if gpu.info.driver_version < 12040 {
        eprintln!("skipped: the driver predates cuFuncGetParamInfo (CUDA 12.4)");
        return;
    }
    let m = gpu.module(KernelSet::Bench, "f32").expect("bench module");
    let copy = m.function("copy").expect("copy kernel");
    let (src, dst) = (
        gpu.alloc_zeros::<f32>(1024).unwrap(),
        gpu.alloc::<f32>(1024).unwrap(),
    );
    // copy(src, dst, n4): three parameters.
    let short = Args::new().p(&src).p(&dst);
    // SAFETY: refused before the launch (the test's subject); the full launch below passes
    // copy's three arguments, buffers of 256 float4 each.
    let err = unsafe { gpu.launch(copy, (1, 1, 1), (256, 1, 1), &short) }.expect_err("a missing argument");
    assert!(
        err.to_string()
            .contains("kernel copy takes 3 parameters; the launch passed 2"),
        "{err}"
    );
    unsafe { gpu.launch(copy, (1, 1, 1), (256, 1, 1), &short.l(256)) }.expect("the full launch");
    gpu.sync().expect("the copy runs");
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
