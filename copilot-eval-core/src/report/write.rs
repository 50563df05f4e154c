//! Writing the results: the report's JSON and JUnit files, redacted, atomically (the
//! redaction and atomic writing themselves are in [`crate::artifact`]).

use std::path::Path;

use super::{SuiteReport, TestRecord};
use crate::artifact::{Redactor, write_atomically};

impl Redactor {
    /// A copy of `report` with every secret removed.
    pub fn redact_report(&self, report: &SuiteReport) -> SuiteReport {
        self.redact_serialized(report)
    }

    /// A copy of one test's record with every secret removed (the runner applies it to each
    /// record as it arrives, before anything prints it).
    pub fn redact_test(&self, test: &TestRecord) -> TestRecord {
        self.redact_serialized(test)
    }
}

/// Write `report` as pretty JSON (with a trailing newline) to `path`, atomically, after
/// removing the secrets `redactor` knows.
///
/// Errors: as [`write_atomically`].
pub fn write_json(path: &Path, report: &SuiteReport, redactor: &Redactor) -> std::io::Result<()> {
    let report = redactor.redact_report(report);
    let mut text = serde_json::to_string_pretty(&report).expect("a report serialises");
    text.push('\n');
    write_atomically(path, text.as_bytes())
}

/// Write `report` as JUnit XML (see [`junit`](super::junit)) to `path`, atomically, after
/// removing the secrets `redactor` knows.
///
/// Errors: as [`write_atomically`], or the XML could not be serialised. (Feature `runner`.)
#[cfg(feature = "runner")]
pub fn write_junit(path: &Path, report: &SuiteReport, redactor: &Redactor) -> std::io::Result<()> {
    let report = redactor.redact_report(report);
    let xml = super::junit::to_junit(&report)
        .to_string()
        .map_err(|e| std::io::Error::other(format!("serialising JUnit XML: {e}")))?;
    write_atomically(path, xml.as_bytes())
}
