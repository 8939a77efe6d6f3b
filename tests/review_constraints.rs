//! exploratory
#![allow(clippy::unwrap_used)]

use cq::review::source::{ItemId, ReviewSource};
use cq::review::store_source::StoreSource;
use cq::service::Checker;
use cq::store::{Mode, Store};

#[test]
fn explore() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db");
    let built = cq::service::demo::build(&db).unwrap();
    let store = Store::open(&db, Mode::ReadOnly).unwrap();
    let checker = Checker::new(cq::service::demo::default_policy().unwrap()).unwrap();
    let mut source = StoreSource::new(store, checker, None).unwrap();
    for row in &built.rows {
        let item = source.item(&ItemId(row.compaction_id.clone())).unwrap();
        println!("===== {} {}", row.scenario, item.task);
        for c in &item.constraints {
            println!("{:?} {} {:?}", c.kind, c.id, c.status);
            for s in &c.support { println!("   support: {}", s.text); }
            for s in &c.conflicts { println!("   conflict: {:?} {} / {:?}", s.sentence.as_ref().map(|x| &x.text), s.pattern_id, s.matched); }
            if let Some(cl) = &c.closest { println!("   closest {}%: {}", cl.similarity, cl.sentence.text); }
            if let Some(cl) = &c.claimed { println!("   claimed: {}", cl.text); }
            for r in &c.reasons { println!("   why: {r}"); }
            for t in &c.user_turns { println!("   turn {} ({}): {} | refusals {:?}", t.message_id, t.shared, t.excerpt, t.refusals); }
            if let Some(p) = &c.pinned { println!("   pinned identical {}", p.identical()); }
        }
    }
}
