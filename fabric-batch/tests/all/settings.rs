//! BatchSettings (the C ABI's document) to options: defaults and refusals naming the field.

use fabric_batch::{BatchOptions, Isolation};
use fabric_config::batch::{BatchIsolation, BatchSettings};
use fabric_config::codes;

#[test]
fn settings_become_options_and_bad_values_name_the_field() {
    let options = BatchOptions::from_settings(&BatchSettings {
        concurrency: Some(3),
        isolation: Some(BatchIsolation::Reuse),
        attempts: Some(2),
        timeout_seconds: Some(1.5),
        ..BatchSettings::default()
    })
    .unwrap();
    assert_eq!(options.concurrency, 3);
    assert_eq!(options.isolation, Isolation::Reuse);
    assert_eq!(options.attempts, 2);
    assert_eq!(
        options.timeout,
        Some(std::time::Duration::from_millis(1500))
    );
    for (settings, field) in [
        (
            BatchSettings {
                concurrency: Some(0),
                ..BatchSettings::default()
            },
            "concurrency",
        ),
        (
            BatchSettings {
                attempts: Some(0),
                ..BatchSettings::default()
            },
            "attempts",
        ),
        (
            BatchSettings {
                timeout_seconds: Some(-1.0),
                ..BatchSettings::default()
            },
            "timeout_seconds",
        ),
        (
            BatchSettings {
                grace_seconds: Some(f64::NAN),
                ..BatchSettings::default()
            },
            "grace_seconds",
        ),
    ] {
        let error = BatchOptions::from_settings(&settings).unwrap_err();
        assert_eq!(error.code, codes::BATCH_SETTINGS_INVALID);
        assert_eq!(error.metadata["path"], field);
    }
}
