//! The directory lock across processes: another process cannot open a
//! store this one holds, and a child forked while the store was open does
//! not keep it locked after this process closes it.

#![cfg(unix)]

use std::process::Command;
use std::time::{Duration, Instant};

use amq_lsm::{Db, Error, Options};

/// The environment variable that turns the helper below into the child's
/// side of `another_process_cannot_open_a_held_store`.
const CHILD_DIR: &str = "AMQ_LSM_LOCK_CHILD_DIR";

/// Run only as a child process (by the test below): opens the store named
/// by `AMQ_LSM_LOCK_CHILD_DIR` and exits with 0 if it was `Locked`, 1 if it
/// opened, 2 on any other error.
#[test]
#[ignore]
fn child_tries_to_open() {
    let Ok(dir) = std::env::var(CHILD_DIR) else {
        return;
    };
    let code = match Db::open(dir, Options::default()) {
        Err(Error::Locked(_)) => 0,
        Ok(_) => 1,
        Err(_) => 2,
    };
    std::process::exit(code);
}

fn child_opens(dir: &std::path::Path) -> i32 {
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_tries_to_open",
            "--test-threads",
            "1",
        ])
        .env(CHILD_DIR, dir)
        .status()
        .unwrap();
    status.code().unwrap()
}

#[test]
fn another_process_cannot_open_a_held_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(
        child_opens(dir.path()),
        0,
        "the child opened a store this process holds"
    );
    drop(db);
    assert_eq!(
        child_opens(dir.path()),
        1,
        "the child could not open a released store"
    );
}

/// A child forked while the store is open, which neither closes its copy of
/// the lock file's descriptor nor calls `exec` for a while (as a child that
/// another thread forks does, until its `exec`): once this process closes
/// the store, it opens again at once. (With an `flock` lock, which lives in
/// the open file the child shares, it stayed `Locked` until the child
/// exited.)
#[test]
fn a_forked_child_does_not_keep_the_store_locked() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    // SAFETY: the child only calls async-signal-safe functions (`sleep`,
    // `_exit`), as a child of a multithreaded process must.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // SAFETY: as above; `_exit` skips the parent's destructors.
        unsafe {
            libc::sleep(3);
            libc::_exit(0);
        }
    }
    drop(db);
    let start = Instant::now();
    let reopened = Db::open(dir.path(), Options::default());
    let waited = start.elapsed();
    let mut status = 0;
    // SAFETY: `pid` is our child; `status` is a valid out-pointer.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(
        reopened.is_ok(),
        "the forked child kept the store locked: {:?}",
        reopened.err()
    );
    assert!(waited < Duration::from_secs(2));
}
