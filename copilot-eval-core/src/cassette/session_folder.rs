//! The text rule of the `session_folder` normaliser (which `normalize` applies to user
//! messages): the run's session folder (`<runtime home>/session-state/<session id>`, private to
//! the run and new each time) becomes `${session_folder}`. Runtime 1.0.102 names it in the
//! notice of a prompt sent in plan mode (`Save the plan to: <home>/session-state/<id>/plan.md`).

/// The placeholder of the session folder.
pub(crate) const PLACEHOLDER: &str = "${session_folder}";
/// The part of the session folder's path that does not change.
pub(super) const MARK: &str = "/session-state/";
/// Length of a session id (a UUID: 8-4-4-4-12 hex digits).
const ID_LEN: usize = 36;

/// `text` with every `<folder>/session-state/<uuid>` (the folder running back to the previous
/// whitespace) replaced by [`PLACEHOLDER`].
pub(crate) fn replace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let id = after.get(..ID_LEN).filter(|id| is_uuid(id));
        let head = &rest[..at];
        let start = head.rfind(char::is_whitespace).map_or(0, |w| w + 1);
        match id {
            Some(_) if start < at => {
                out.push_str(&rest[..start]);
                out.push_str(PLACEHOLDER);
                rest = &after[ID_LEN..];
            }
            _ => {
                out.push_str(&rest[..at + MARK.len()]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn is_uuid(text: &str) -> bool {
    text.char_indices().all(|(i, c)| match i {
        8 | 13 | 18 | 23 => c == '-',
        _ => c.is_ascii_hexdigit(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_folder_becomes_a_placeholder() {
        let home = std::env::temp_dir().join("copilot-eval-home-Ab12Cd");
        let text = format!(
            "4. Save the plan to: {}/session-state/285e2773-2840-49fa-89fe-ab46aab131bd/plan.md\nThe plan",
            home.display()
        );
        assert_eq!(
            replace(&text),
            "4. Save the plan to: ${session_folder}/plan.md\nThe plan"
        );
        // Not a session id, or no folder before the mark: unchanged.
        for kept in [
            "see /x/session-state/not-an-id",
            "/session-state/285e2773-2840-49fa-89fe-ab46aab131bd",
        ] {
            assert_eq!(replace(kept), kept);
        }
    }
}
