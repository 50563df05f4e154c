//! Model matrices in the runner: `--models a,b` (parsed by [`parse_models`]) and the cells of the
//! suite (`cells`: which test process runs each eval on each model).
//!
//! A test of a model matrix the attribute expanded (`models = [..]`) is listed by libtest as
//! `function[::label]::model_<id>`; its model is known to the test itself (the runner reads it
//! back from its evidence). Under `--models`, the listed models replace the attribute's list:
//! each eval runs once per listed model, on the test of that model's module when the attribute
//! has one, else on the eval's first model test with the model given as
//! [`ENV_MODEL`](crate::harness::ENV_MODEL) (which the test applies over its own).

use super::SuiteError;
use super::list::TestList;
use crate::harness::model_segment;

/// One cell of the suite: a test of the list run on a model of `--models` (its index), or as it
/// is (`None`: without `--models`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cell {
    /// The test's index in the suite's list.
    pub test: usize,
    /// The index of its model in `--models`, when given.
    pub model: Option<usize>,
}

/// Parse the value of `--models`: model ids separated by commas (spaces around each trimmed).
///
/// Errors (naming `--models` and the fix): an empty entry (`a,,b`, a trailing comma, an empty
/// value), a model given twice, two models whose test modules (`model_<id>`, see
/// [`model_segment`]) are the same.
pub fn parse_models(text: &str) -> Result<Vec<String>, SuiteError> {
    let mut models: Vec<String> = Vec::new();
    for (i, entry) in text.split(',').enumerate() {
        let model = entry.trim();
        if model.is_empty() {
            return Err(SuiteError::Models(format!(
                "--models {text:?}: entry {} is empty; list model ids separated by commas, e.g. --models claude-sonnet-4.5,gpt-5",
                i + 1
            )));
        }
        if let Some(earlier) = models
            .iter()
            .find(|m| model_segment(m) == model_segment(model))
        {
            return Err(SuiteError::Models(if earlier == model {
                format!("--models {text:?}: {model:?} is listed twice; list each model once")
            } else {
                format!(
                    "--models {text:?}: {earlier:?} and {model:?} name the same test module `{}`; list models whose ids differ in more than punctuation or case",
                    model_segment(model)
                )
            }));
        }
        models.push(model.to_owned());
    }
    Ok(models)
}

/// The eval a listed test name belongs to and its model module: `("greets::english",
/// Some("model_gpt_5"))` for `greets::english::model_gpt_5`; `(name, None)` for a test outside
/// an attribute's model matrix.
pub(crate) fn split_model_module(name: &str) -> (&str, Option<&str>) {
    match name.rsplit_once("::") {
        Some((eval, module)) if module.starts_with("model_") => (eval, Some(module)),
        None if name.starts_with("model_") => ("", Some(name)),
        _ => (name, None),
    }
}

/// The suite's cells, in list order: without `models`, every test once. With `models`, every
/// eval once per model, in the order given: a test outside an attribute's model matrix runs on
/// each model; of an attribute's model tests (one eval, one test per model), the one whose
/// module is the model's runs it, else the eval's first (the model reaches it as
/// [`ENV_MODEL`](crate::harness::ENV_MODEL)); its other tests are not run again.
pub(crate) fn cells(list: &TestList, models: &[String]) -> Vec<Cell> {
    if models.is_empty() {
        return (0..list.tests.len())
            .map(|test| Cell { test, model: None })
            .collect();
    }
    let mut done: Vec<(usize, &str)> = Vec::new();
    let mut cells = Vec::new();
    for (index, test) in list.tests.iter().enumerate() {
        let (eval, module) = split_model_module(&test.name);
        if module.is_none() {
            cells.extend((0..models.len()).map(|model| Cell {
                test: index,
                model: Some(model),
            }));
            continue;
        }
        if done.contains(&(test.binary, eval)) {
            continue;
        }
        done.push((test.binary, eval));
        for (model_index, model) in models.iter().enumerate() {
            let wanted = model_segment(model);
            let test = list
                .tests
                .iter()
                .position(|t| {
                    t.binary == test.binary
                        && split_model_module(&t.name) == (eval, Some(wanted.as_str()))
                })
                .unwrap_or(index);
            cells.push(Cell {
                test,
                model: Some(model_index),
            });
        }
    }
    cells
}

/// The name of a test's record run on `model`: its eval (the model module removed) then
/// `@model`: `greets::english@gpt-5`.
pub(crate) fn cell_name(name: &str, model: &str) -> String {
    format!("{}@{model}", split_model_module(name).0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::list::{EvalTest, TestList};

    fn list(names: &[&str]) -> TestList {
        TestList {
            tests: names
                .iter()
                .map(|name| EvalTest {
                    binary: 0,
                    test_id: format!("{name}::__copilot_eval"),
                    name: (*name).to_owned(),
                })
                .collect(),
            ..TestList::default()
        }
    }

    #[test]
    fn models_are_split_on_commas_and_trimmed() {
        assert_eq!(
            parse_models("claude-sonnet-4.5, gpt-5").unwrap(),
            ["claude-sonnet-4.5", "gpt-5"]
        );
        assert_eq!(parse_models("gpt-5").unwrap(), ["gpt-5"]);
    }

    #[test]
    fn empty_entries_and_duplicates_are_refused_with_the_fix() {
        for (text, says) in [
            ("", "entry 1 is empty"),
            ("a,,b", "entry 2 is empty"),
            ("a,", "entry 2 is empty"),
            ("a, ,b", "entry 2 is empty"),
            (
                "gpt-5,o3,gpt-5",
                "\"gpt-5\" is listed twice; list each model once",
            ),
            (
                "gpt-5,GPT.5",
                "\"gpt-5\" and \"GPT.5\" name the same test module `model_gpt_5`",
            ),
        ] {
            let error = parse_models(text).unwrap_err().to_string();
            assert!(error.starts_with("--models "), "{error}");
            assert!(error.contains(says), "{text:?}: {error}");
        }
    }

    #[test]
    fn a_test_outside_a_matrix_runs_once_per_model() {
        let models = vec!["a".to_owned(), "b".to_owned()];
        let cells = cells(&list(&["x", "y::case"]), &models);
        let got: Vec<(usize, Option<usize>)> = cells.iter().map(|c| (c.test, c.model)).collect();
        assert_eq!(
            got,
            [(0, Some(0)), (0, Some(1)), (1, Some(0)), (1, Some(1))]
        );
        assert_eq!(cell_name("y::case", "b"), "y::case@b");
    }

    #[test]
    fn an_attribute_matrix_runs_each_listed_model_once_on_its_own_test_if_any() {
        let tests = list(&[
            "f::model_claude_sonnet_4_5",
            "f::model_gpt_5",
            "g::english::model_gpt_5",
            "g::french::model_gpt_5",
        ]);
        let models = vec!["gpt-5".to_owned(), "o3".to_owned()];
        let got: Vec<(usize, Option<usize>)> = cells(&tests, &models)
            .iter()
            .map(|c| (c.test, c.model))
            .collect();
        // f: gpt-5 on its own test (1), o3 on f's first (0); each case of g likewise.
        assert_eq!(
            got,
            [
                (1, Some(0)),
                (0, Some(1)),
                (2, Some(0)),
                (2, Some(1)),
                (3, Some(0)),
                (3, Some(1))
            ]
        );
        assert_eq!(cell_name("f::model_gpt_5", "o3"), "f@o3");
        // Without --models every test runs once, as listed.
        assert_eq!(cells(&tests, &[]).len(), 4);
    }
}
