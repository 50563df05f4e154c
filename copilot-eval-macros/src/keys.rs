// The one list of `#[copilot_eval(...)]` keys.
//
// This file is the single source of the attribute's keys. It is `include!`d twice:
// - by the macro (copilot-eval-macros/src/lib.rs), whose `key_table!` turns it into the key list
//   it parses, validates and expands (a builder call per eval key);
// - by copilot-eval-core's harness tests (copilot-eval-core/src/harness/tests.rs), whose
//   `key_table!` compiles one call of each key's method and checks each allowed value against
//   core's parser and the ignore reason against `harness::IGNORE_REASON`.
// So it holds data only: no `use`, no items besides the one `key_table!` invocation.
//
// One line per key, in documentation order: `key: Kind => Target.method;`
// - Kind: how the literal is written and checked at compile time, and which Rust value is
//   passed to the method:
//     Text      a non-empty string literal               -> the `&'static str`
//     Count     a non-negative integer literal (u32)     -> `N u32`
//     Seconds   a number > 0, integer or float literal   -> `N f64`
//     Positive  an integer literal >= 1 (u32)            -> `N u32`
//     Fraction  a number in (0, 1], integer or float     -> `N f64`
//     OneOf[..] a string literal among the listed values -> the `&'static str`
//     Bool      `true` or `false`                        -> the `bool`
//     Switch[..] `true`, `false` or a string literal among the listed values -> the `bool` or
//               the `&'static str` as written
//     CratePath a string literal naming a path           -> (read by the macro itself)
//     Models    a list of distinct non-empty string literals -> (read by the macro itself: one
//               test per model, each passing it to `TestConfig::matrix_model`)
//     SkillEvals a string literal naming a skill folder     -> (read by the macro itself: one
//               test per entry of its evals/evals.json, each passing it to
//               `TestConfig::skill_case`)
//     SkillTriggers a string literal naming a skill folder -> (read by the macro itself: one
//               test per query of its evals/triggers.json, each passing it to
//               `TestConfig::trigger_case`)
// - Target: where the value goes:
//     Builder.method     an eval setting: `CopilotEvalBuilder::method(value)`; the macro emits it
//                        in the test's configure closure, `EvalContext::eval()` applies it
//     TestConfig.method  a test setting: `harness::TestConfig::method(value)`
//     Attribute          read by the macro only
//
// Adding a key = one line here (plus, for a new eval setting, the builder method it names), and
// its row in docs/attribute.md. The harness test fails until the method exists with that value
// type, until an allowed value is one core's parser accepts, and until docs/attribute.md lists it.

key_table! {
    ignore_reason = "copilot eval: run it with cargo copilot-eval (plain cargo test skips it)";

    name: Text => Builder.name;
    model: Text => Builder.model;
    models: Models => Attribute;
    skill_evals: SkillEvals => Attribute;
    skill_triggers: SkillTriggers => Attribute;
    max_tool_calls: Count => Builder.max_tool_calls;
    timeout_s: Seconds => Builder.timeout_s;
    reasoning_effort: OneOf["low", "medium", "high", "xhigh", "max"] => Builder.reasoning_effort;
    client_mode: OneOf["copilot-cli", "empty"] => Builder.client_mode;
    image_detail: OneOf["auto", "low", "high"] => Builder.image_detail;
    audit_requests: Bool => Builder.audit_requests;
    fresh_runtime: Bool => Builder.fresh_runtime;
    sandbox: Switch["on", "off", "required"] => Builder.sandbox;
    sandbox_allow_read: Text => Builder.sandbox_allow_read;
    sandbox_allow_write: Text => Builder.sandbox_allow_write;
    sandbox_allow_connect: Positive => Builder.sandbox_allow_connect;
    cassette: Text => TestConfig.cassette;
    trials: Positive => TestConfig.trials;
    min_pass_rate: Fraction => TestConfig.min_pass_rate;
    crate: CratePath => Attribute;
}
