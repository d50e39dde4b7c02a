use super::*;
use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(status.success());
}

/// Every scenario, with `openat2` and with the component walk: the same answers.
fn scenarios() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("outside");
    let secret = outside.path().join("secret");
    std::fs::write(&secret, "secret").expect("secret");
    let root = Beneath::open(dir.path()).expect("root");
    let r = |p: &str| root.read(Path::new(p), 64);

    root.write(Path::new("a/b/c.txt"), b"hello", 0o600)
        .expect("write");
    assert_eq!(r("a/b/c.txt").expect("read"), b"hello");
    assert_eq!(r("./a/b/c.txt").expect("read"), b"hello");
    let mode = std::fs::metadata(dir.path().join("a/b/c.txt"))
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert_eq!(
        std::fs::metadata(dir.path().join("a"))
            .expect("meta")
            .permissions()
            .mode()
            & 0o777,
        0o700
    );

    // Links: at the end, on the way, dangling; never followed, for reads and writes.
    symlink(&secret, dir.path().join("loot.txt")).expect("link");
    symlink(outside.path(), dir.path().join("dirlink")).expect("link");
    symlink(outside.path().join("new"), dir.path().join("dangling")).expect("link");
    assert!(
        matches!(r("loot.txt"), Err(Refusal::Link)),
        "{:?}",
        r("loot.txt")
    );
    assert!(matches!(r("dirlink/secret"), Err(Refusal::Link)));
    assert!(matches!(
        root.metadata(Path::new("loot.txt")),
        Err(Refusal::Link)
    ));
    assert!(matches!(
        root.metadata(Path::new("dirlink/secret")),
        Err(Refusal::Link)
    ));
    for path in ["loot.txt", "dirlink/secret", "dirlink/fresh", "dangling"] {
        let outcome = root.write(Path::new(path), b"overwritten", 0o600);
        assert!(matches!(outcome, Err(Refusal::Link)), "{path}: {outcome:?}");
    }
    assert!(matches!(
        root.create_dir_all(Path::new("dirlink/sub"), 0o700),
        Err(Refusal::Link)
    ));
    assert_eq!(std::fs::read(&secret).expect("secret"), b"secret");
    assert!(!outside.path().join("new").exists());
    assert!(!outside.path().join("fresh").exists());
    assert!(!outside.path().join("sub").exists());
    // Removing a link removes the link, never its target.
    assert!(root.remove_file(Path::new("loot.txt")).expect("remove"));
    assert!(secret.exists());
    assert!(!root.remove_file(Path::new("loot.txt")).expect("again"));
    assert!(matches!(
        root.remove_file(Path::new("dirlink/secret")),
        Err(Refusal::Link)
    ));
    assert!(secret.exists());

    // Special files: refused at once, never blocking.
    mkfifo(&dir.path().join("fifo"));
    let started = Instant::now();
    assert!(
        matches!(r("fifo"), Err(Refusal::NotRegular("fifo"))),
        "{:?}",
        r("fifo")
    );
    assert!(matches!(
        root.write(Path::new("fifo"), b"x", 0o600),
        Err(Refusal::NotRegular("fifo"))
    ));
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(matches!(r("a"), Err(Refusal::NotRegular("directory"))));
    assert!(matches!(
        root.write(Path::new("a"), b"x", 0o600),
        Err(Refusal::NotRegular("directory"))
    ));
    assert!(matches!(
        root.remove_file(Path::new("a")),
        Err(Refusal::NotRegular(_))
    ));
    assert!(matches!(
        root.read(Path::new("/dev/zero"), 8),
        Err(Refusal::OutsideRoot)
    ));

    // Escapes and missing paths.
    for bad in ["", "/etc/passwd", "../x", "a/../../x", "."] {
        assert!(matches!(r(bad), Err(Refusal::OutsideRoot)), "{bad}");
    }
    assert!(matches!(r("missing"), Err(Refusal::Missing)));
    assert!(matches!(r("a/b/c.txt/deeper"), Err(Refusal::Missing)));
    assert!(matches!(
        root.create_dir_all(Path::new("a/b/c.txt"), 0o700),
        Err(Refusal::NotRegular("file"))
    ));

    // The cap: a larger file is refused whole.
    root.write(Path::new("big"), &[b'x'; 65], 0o600)
        .expect("write");
    assert!(matches!(r("big"), Err(Refusal::TooLarge(64))));
    assert_eq!(root.read(Path::new("big"), 65).expect("read").len(), 65);

    // A sub-root resolves beneath itself.
    let sub = root.create_dir_all(Path::new("a/b"), 0o700).expect("sub");
    assert_eq!(sub.read(Path::new("c.txt"), 64).expect("read"), b"hello");
    assert!(matches!(
        sub.read(Path::new("../b/c.txt"), 64),
        Err(Refusal::OutsideRoot)
    ));
    assert!(root.open_dir(Path::new("dirlink")).is_err());
}

#[test]
fn paths_resolve_beneath_the_root_without_links_special_files_or_oversize() {
    scenarios();
}

#[test]
fn the_component_walk_answers_as_openat2_does() {
    OPENAT2.store(ABSENT, Ordering::Relaxed);
    scenarios();
    OPENAT2.store(0, Ordering::Relaxed);
}
