//! The one door for files (DESIGN.md, contract item 14): whatever a flow, a replay, a script or an
//! export writes goes through `Folder::write`, and is read back through `Folder::read`.
//!
//! - A name is plain (`plain_name`): one part, letters, digits, spaces, `-`, `_` and `.`, not
//!   starting with `.` (so never `.` or `..`, nor a hidden file) or `-` (never read as an
//!   option), 1 to 100 chars; a path inside a folder (`relative`) is up to four of them with `/`
//!   between. Names made from someone's text (a flow's `name:`) are made plain (`plain_from`;
//!   `plain_file` around a prefix and a suffix, cut to fit).
//! - Nothing leaves its folder and no symbolic link is followed: a `Folder` is an open handle,
//!   and every operation (open, make, rename, list, remove) is relative to it, so a folder on
//!   its path moved or swapped for a link later redirects nothing; each part is opened relative
//!   to the one before with `O_NOFOLLOW`, so a link planted anywhere under the folder is refused,
//!   never followed; a file is written 0600 to a temp file beside it and renamed over its name.
//! - The folders droidmcp makes are private: 0700 and this user's (`Folder::private`); one a
//!   person named on the command line (`Folder::chosen`: `--junit`'s, `--workspace`) is made
//!   0700 when it does not exist, and taken as it is when it does.
//!
//! Also here: `principal_folder`, a principal's folder name, and `within`, a whole path a person
//! gave (an APK to install) kept under the allowed folders.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use at::{
    create_new, entries, kind_of, made_private, make_dir, open_dir, open_path, open_read, remove_tree, rename, stat_at,
    unlink, walk,
};

/// Parts a path inside a folder may have.
pub const MAX_PARTS: usize = 4;
/// A name's length: chars, and bytes (a file system takes 255; the temp name adds 36).
pub const MAX_NAME_CHARS: usize = 100;
pub const MAX_NAME_BYTES: usize = 200;

/// What a plain name is, as errors say it.
const RULE: &str = "one part of letters, digits, spaces, - _ and ., not starting with . or - nor ending with a space, at most 100 chars and 200 bytes (e.g. notes.txt, screen-1.png)";

/// Checks that `name` is plain: one path part that stays in its folder wherever it is used.
pub fn plain_name(name: &str) -> Result<(), String> {
    let why = if name.is_empty() {
        "it is empty".to_string()
    } else if name.chars().count() > MAX_NAME_CHARS {
        format!("it is over {MAX_NAME_CHARS} chars")
    } else if name.len() > MAX_NAME_BYTES {
        // A name in another script meets this first: its letters take 2 to 4 bytes each.
        format!(
            "it is over {MAX_NAME_BYTES} bytes ({} in UTF-8, in {} chars)",
            name.len(),
            name.chars().count()
        )
    } else if name.contains('/') {
        "it has a /, which leads into another folder".to_string()
    } else if name.starts_with('.') {
        "it starts with a dot (. and .. lead out of the folder; hidden names are not made)".to_string()
    } else if name.starts_with('-') {
        "it starts with -, which a program would read as an option".to_string()
    } else if name.starts_with(' ') || name.ends_with(' ') {
        "it starts or ends with a space".to_string()
    } else if let Some(c) = name.chars().find(|c| !plain_char(*c)) {
        format!("it has {c:?}")
    } else {
        return Ok(());
    };
    Err(format!(
        "{:?} is not a plain name: {why}. A name is {RULE}",
        android::text::echoed(name)
    ))
}

fn plain_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, ' ' | '-' | '_' | '.')
}

