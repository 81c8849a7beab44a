//! Reading manifests from paths: files, or directories searched recursively for `.yaml`,
//! `.yml` and `.json` files in name order.

use std::path::{Path, PathBuf};

use celer_policy::load::{LoadError, Manifests, Source};

use crate::OfflineError;

/// Files larger than this are refused rather than read into memory.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The manifest files under `path` (itself, if it is a file), sorted.
pub fn manifest_files(path: &Path) -> Result<Vec<PathBuf>, OfflineError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| OfflineError::Io { path, source }
    };
    let meta = std::fs::metadata(path).map_err(io(path))?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir).map_err(io(&dir))?;
        for entry in entries {
            let entry = entry.map_err(io(&dir))?;
            let p = entry.path();
            let file_type = entry.file_type().map_err(io(&p))?;
            if file_type.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Reads every manifest under `path` into `manifests`; unreadable files become load errors.
pub fn read_into(manifests: &mut Manifests, path: &Path) {
    let files = match manifest_files(path) {
        Ok(f) => f,
        Err(e) => {
            // The location already names the path.
            let message = e.to_string();
            let prefix = format!("{}: ", path.display());
            let message = message
                .strip_prefix(&prefix)
                .unwrap_or(&message)
                .to_string();
            manifests.errors.push(LoadError {
                location: Source {
                    file: path.display().to_string(),
                    document: 0,
                },
                what: "file".to_string(),
                message,
            });
            return;
        }
    };
    for file in files {
        let name = file.display().to_string();
        match read_text(&file) {
            Ok(text) => manifests.add_text(&name, &text),
            Err(e) => manifests.errors.push(LoadError {
                location: Source {
                    file: name,
                    document: 0,
                },
                what: "file".to_string(),
                message: e.to_string(),
            }),
        }
    }
}

/// Why a file's text could not be read (the path is the caller's to name).
#[derive(Debug, thiserror::Error)]
pub enum ReadFileError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error("file is {size} bytes, more than the {MAX_FILE_BYTES} bytes celer reads")]
    TooLarge { size: u64 },
    #[error("not UTF-8 text: {0}")]
    NotUtf8(#[from] std::string::FromUtf8Error),
}

/// A file's text, refusing huge and non-UTF-8 files with a clear message.
pub fn read_text(path: &Path) -> Result<String, ReadFileError> {
    let meta = std::fs::metadata(path)?;
    if meta.len() > MAX_FILE_BYTES {
        return Err(ReadFileError::TooLarge { size: meta.len() });
    }
    let bytes = std::fs::read(path)?;
    Ok(String::from_utf8(bytes)?)
}
