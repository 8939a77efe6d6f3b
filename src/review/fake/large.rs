//! A synthetic source of any size for benchmarks: rows are computed from their index, so a
//! queue of 100,000 items costs nothing until a page is asked for, and paging through it
//! behaves like a store that answers `LIMIT … OFFSET …` queries.

use std::collections::BTreeMap;

use super::{build_item, row_of, FakeSource};
use crate::review::filter::Filter;
use crate::review::source::{
    AuditView, Dashboard, DecisionRefusal, DecisionRequest, ItemDetail, ItemId, ItemPreview,
    QueuePage, QueueRow, ReasonCode, Receipt, RerunOutcome, ReviewSource, Sort,
};

/// `len` items cycling through the fake's twenty kinds.
#[derive(Debug, Clone)]
pub struct LargeSource {
    pub len: usize,
    templates: Vec<QueueRow>,
    small: FakeSource,
}

impl LargeSource {
    pub fn new(len: usize) -> LargeSource {
        let small = FakeSource::new();
        let templates = small.items.iter().map(row_of).collect();
        LargeSource {
            len,
            templates,
            small,
        }
    }

    fn row(&self, i: usize) -> Option<QueueRow> {
        let mut row = self.templates.get(i % self.templates.len())?.clone();
        row.id = ItemId(format!("q-{:07}", i + 1));
        row.created_unix -= i64::try_from(i / self.templates.len()).unwrap_or(0);
        Some(row)
    }

    fn index_of(id: &ItemId) -> anyhow::Result<usize> {
        id.0.trim_start_matches("q-")
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .ok_or_else(|| anyhow::anyhow!("no item \"{id}\""))
    }

    fn template_id(&self, id: &ItemId) -> anyhow::Result<ItemId> {
        let i = Self::index_of(id)?;
        Ok(ItemId(format!("q-{:04}", i % self.templates.len() + 1)))
    }
}

impl ReviewSource for LargeSource {
    fn queue_page(
        &mut self,
        filter: &Filter,
        _sort: Sort,
        offset: usize,
        limit: usize,
    ) -> anyhow::Result<QueuePage> {
        let mut page = QueuePage {
            counts_by_status: BTreeMap::new(),
            ..QueuePage::default()
        };
        if filter.is_empty() {
            let cycles = self.len / self.templates.len();
            let rest = self.len % self.templates.len();
            for (t, row) in self.templates.iter().enumerate() {
                let n = cycles + usize::from(t < rest);
                *page.counts_by_status.entry(row.status).or_default() += n;
            }
            page.total = self.len;
            page.rows = (offset..(offset + limit).min(self.len))
                .filter_map(|i| self.row(i))
                .collect();
            return Ok(page);
        }
        // A filtered query scans, as an unindexed SQL query would.
        let loose = filter.without_status();
        for i in 0..self.len {
            let Some(row) = self.row(i) else { continue };
            if loose.matches(&row) {
                *page.counts_by_status.entry(row.status).or_default() += 1;
            }
            if filter.matches(&row) {
                if page.total >= offset && page.rows.len() < limit {
                    page.rows.push(row);
                }
                page.total += 1;
            }
        }
        Ok(page)
    }

    fn item(&mut self, id: &ItemId) -> anyhow::Result<ItemDetail> {
        let i = Self::index_of(id)?;
        let mut item = build_item(i % self.templates.len());
        item.id = id.clone();
        Ok(item)
    }

    fn preview(&mut self, id: &ItemId) -> anyhow::Result<ItemPreview> {
        let mut preview = super::triage::preview(&self.item(id)?);
        preview.id = id.clone();
        Ok(preview)
    }

    fn reason_counts(&mut self, filter: &Filter) -> anyhow::Result<Vec<(String, usize)>> {
        let rows: Vec<QueueRow> = (0..self.len).filter_map(|i| self.row(i)).collect();
        Ok(super::triage::reason_counts(rows.iter(), filter))
    }

    fn dashboard(&mut self) -> anyhow::Result<Dashboard> {
        let weight = self.len / self.small.items.len().max(1);
        Ok(super::triage::dashboard(&self.small.items, weight.max(1)))
    }

    fn rerun(&mut self, id: &ItemId) -> anyhow::Result<RerunOutcome> {
        let template = self.template_id(id)?;
        let mut outcome = self.small.rerun(&template)?;
        outcome.detail.id = id.clone();
        Ok(outcome)
    }

    fn decide(&mut self, id: &ItemId, r: &DecisionRequest) -> Result<Receipt, DecisionRefusal> {
        let template = self
            .template_id(id)
            .map_err(|e| DecisionRefusal::Failed(e.to_string()))?;
        self.small.decide(&template, r)
    }

    fn reveal(&mut self, id: &ItemId, finding_id: &str, reviewer: &str) -> anyhow::Result<String> {
        let template = self.template_id(id)?;
        self.small.reveal(&template, finding_id, reviewer)
    }

    fn audit_status(&mut self, id: &ItemId) -> anyhow::Result<AuditView> {
        let template = self.template_id(id)?;
        self.small.audit_status(&template)
    }

    fn reason_codes(&mut self) -> anyhow::Result<Vec<ReasonCode>> {
        self.small.reason_codes()
    }

    fn fork(&self) -> anyhow::Result<Box<dyn ReviewSource>> {
        Ok(Box::new(self.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::review::source::Status;

    #[test]
    fn pages_without_materialising_the_queue() {
        let mut s = LargeSource::new(100_000);
        let page = s
            .queue_page(&Filter::default(), Sort::Age, 50_000, 10)
            .unwrap();
        assert_eq!(page.total, 100_000);
        assert_eq!(page.rows.len(), 10);
        assert_eq!(page.rows[0].id.0, "q-0050001");
        let counted: usize = page.counts_by_status.values().sum();
        assert_eq!(counted, 100_000);
        assert_eq!(page.counts_by_status.get(&Status::Accepted), Some(&5_000));
        let item = s.item(&ItemId("q-0050001".into())).unwrap();
        assert_eq!(item.id.0, "q-0050001");
    }
}