/// A path inside a folder, as its checked parts: relative, 1 to `MAX_PARTS` plain names with `/`
/// between them.
pub fn relative(path: &str) -> Result<Vec<String>, String> {
    let not = |why: String| {
        Err(format!(
            "{:?} is not a path inside the folder: {why}",
            android::text::echoed(path)
        ))
    };
    if path.starts_with('/') {
        return not("it is absolute; a path is relative to its folder (e.g. notes.txt or shots/home.png)".into());
    }
    let parts: Vec<String> = path.split('/').map(str::to_string).collect();
    for part in &parts {
        if let Err(e) = plain_name(part) {
            return not(e);
        }
    }
    if parts.len() > MAX_PARTS {
        return not(format!("it has over {MAX_PARTS} parts"));
    }
    Ok(parts)
}

/// `path` inside the folder it is relative to, as a chroot reads it: `/` at the start is the
/// folder's top, `.` dropped, `..` the folder above, and at the top the top itself, so no path
/// climbs out (`../../reports/x` is `reports/x`, `/tmp/x` is `tmp/x`). Empty parts are dropped.
/// For a path a third party wrote (a flow's `takeScreenshot`, a config's `testOutputDir`).
pub fn chrooted(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.join("/")
}

/// A path a person wrote to a file that is already inside a folder (addMedia's media beside the
/// flow), as its parts: relative, 1 to `MAX_PARTS` of them, none empty, `.`, `..` or holding a
/// NUL; any other name is taken as written (`My photo (1).png`), as it is only opened for reading,
/// part by part through `Folder::open_existing`, never made.
pub fn inside(path: &str) -> Result<Vec<String>, String> {
    let not = |why: &str| {
        Err(format!(
            "{:?} is not a path inside the folder: {why}",
            android::text::echoed(path)
        ))
    };
    if path.starts_with('/') {
        return not("it is absolute; name the file beside the flow (e.g. cat.png or media/cat.png)");
    }
    let parts: Vec<String> = path.split('/').map(str::to_string).collect();
    if parts.iter().any(|p| p == "..") {
        return not("it climbs out with ..; name a file beside the flow or in a folder below it");
    }
    if parts.iter().any(|p| p.is_empty() || p == ".") {
        return not("it has an empty or . part");
    }
    if path.contains('\0') {
        return not("it has a NUL");
    }
    if parts.len() > MAX_PARTS {
        return not(&format!("it has over {MAX_PARTS} parts"));
    }
    Ok(parts)
}

/// A plain name made from any text (a flow's `name:`, which a third party writes): each char
/// that is not plain becomes `_`, leading dots and dashes go, at most 80 chars (160 bytes), so a
/// suffix of up to 20 chars still fits; `_` when nothing is left.
pub fn plain_from(text: &str) -> String {
    cut_plain(text, 80, 160)
}

/// A file's plain name made of a fixed `prefix` and `suffix` (plain themselves: `commands-`,
/// `.json`) around any text made plain as `plain_from` makes it, the text cut so the whole
/// fits a name (100 chars, 200 bytes) however long the prefix.
pub fn plain_file(prefix: &str, text: &str, suffix: &str) -> String {
    let fixed = prefix.chars().count() + suffix.chars().count();
    let chars = MAX_NAME_CHARS.saturating_sub(fixed).clamp(1, 80);
    let bytes = MAX_NAME_BYTES.saturating_sub(prefix.len() + suffix.len()).clamp(4, 160);
    format!("{prefix}{}{suffix}", cut_plain(text, chars, bytes))
}

fn cut_plain(text: &str, chars: usize, bytes: usize) -> String {
    let mut out = String::new();
    let mapped = text
        .chars()
        .map(|c| if plain_char(c) && c != ' ' { c } else { '_' })
        .skip_while(|c| matches!(c, '.' | '-'));
    for (i, c) in mapped.enumerate() {
        if i == chars || out.len() + c.len_utf8() > bytes {
            break;
        }
        out.push(c);
    }
    if out.is_empty() { "_".to_string() } else { out }
}

