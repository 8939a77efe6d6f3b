#[path = "support/hostile.rs"]
mod hostile;
#[test]
fn show() {
    for v in hostile::secrets_split_across_clauses() {
        println!("{} parses={} {:?}", v.name, v.parses, v.clauses);
    }
}
