#![allow(clippy::unwrap_used)]
#[test]
fn dbg() {
    let s = cq::scan::Scanner::builtin().unwrap();
    let t = std::env::var("T").unwrap_or_default();
    for f in s.scan_text("t", &t) {
        println!("{f:?} {:?}", &t[f.span.clone()]);
    }
}