/// A principal's folder name (skills, runs, exported flows, large answers): its name with every
/// byte but a-z, 0-9, `_` and `-` as `%XX`, so no name (`..`, `Alice` beside `alice` on a
/// case-blind disk) can lead elsewhere or collide with another. Past `FOLDER_MAX` bytes (a
/// file name is at most 255), its head, `~` and the name's SHA-256: `~` is otherwise `%7E`, so
/// no shorter name meets a long one's.
pub fn principal_folder(principal: &str) -> String {
    use sha2::Digest;
    let spelled: String = principal
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'0'..=b'9' | b'_' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    if spelled.len() <= FOLDER_MAX {
        return spelled;
    }
    let mut head = FOLDER_MAX - 65;
    // Not inside a `%XX`.
    while spelled.as_bytes()[head.saturating_sub(2)..head].contains(&b'%') {
        head -= 1;
    }
    let digest = sha2::Sha256::digest(principal.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("{}~{hex}", &spelled[..head])
}

/// The longest principal folder name (`principal_folder`).
pub const FOLDER_MAX: usize = 200;

/// A path given whole (an APK to install) as it really is, links followed, when that is under
/// one of `dirs` (each resolved the same way); `None` whether it is elsewhere or does not exist,
/// so a refusal tells nothing about the host's files.
pub fn within(path: &Path, dirs: &[PathBuf]) -> Option<PathBuf> {
    let real = std::fs::canonicalize(path).ok()?;
    dirs.iter().any(|dir| real.starts_with(dir)).then_some(real)
}

/// A folder files are written into and read from, only through the methods below. It is held
/// open (a handle opened `O_DIRECTORY | O_NOFOLLOW`), and every operation is relative to that
/// handle: a folder on its path moved or replaced by a link later sends nothing elsewhere.
#[derive(Debug, Clone)]
pub struct Folder {
    path: PathBuf,
    dir: Arc<OwnedFd>,
}

impl PartialEq for Folder {
    fn eq(&self, other: &Folder) -> bool {
        self.path == other.path
    }
}

impl Eq for Folder {}

impl Folder {
    /// `path` as a folder only this user can open: made with mode 0700, or the one there
    /// checked (a folder, not a link, this user's: in a shared folder such as /tmp another user
    /// may have made it first) and a wider mode narrowed to 0700.
    pub fn private(path: &Path) -> Result<Folder, String> {
        match std::fs::DirBuilder::new().mode(0o700).create(path) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("cannot make the folder {}: {e}", path.display())),
        }
        let dir = open_path(path).map_err(|e| match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => format!(
                "{} is a symbolic link; links are not followed: remove it",
                path.display()
            ),
            Ok(meta) if !meta.is_dir() => format!("{} is not a folder: remove it or move it away", path.display()),
            _ => format!("cannot open the folder {}: {e}", path.display()),
        })?;
        made_private(path, &dir)?;
        Ok(Folder {
            path: path.into(),
            dir: Arc::new(dir),
        })
    }

    /// A folder a person named (`--junit`'s, `--workspace`; the current one for an empty path):
    /// made with its parents, mode 0700, when it does not exist; taken as it is when it does,
    /// links in the path followed (the person wrote it). Below it, nothing follows a link.
    pub fn chosen(path: &Path) -> Result<Folder, String> {
        let path = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(path)
            .map_err(|e| format!("cannot make the folder {}: {e}", path.display()))?;
        let real = std::fs::canonicalize(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let dir = open_path(&real).map_err(|e| format!("cannot open the folder {}: {e}", real.display()))?;
        Ok(Folder {
            path: real,
            dir: Arc::new(dir),
        })
    }

    /// This user's private folder `droidmcp-PURPOSE-UID` in the system's temp folder (`TMPDIR`),
    /// for what outlives a run with no folder named for it (an exported flow, a failure's
    /// screenshot, `droidmcp call`'s images).
    pub fn user_temp(purpose: &str) -> Result<Folder, String> {
        // SAFETY: getuid has no preconditions and cannot fail.
        let uid = unsafe { libc::getuid() };
        let name = format!("droidmcp-{purpose}-{uid}");
        plain_name(&name)?;
        Folder::private(&std::env::temp_dir().join(name))
    }

    /// The private folder `name` (a plain name) inside this one, made on first use.
    pub fn sub(&self, name: &str) -> Result<Folder, String> {
        plain_name(name)?;
        self.private_in(name)
    }

    /// The principal's own private folder inside this one (`principal_folder`).
    pub fn principal(&self, principal: &str) -> Result<Folder, String> {
        if principal.is_empty() {
            return Err("a principal without a name has no folder".into());
        }
        self.private_in(&principal_folder(principal))
    }

    /// The folder `parts` inside this one when it is there (`None` when not), made nothing; a
    /// link on the way is refused.
    pub fn find(&self, parts: &[String]) -> Result<Option<Folder>, String> {
        checked(parts)?;
        self.found(parts)
    }

    /// The principal's folder inside this one when it is there, as `find`.
    pub fn find_principal(&self, principal: &str) -> Result<Option<Folder>, String> {
        if principal.is_empty() {
            return Err("a principal without a name has no folder".into());
        }
        self.found(&[principal_folder(principal)])
    }

    fn found(&self, parts: &[String]) -> Result<Option<Folder>, String> {
        let mut dir = self.handle()?;
        for (i, part) in parts.iter().enumerate() {
            dir = match open_dir(&dir, part) {
                Ok(dir) => dir,
                Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(refusal(&parts[..=i], e)),
            };
        }
        Ok(Some(Folder {
            path: parts.iter().fold(self.path.clone(), |path, part| path.join(part)),
            dir: Arc::new(dir),
        }))
    }

    /// The path this folder had when it was opened, to show (every operation goes through the
    /// held handle, not this path).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `bytes` to `parts` (each a plain name) inside this folder, its missing folders
    /// made 0700; returns the file's path. The file is made 0600 under a temp name, then renamed
    /// over `parts` (a rename replaces a name, never writes through it). A link anywhere on the
    /// way, or where the file goes, is refused and left as it is.
    pub fn write(&self, parts: &[String], bytes: &[u8]) -> Result<PathBuf, String> {
        let shown = checked(parts)?;
        let (file, parents) = parts.split_last().ok_or("name a file")?;
        let mut dir = self.handle()?;
        for (i, part) in parents.iter().enumerate() {
            dir = match open_dir(&dir, part) {
                Err(e) if e.kind() == ErrorKind::NotFound => {
                    match make_dir(&dir, part) {
                        Err(e) if e.kind() != ErrorKind::AlreadyExists => {
                            return Err(format!("cannot make the folder for {shown:?}: {e}"));
                        }
                        _ => {}
                    }
                    open_dir(&dir, part)
                }
                opened => opened,
            }
            .map_err(|e| refusal(&parts[..=i], e))?;
        }
        match kind_of(&dir, file) {
            Some(kind) if kind == libc::S_IFLNK => {
                return Err(refusal(parts, std::io::Error::from_raw_os_error(libc::ELOOP)));
            }
            Some(kind) if kind == libc::S_IFDIR => return Err(format!("{shown:?} is a folder")),
            _ => {}
        }
        let temp = format!(".{file}.{}{PARTIAL}", ulid::Ulid::generate());
        let written = create_new(&dir, &temp).and_then(|mut f| f.write_all(bytes));
        let renamed = written.and_then(|()| rename(&dir, &temp, file));
        if let Err(e) = renamed {
            unlink(&dir, &temp);
            return Err(format!("cannot write {shown:?}: {e}"));
        }
        Ok(parts.iter().fold(self.path.clone(), |path, part| path.join(part)))
    }

    /// The text of `parts` inside this folder, refusing a link anywhere on the way, anything
    /// but a file, and a file over `max_bytes`.
    pub fn read(&self, parts: &[String], max_bytes: u64) -> Result<String, String> {
        let shown = checked(parts)?;
        let (mut file, size) = self.open_file(parts, &shown)?;
        if size > max_bytes {
            return Err(format!(
                "{shown:?} is {size} bytes, over the {max_bytes}-byte read limit"
            ));
        }
        let mut text = String::new();
        file.read_to_string(&mut text)
            .map_err(|e| format!("cannot read {shown:?}: {e}"))?;
        Ok(text)
    }

    /// The file `parts` (a path `inside` checks, not only plain names) already in this folder,
    /// open for reading, and its size: a link anywhere on the way or as the file is refused,
    /// never followed, and so is anything but a regular file.
    pub fn open_existing(&self, parts: &[String]) -> Result<(File, u64), String> {
        let shown = parts.join("/");
        inside(&shown)?;
        self.open_file(parts, &shown)
    }

    /// The size of the file `parts` inside this folder, 0 when there is none (or a link, or a
    /// folder there): what writing over it frees.
    pub fn size_of(&self, parts: &[String]) -> u64 {
        let Some((file, parents)) = parts.split_last() else {
            return 0;
        };
        let Ok(shown) = checked(parts) else { return 0 };
        let Ok(dir) = self.descend(parents, &shown) else {
            return 0;
        };
        match stat_at(&dir, file) {
            Some(stat) if stat.st_mode & libc::S_IFMT == libc::S_IFREG => stat.st_size as u64,
            _ => 0,
        }
    }

    /// The files under `parts` (this folder when empty), as paths relative to it and sizes;
    /// links and hidden files skipped, a link on the way refused.
    pub fn list(&self, parts: &[String]) -> Result<Vec<(String, u64)>, String> {
        let dir = if parts.is_empty() {
            self.handle()?
        } else {
            let shown = checked(parts)?;
            self.descend(parts, &shown)?
        };
        let mut out = Vec::new();
        walk(&dir, "", MAX_PARTS, &mut out);
        out.sort();
        Ok(out)
    }

    /// The folders right inside this one (not links, not hidden), by name.
    pub fn folders(&self) -> Vec<String> {
        let Ok(dir) = self.handle() else { return Vec::new() };
        entries(&dir)
            .into_iter()
            .filter(|name| !name.starts_with('.'))
            .filter(|name| kind_of(&dir, name) == Some(libc::S_IFDIR))
            .collect()
    }

    /// Removes the folder `name` inside this one with all it holds, through the held handle: a
    /// link inside is removed itself, never followed; `name` itself a link is refused.
    pub fn remove(&self, name: &str) -> std::io::Result<()> {
        plain_name(name).map_err(|e| std::io::Error::new(ErrorKind::InvalidInput, e))?;
        let dir = self.handle().map_err(std::io::Error::other)?;
        match kind_of(&dir, name) {
            None => Err(ErrorKind::NotFound.into()),
            Some(kind) if kind == libc::S_IFLNK => Err(std::io::Error::from_raw_os_error(libc::ELOOP)),
            Some(_) => remove_tree(&dir, name, 0),
        }
    }

    /// Removes the temp files a write that never finished left here, once older than `age`.
    pub fn remove_leftovers(&self, age: Duration) {
        let Ok(dir) = self.handle() else { return };
        let now = SystemTime::now();
        for name in entries(&dir) {
            let Some(stat) = stat_at(&dir, &name) else { continue };
            let modified = SystemTime::UNIX_EPOCH + Duration::from_secs(stat.st_mtime.max(0) as u64);
            let old = now.duration_since(modified).unwrap_or_default() > age;
            if is_temp(&name) && stat.st_mode & libc::S_IFMT == libc::S_IFREG && old {
                unlink(&dir, &name);
            }
        }
    }

    /// The private folder `name` inside this one, made 0700 through the handle when missing.
    fn private_in(&self, name: &str) -> Result<Folder, String> {
        let path = self.path.join(name);
        match make_dir(&self.dir, name) {
            Err(e) if e.kind() != ErrorKind::AlreadyExists => {
                return Err(format!("cannot make the folder {}: {e}", path.display()));
            }
            _ => {}
        }
        let dir = open_dir(&self.dir, name).map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::EMLINK) => format!(
                "{} is a symbolic link; links are not followed: remove it",
                path.display()
            ),
            Some(libc::ENOTDIR) => format!("{} is not a folder: remove it or move it away", path.display()),
            _ => format!("cannot open the folder {}: {e}", path.display()),
        })?;
        made_private(&path, &dir)?;
        Ok(Folder {
            path,
            dir: Arc::new(dir),
        })
    }

    /// A handle of its own on this folder (the held one, duplicated).
    fn handle(&self) -> Result<OwnedFd, String> {
        self.dir
            .try_clone()
            .map_err(|e| format!("cannot open the folder {}: {e}", self.path.display()))
    }

    /// The folder `parts` inside this one, opened part by part; none may be a link.
    fn descend(&self, parts: &[String], shown: &str) -> Result<OwnedFd, String> {
        let mut dir = self.handle()?;
        for (i, part) in parts.iter().enumerate() {
            dir = open_dir(&dir, part).map_err(|e| match e.kind() {
                ErrorKind::NotFound => format!("no file {shown:?}"),
                _ => refusal(&parts[..=i], e),
            })?;
        }
        Ok(dir)
    }

    /// The regular file `parts` inside this one, open for reading, and its size; a link on the
    /// way or as the file, a folder, a FIFO or a device is refused.
    fn open_file(&self, parts: &[String], shown: &str) -> Result<(File, u64), String> {
        let (file, parents) = parts.split_last().ok_or("name a file")?;
        let dir = self.descend(parents, shown)?;
        let file = open_read(&dir, file).map_err(|e| match e.kind() {
            ErrorKind::NotFound => format!("no file {shown:?}"),
            _ => refusal(parts, e),
        })?;
        let meta = file.metadata().map_err(|e| format!("cannot read {shown:?}: {e}"))?;
        if meta.is_dir() {
            return Err(format!("{shown:?} is a folder, not a file"));
        }
        if !meta.is_file() {
            return Err(format!("{shown:?} is not a regular file"));
        }
        Ok((file, meta.len()))
    }
}

