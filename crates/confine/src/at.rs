//! The calls relative to an open folder that `Folder` is made of: each takes a folder's handle
//! and a name in it, and none follows a symbolic link (`O_NOFOLLOW`, `AT_SYMLINK_NOFOLLOW`).

use std::ffi::CString;
use std::fs::File;
use std::io::ErrorKind;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// The folder at a whole path, opened, not through a link as its last part.
pub(crate) fn open_path(path: &Path) -> std::io::Result<OwnedFd> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map(OwnedFd::from)
}

/// Checks the open folder `dir` (at `path`, to show) is this user's, and narrows a wider mode
/// to 0700 through the handle.
pub(crate) fn made_private(path: &Path, dir: &OwnedFd) -> Result<(), String> {
    let meta = File::from(
        dir.try_clone()
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?,
    )
    .metadata()
    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !meta.is_dir() {
        return Err(format!("{} is not a folder: remove it or move it away", path.display()));
    }
    // SAFETY: getuid has no preconditions and cannot fail.
    let me = unsafe { libc::getuid() };
    if meta.uid() != me {
        return Err(format!(
            "{} belongs to another user (uid {}, not {me}): remove it, or give droidmcp a folder of your own (--workspace)",
            path.display(),
            meta.uid()
        ));
    }
    if meta.mode() & 0o077 != 0 {
        // SAFETY: `dir` is an open folder.
        done(unsafe { libc::fchmod(dir.as_raw_fd(), 0o700) })
            .map_err(|e| format!("cannot make {} private: {e}", path.display()))?;
    }
    Ok(())
}

/// The file `name` in `dir`, open for reading, not through a link.
pub(crate) fn open_read(dir: &OwnedFd, name: &str) -> std::io::Result<File> {
    let name = io_name(name)?;
    // Non-blocking: a FIFO planted under the name must not hang the read.
    let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
    // SAFETY: `dir` is an open folder and `name` a NUL-terminated string.
    owned(unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags) }).map(File::from)
}

pub(crate) fn owned(fd: libc::c_int) -> std::io::Result<OwnedFd> {
    if fd < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        // SAFETY: a descriptor the system just opened for us, owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

pub(crate) fn done(result: libc::c_int) -> std::io::Result<()> {
    if result < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub(crate) fn io_name(name: &str) -> std::io::Result<CString> {
    CString::new(name).map_err(|_| std::io::Error::from(ErrorKind::InvalidInput))
}

/// The folder `name` inside `dir`, not through a link (refused as ELOOP, which Linux answers
/// as ENOTDIR when O_DIRECTORY is asked for too).
pub(crate) fn open_dir(dir: &OwnedFd, name: &str) -> std::io::Result<OwnedFd> {
    let c_name = io_name(name)?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `dir` is an open folder and `c_name` a NUL-terminated string.
    owned(unsafe { libc::openat(dir.as_raw_fd(), c_name.as_ptr(), flags) }).map_err(|e| {
        match (e.raw_os_error(), kind_of(dir, name)) {
            (Some(libc::ENOTDIR), Some(kind)) if kind == libc::S_IFLNK => {
                std::io::Error::from_raw_os_error(libc::ELOOP)
            }
            _ => e,
        }
    })
}

pub(crate) fn make_dir(dir: &OwnedFd, name: &str) -> std::io::Result<()> {
    let name = io_name(name)?;
    // SAFETY: as `open_dir`.
    done(unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), 0o700) })
}

/// A new file `name` in `dir`, mode 0600; fails if anything (a link included) has the name.
pub(crate) fn create_new(dir: &OwnedFd, name: &str) -> std::io::Result<File> {
    let name = io_name(name)?;
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: as `open_dir`; the mode is the variadic argument O_CREAT takes.
    owned(unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, 0o600 as libc::c_uint) }).map(File::from)
}

pub(crate) fn rename(dir: &OwnedFd, from: &str, to: &str) -> std::io::Result<()> {
    let (from, to) = (io_name(from)?, io_name(to)?);
    // SAFETY: as `open_dir`.
    done(unsafe { libc::renameat(dir.as_raw_fd(), from.as_ptr(), dir.as_raw_fd(), to.as_ptr()) })
}

