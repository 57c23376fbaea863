//! Every kernel file compiles with NVRTC in both precisions and each of its dimensions (2D, and
//! 3D for the projection, Poisson and display sets), through the code path the solvers use
//! (`flowlab::backend::cuda::compile_ptx`); no GPU needed. Without NVRTC the test is skipped
//! with a printed reason, except under CI (`CI` set) or `FLOWLAB_REQUIRE_GPU=1`, where a missing
//! NVRTC is a failure.

mod common;

use flowlab::backend::cuda::{Args, Gpu, KernelSet, compile_ptx, nvrtc_available};

#[test]
fn every_kernel_file_compiles_in_both_precisions() {
    if !nvrtc_available() {
        let msg = "NVRTC (libnvrtc.so / libnvrtc.so.12) cannot be loaded; put its lib directory on \
                   LD_LIBRARY_PATH (pip install nvidia-cuda-nvrtc-cu12)";
        if common::in_ci() {
            panic!("CI is set and {msg}");
        }
        common::skip_gpu_test(msg);
        return;
    }
    // Hopper (the target machines) and an older architecture the PTX must also build for.
    for arch in [(9, 0), (8, 0)] {
        for (set, dim) in KernelSet::ALL
            .into_iter()
            .flat_map(|s| s.dimensions().iter().map(move |d| (s, *d)))
        {
            for precision in ["f32", "f64"] {
                let ptx = &compile_ptx(set, precision, dim, arch)
                    .unwrap_or_else(|e| panic!("{e}"))
                    .text;
                assert!(
                    ptx.contains(".entry"),
                    "{} {precision} {dim}D: no kernel entry in the PTX",
                    set.file_name()
                );
                // The bench set is a 16-byte copy: no arithmetic in either precision.
                let real = if precision == "f64" { ".f64" } else { ".f32" };
                assert!(
                    set == KernelSet::Bench || ptx.contains(real),
                    "{} {precision} {dim}D: no {real} arithmetic",
                    set.file_name()
                );
                let fused = fma_outside_libm(ptx);
                assert!(
                    fused.is_empty(),
                    "{} {precision} {dim}D: FMA contraction must be off (CPU parity); fma in {fused:?}",
                    set.file_name()
                );
            }
        }
    }
}

/// A launch with the wrong number or kind of arguments is refused with an error naming the
/// kernel (checked against the parameter list its PTX declares, before the driver is called),
/// and the right list runs: a kernel given one argument too few, or an `int` where it reads a
/// `long long`, would read garbage. Needs a GPU; skipped with the reason otherwise (a failure
/// under `FLOWLAB_REQUIRE_GPU=1`).
#[test]
fn a_launch_with_the_wrong_arguments_is_refused() {
    if !common::gpu() {
        return;
    }
    let gpu = Gpu::new().expect("device");
    let m = gpu.module(KernelSet::Bench, "f32").expect("bench module");
    let copy = m.function("copy").expect("copy kernel");
    let (src, dst) = (
        gpu.alloc_zeros::<f32>(1024).unwrap(),
        gpu.alloc::<f32>(1024).unwrap(),
    );
    // copy(src, dst, n4): three parameters, the last a long long.
    let short = Args::new().p(&src).p(&dst);
    // SAFETY: refused before the launch (the test's subject); the full launch below passes
    // copy's three arguments, buffers of 256 float4 each.
    let err = unsafe { gpu.launch(copy, (1, 1, 1), (256, 1, 1), &short) }.expect_err("a missing argument");
    assert!(
        err.to_string()
            .contains("kernel copy takes 3 parameters; the launch passed 2"),
        "{err}"
    );
    let int = short.clone().i(256);
    let err = unsafe { gpu.launch(copy, (1, 1, 1), (256, 1, 1), &int) }.expect_err("an int for a long long");
    assert_eq!(
        err.to_string(),
        "kernel copy: parameter 2 is a pointer or long long (.u64); the launch passed an int"
    );
    unsafe { gpu.launch(copy, (1, 1, 1), (256, 1, 1), &short.l(256)) }.expect("the full launch");
    gpu.sync().expect("the copy runs");
}

/// The functions of a PTX module (`.entry` kernels and `.func` device functions) that contain an
/// `fma` instruction, except the `libm_*` wrappers (`libm_pow_*` of `kernels/euler.cuh`,
/// `libm_hypot_f64`, `libm_acos_f64` and `libm_cos_f64` of `kernels/display.cu`) and the math library's own `__internal_*` helpers
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

/// The skip decision every GPU test takes ([`common::skip_or_fail`]): a skip names the test and
/// the reason; under `FLOWLAB_REQUIRE_GPU=1` the same case is a failure naming both.
#[test]
fn a_gpu_test_that_cannot_run_skips_or_fails_when_required() {
    let line = common::skip_or_fail("t::x", "no usable CUDA device", false);
    assert_eq!(line, "t::x: skipped: no usable CUDA device");
    let failure = std::panic::catch_unwind(|| common::skip_or_fail("t::x", "no usable CUDA device", true))
        .expect_err("required: a failure");
    let message = failure
        .downcast_ref::<String>()
        .expect("a formatted panic message");
    assert!(
        message.contains("t::x")
            && message.contains("FLOWLAB_REQUIRE_GPU=1")
            && message.contains("no usable CUDA device"),
        "{message}"
    );
}

/// A GPU test of this binary run again with `FLOWLAB_REQUIRE_GPU=1`: without a device it fails
/// with the probe's reason (where there is one, it passes).
#[test]
fn required_gpu_tests_fail_without_a_device() {
    let test = "a_launch_with_the_wrong_arguments_is_refused";
    let out = std::process::Command::new(std::env::current_exe().expect("this test binary"))
        .args([test, "--exact", "--test-threads=1"])
        .env("FLOWLAB_REQUIRE_GPU", "1")
        .output()
        .expect("the test binary runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    match flowlab::backend::cuda::probe() {
        Ok(_) => assert!(out.status.success(), "{text}"),
        Err(reason) => {
            assert!(
                !out.status.success(),
                "a required GPU test passed without a device:\n{text}"
            );
            assert!(
                text.contains(&format!(
                    "{test}: FLOWLAB_REQUIRE_GPU=1 but the test cannot run: {reason}"
                )),
                "{text}"
            );
        }
    }
}
