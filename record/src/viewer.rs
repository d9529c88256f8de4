//! A recording's viewer: one HTML file beside the recording, the trace
//! inside it, its screenshots and video by their paths there; offline.

use std::path::{Path, PathBuf};

use crate::TRACE_FILE;

/// The viewer's page, with `/*TRACE*/` where the trace goes.
const PAGE: &str = include_str!("viewer.html");
/// The viewer's file in a recording's directory.
pub const VIEWER_FILE: &str = "index.html";

/// Write the viewer of the recording in `dir` as `dir/index.html`.
pub fn write_viewer(dir: &Path) -> Result<PathBuf, String> {
    let trace_path = dir.join(TRACE_FILE);
    let trace = std::fs::read_to_string(&trace_path).map_err(|e| {
        format!(
            "cannot read {}: {e} (is {} a folder `wayrig run --record` wrote?)",
            trace_path.display(),
            dir.display()
        )
    })?;
    let page = PAGE.replace("/*TRACE*/", &embedded(&trace));
    let out = dir.join(VIEWER_FILE);
    std::fs::write(&out, page).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(out)
}

/// The trace's lines as one JSON array that is safe inside a script
/// element: lines that do not parse (a line cut by a kill) are left out.
fn embedded(trace: &str) -> String {
    let lines: Vec<serde_json::Value> = trace
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    serde_json::Value::from(lines)
        .to_string()
        .replace("</", "<\\/")
        .replace("<!--", "\\u003c!--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_line_is_left_out_and_a_script_end_cannot_close_the_page() {
        let trace =
            "{\"kind\":\"request\",\"answer\":\"</script><script>alert(1)\"}\n{\"kind\":\"req";
        let json = embedded(trace);
        assert!(!json.contains("</script>"), "{json}");
        let back: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(back[0]["answer"], "</script><script>alert(1)");
        assert_eq!(back.as_array().unwrap().len(), 1);
    }
}