pub(crate) fn unlink(dir: &OwnedFd, name: &str) {
    if let Ok(name) = io_name(name) {
        // SAFETY: as `open_dir`.
        unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), 0) };
    }
}

/// The file type bits (`S_IFLNK`, `S_IFDIR`, …) of `name` in `dir`, the link itself when it is
/// one; `None` when there is nothing by that name.
pub(crate) fn kind_of(dir: &OwnedFd, name: &str) -> Option<libc::mode_t> {
    stat_at(dir, name).map(|stat| stat.st_mode & libc::S_IFMT)
}

/// The names in the open folder `dir` (`.` and `..` left out), read through a handle of their
/// own.
pub(crate) fn entries(dir: &OwnedFd) -> Vec<String> {
    let Ok(own) = open_dir(dir, ".") else { return Vec::new() };
    // SAFETY: `own` is an open folder; fdopendir takes it over, and closedir closes it.
    let stream = unsafe { libc::fdopendir(own.as_raw_fd()) };
    if stream.is_null() {
        return Vec::new();
    }
    std::mem::forget(own);
    let mut names = Vec::new();
    loop {
        // SAFETY: `stream` is an open directory stream.
        let entry = unsafe { libc::readdir(stream) };
        if entry.is_null() {
            break;
        }
        // SAFETY: readdir answered an entry whose d_name is NUL-terminated.
        let name = unsafe { std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()) };
        let name = name.to_string_lossy().into_owned();
        if name != "." && name != ".." {
            names.push(name);
        }
    }
    // SAFETY: `stream` is open and closed once.
    unsafe { libc::closedir(stream) };
    names
}

/// `name` in `dir` as it is, a link itself when it is one; `None` when there is nothing.
pub(crate) fn stat_at(dir: &OwnedFd, name: &str) -> Option<libc::stat> {
    let name = io_name(name).ok()?;
    // SAFETY: a zeroed stat is a valid value for fstatat to fill.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as `open_dir`; `stat` is a valid place to write.
    let result = unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &mut stat, libc::AT_SYMLINK_NOFOLLOW) };
    (result == 0).then_some(stat)
}

/// Files under `dir` (relative paths, sizes) down to `depth` folders, links and hidden files
/// skipped.
pub(crate) fn walk(dir: &OwnedFd, prefix: &str, depth: usize, out: &mut Vec<(String, u64)>) {
    for name in entries(dir) {
        if name.starts_with('.') {
            continue;
        }
        let Some(stat) = stat_at(dir, &name) else { continue };
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        match stat.st_mode & libc::S_IFMT {
            libc::S_IFDIR if depth > 1 => {
                if let Ok(sub) = open_dir(dir, &name) {
                    walk(&sub, &path, depth - 1, out);
                }
            }
            libc::S_IFREG => out.push((path, stat.st_size as u64)),
            _ => {}
        }
    }
}

/// How deep `remove_tree` goes: far past what the door makes (`MAX_PARTS`).
const MAX_REMOVE_DEPTH: usize = 32;

/// Removes `name` in `dir`: a folder with all it holds, each opened relative to the one before
/// with `O_NOFOLLOW`; anything else (a link included) unlinked itself.
pub(crate) fn remove_tree(dir: &OwnedFd, name: &str, depth: usize) -> std::io::Result<()> {
    let c_name = io_name(name)?;
    if kind_of(dir, name) == Some(libc::S_IFDIR) {
        if depth >= MAX_REMOVE_DEPTH {
            return Err(std::io::Error::other("folders nested too deep to remove"));
        }
        let sub = open_dir(dir, name)?;
        for entry in entries(&sub) {
            remove_tree(&sub, &entry, depth + 1)?;
        }
        // SAFETY: as `open_dir`.
        done(unsafe { libc::unlinkat(dir.as_raw_fd(), c_name.as_ptr(), libc::AT_REMOVEDIR) })
    } else {
        // SAFETY: as `open_dir`.
        done(unsafe { libc::unlinkat(dir.as_raw_fd(), c_name.as_ptr(), 0) })
    }
}
