//! Compiles `tests/c/abi_test.c` with `cc -std=c11 -Wall -Wextra -Wpedantic -Werror` and
//! ASan/UBSan against `include/fabric.h` and the static library of this build, then runs it.
//!
//! The test runs `cargo build -p fabric-ffi -p fabric-adapter-scripted` first (a no-op when
//! fresh): `cargo test` itself does not refresh the staticlib.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// `target/<profile>` of this test binary (`target/<profile>/deps/c_abi-…`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

/// Builds the static library (and the scripted adapter) for this profile. `cargo test`
/// links tests against the rlib and does not refresh `libfabric_ffi.a`, so the test asks
/// cargo for the current artifacts itself (a no-op when they are fresh).
fn build_artifacts(profile: &Path) {
    static BUILD: Once = Once::new();
    BUILD.call_once(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let mut command = Command::new(cargo);
        command
            .args(["build", "-p", "fabric-ffi", "-p", "fabric-adapter-scripted"])
            .env("CARGO_TARGET_DIR", profile.parent().expect("target dir"))
            .current_dir(repo_root());
        if profile.file_name().is_some_and(|name| name == "release") {
            command.arg("--release");
        }
        let status = command.status().expect("run cargo build");
        assert!(
            status.success(),
            "building fabric-ffi / fabric-adapter-scripted failed"
        );
    });
}

/// Compiles `tests/c/abi_test.c` with the strict warning set plus `extra` flags.
fn compile(program: &Path, library: &Path, extra: &[&str]) {
    let root = repo_root();
    let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let output = Command::new(&compiler)
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
            "-g",
        ])
        .args(extra)
        .arg("-I")
        .arg(root.join("include"))
        .arg(root.join("tests/c/abi_test.c"))
        .arg(library)
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(program)
        .output()
        .expect("run the C compiler");
    assert!(
        output.status.success(),
        "compiling tests/c/abi_test.c failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The same program without sanitizers under valgrind (memcheck, definite leaks are
/// errors). Without valgrind it fails (`tests/dependency.rs`).
#[test]
fn c_program_is_clean_under_valgrind() {
    let available = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        return crate::support::dependency::missing(
            "valgrind",
            "apt-get install valgrind (scripts/setup.sh)",
        );
    }
    let root = repo_root();
    let profile = profile_dir();
    build_artifacts(&profile);
    let work = tempfile::tempdir().expect("temp dir");
    let program = work.path().join("abi_test_plain");
    compile(&program, &profile.join("libfabric_ffi.a"), &[]);
    let run = Command::new("valgrind")
        .args([
            "-q",
            "--error-exitcode=99",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--show-leak-kinds=definite",
        ])
        .arg(&program)
        .arg(&root)
        .current_dir(&root)
        .env("CARGO_TARGET_DIR", profile.parent().expect("target dir"))
        .output()
        .expect("run valgrind");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && stdout.contains(" passed, 0 failed"),
        "abi_test under valgrind failed ({:?}):\n{stdout}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
}

#[test]
fn c_program_passes_under_sanitizers() {
    let root = repo_root();
    let profile = profile_dir();
    build_artifacts(&profile);
    let library = profile.join("libfabric_ffi.a");
    assert!(
        library.exists(),
        "static library missing: {}",
        library.display()
    );

    let work = tempfile::tempdir().expect("temp dir");
    let program = work.path().join("abi_test");
    compile(
        &program,
        &library,
        &[
            "-fsanitize=address,undefined",
            "-fno-sanitize-recover=undefined",
        ],
    );

    let run = Command::new(&program)
        .arg(&root)
        .current_dir(&root)
        .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        .env("CARGO_TARGET_DIR", profile.parent().expect("target dir"))
        .output()
        .expect("run abi_test");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        run.status.success(),
        "abi_test failed ({:?}):\n{stdout}\n{stderr}",
        run.status
    );
    assert!(
        stdout.contains(" passed, 0 failed"),
        "unexpected output:\n{stdout}\n{stderr}"
    );
    println!("{stdout}");
}