/// The end of a temp file's name (`.NAME.ULID.partial`).
const PARTIAL: &str = ".partial";

/// Whether `name` is one of `write`'s temp files, `.NAME.ULID.partial`, and no one else's.
fn is_temp(name: &str) -> bool {
    let made = name
        .strip_prefix('.')
        .and_then(|n| n.strip_suffix(PARTIAL))
        .and_then(|n| n.rsplit_once('.'));
    made.is_some_and(|(file, id)| plain_name(file).is_ok() && ulid::Ulid::from_string(id).is_ok())
}

/// `parts` as a path to show, each part plain and not too many.
fn checked(parts: &[String]) -> Result<String, String> {
    if parts.is_empty() || parts.len() > MAX_PARTS {
        return Err(format!("a path inside a folder has 1 to {MAX_PARTS} parts"));
    }
    for part in parts {
        plain_name(part)?;
    }
    Ok(parts.join("/"))
}

/// Why `parts` (the path so far) cannot be used: a link, not a folder, or what the system said.
fn refusal(parts: &[String], e: std::io::Error) -> String {
    let shown = parts.join("/");
    match e.raw_os_error() {
        // What O_NOFOLLOW answers for a link (BSDs say EMLINK).
        Some(libc::ELOOP) | Some(libc::EMLINK) => {
            format!("{shown:?} is a symbolic link; links are not followed")
        }
        Some(libc::ENOTDIR) => format!("{shown:?} is not a folder"),
        _ => format!("cannot open {shown:?}: {e}"),
    }
}

mod at;
#[cfg(test)]
mod tests;
