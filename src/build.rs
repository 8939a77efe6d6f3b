//! Build script: the embedded rule pack and built-in policies, read from TOML once here and
//! written as JSON into `OUT_DIR`, so a process reads them with a JSON parser (a fraction of the
//! TOML parser's time) instead of parsing TOML at every start. The TOML files stay the source
//! of truth: they are what `Scanner::rules_sha256` hashes and what users edit; a test holds
//! the rules and policies read from the JSON equal to those read from the TOML.

use std::path::Path;

const DIRS: &[&str] = &["assets/rules", "assets/policies"];

fn main() {
    println!("cargo:rerun-if-changed=src/build.rs");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    for dir in DIRS {
        println!("cargo:rerun-if-changed={dir}");
        let target = Path::new(&out).join(dir);
        std::fs::create_dir_all(&target)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", target.display()));
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {dir}: {e}"));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("cannot read {dir}: {e}"))
                .path();
            if path.extension().is_none_or(|e| e != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let table: toml::Table = toml::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is not valid TOML: {e}", path.display()));
            let json = to_json(&toml::Value::Table(table), &path);
            let file = target.join(path.with_extension("json").file_name().unwrap_or_default());
            std::fs::write(&file, json.to_string())
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
        }
    }
}

/// The TOML value as JSON; a datetime has no JSON form the rule and policy models read, so it
/// stops the build.
fn to_json(value: &toml::Value, path: &Path) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        toml::Value::String(s) => J::String(s.clone()),
        toml::Value::Integer(i) => J::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(J::Number)
            .unwrap_or_else(|| panic!("{}: a float that is not finite", path.display())),
        toml::Value::Boolean(b) => J::Bool(*b),
        toml::Value::Datetime(d) => panic!("{}: datetime {d} is not supported", path.display()),
        toml::Value::Array(items) => J::Array(items.iter().map(|v| to_json(v, path)).collect()),
        toml::Value::Table(table) => J::Object(
            table
                .iter()
                .map(|(k, v)| (k.clone(), to_json(v, path)))
                .collect(),
        ),
    }
}
