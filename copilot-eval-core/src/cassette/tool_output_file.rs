//! The text rule of the `tool_output_file` normaliser (which `normalize` applies to tool
//! results): the path of the runtime's large-output file (its temp folder, timestamp and random
//! name) becomes `${tool_output_file}`. Runtime 1.0.102 replaces a tool result over its size
//! limit by `Output too large to read at once (N KB). Saved to: <temp folder>/<ms>-copilot-tool-
//! output-<hex>.txt` and a 500-character preview.

/// The placeholder of the runtime's large-output file.
pub(crate) const PLACEHOLDER: &str = "${tool_output_file}";
/// The part of the large-output file's name that does not change.
pub(super) const MARK: &str = "-copilot-tool-output-";

/// `text` with every runtime large-output file path (`[folder/]<digits>-copilot-tool-output-
/// <hex>.txt`, the folder running back to the previous whitespace) replaced by
/// [`PLACEHOLDER`].
pub(crate) fn replace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let before = &rest[..at];
        let digits = before.len() - before.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let after = &rest[at + MARK.len()..];
        let hex = after.len()
            - after
                .trim_start_matches(|c: char| c.is_ascii_hexdigit())
                .len();
        if digits == 0 || hex == 0 || !after[hex..].starts_with(".txt") {
            out.push_str(&rest[..at + MARK.len()]);
            rest = after;
            continue;
        }
        let name_start = at - digits;
        let head = &rest[..name_start];
        // The folder: after `Saved to: ` on the same line (folders may hold spaces), else back
        // to the previous whitespace, when the name follows a separator.
        const SAVED_TO: &str = "Saved to: ";
        let line_start = head.rfind('\n').map_or(0, |n| n + 1);
        let start = if !head.ends_with(['/', '\\']) {
            name_start
        } else if let Some(saved) = head[line_start..].rfind(SAVED_TO) {
            line_start + saved + SAVED_TO.len()
        } else {
            head.rfind(char::is_whitespace).map_or(0, |w| w + 1)
        };
        out.push_str(&rest[..start]);
        out.push_str(PLACEHOLDER);
        rest = &after[hex + ".txt".len()..];
    }
    out.push_str(rest);
    out
}
