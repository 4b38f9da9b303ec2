//! Stable trajectory ids.

use sha2::{Digest, Sha256};

/// `task_id` plus 12 hex digits of sha256 over the source path (relative to the input root,
/// with `/` separators) and the record's index in that file. Relative paths keep ids equal
/// across machines and working directories; the index separates records of one file.
#[must_use]
pub fn trajectory_id(task_id: &str, relative_path: &str, index: usize) -> String {
    let mut h = Sha256::new();
    h.update(relative_path.as_bytes());
    h.update(b"#");
    h.update(index.to_string().as_bytes());
    let digest = h.finalize();
    let mut out = String::with_capacity(task_id.len() + 13);
    out.push_str(task_id);
    out.push('#');
    for b in &digest[..6] {
        use std::fmt::Write as _;
        let _ = write!(out, "{b:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_depend_on_path_and_index_only() {
        let a = super::trajectory_id("t", "run/a.json", 0);
        assert_eq!(a, super::trajectory_id("t", "run/a.json", 0));
        assert_ne!(a, super::trajectory_id("t", "run/a.json", 1));
        assert_ne!(a, super::trajectory_id("t", "run/b.json", 0));
        assert!(a.starts_with("t#") && a.len() == 14);
    }
}
