//! Drawing: `impl Widget` for the view model's parts.
//!
//! These functions place what [`crate::review::view::build_view`] produced and nothing more:
//! they read no state, hold no locks and never see an unsanitized string.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Direction, Layout, Rect};
use ratatui::text::Line;
use ratatui::widgets::{
    Bar, BarChart, BarGroup, Block, BorderType, Borders, Clear, Paragraph, Row, Sparkline, Table,
    Widget,
};

use crate::review::view::{Body, DashboardView, OverlayView, PaneView, QueueView, View};

impl Widget for &View {
    fn render(self, _area: Rect, buf: &mut Buffer) {
        let layout = self.layout;
        Paragraph::new(self.header.clone())
            .style(self.header.style)
            .render(layout.header, buf);
        match &self.body {
            Body::Queue(queue) => {
                queue.render(queue.area, buf);
                if let Some(preview) = &queue.preview {
                    preview.render(preview.area, buf);
                }
            }
            Body::Dashboard(dashboard) => dashboard.as_ref().render(dashboard.area, buf),
            Body::Panes { title, panes } => {
                if let Some((area, line)) = title {
                    Paragraph::new(line.clone()).render(*area, buf);
                }
                for pane in panes {
                    pane.render(pane.area, buf);
                }
            }
        }
        if let Some(status) = &self.status {
            Paragraph::new(status.clone()).render(layout.status, buf);
        }
        Paragraph::new(self.footer.clone())
            .style(self.footer.style)
            .render(layout.footer, buf);
        if let Some(overlay) = &self.overlay {
            overlay.render(overlay.area, buf);
        }
    }
}

impl Widget for &QueueView {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .title(self.title.clone());
        let inner = block.inner(area);
        block.render(area, buf);
        let header = Row::new(self.columns.iter().map(|(name, _)| Line::from(*name)))
            .style(ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::BOLD));
        let rows = self.rows.iter().enumerate().map(|(i, cells)| {
            let row = Row::new(cells.iter().cloned());
            if Some(i) == self.selected {
                row.style(self.selected_style)
            } else {
                row
            }
        });
        let widths: Vec<_> = self.columns.iter().map(|(_, c)| *c).collect();
        Table::new(rows, widths)
            .header(header)
            .column_spacing(1)
            .render(inner, buf);
        if let Some(placeholder) = &self.placeholder {
            let below_titles = Rect::new(
                inner.x,
                inner.y.saturating_add(1),
                inner.width,
                inner.height.saturating_sub(1),
            )
            .intersection(inner);
            let lines = crate::review::view::text::wrap(
                vec![placeholder.clone()],
                usize::from(inner.width),
            );
            Paragraph::new(lines).render(below_titles, buf);
        }
    }
}

impl Widget for &PaneView {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(if self.focused {
                BorderType::Thick
            } else {
                BorderType::Rounded
            })
            .border_style(self.border)
            .title(self.title.clone());
        let inner = block.inner(area);
        block.render(area, buf);
        let visible: Vec<Line> = self
            .lines
            .iter()
            .skip(self.scroll)
            .take(usize::from(inner.height))
            .cloned()
            .collect();
        Paragraph::new(visible).render(inner, buf);
    }
}

impl Widget for &OverlayView {
    fn render(self, area: Rect, buf: &mut Buffer) {
        Clear.render(area, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Double)
            .border_style(self.border)
            .title(self.title.clone());
        let inner = block.inner(area);
        block.render(area, buf);
        Paragraph::new(self.lines.clone()).render(inner, buf);
    }
}

fn block(title: &str, view: &DashboardView) -> Block<'static> {
    Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(view.styles.border)
        .title(Line::styled(format!(" {title} "), view.styles.title))
}

impl Widget for &DashboardView {
    fn render(self, _area: Rect, buf: &mut Buffer) {
        let a = self.areas;
        let s = self.styles;
        // Per day: quarantined, released, rejected side by side, each bar labelled q r x.
        let days = block("Per day: q quarantined · r released · x rejected", self);
        let inner = days.inner(a.days);
        days.render(a.days, buf);
        let groups: Vec<BarGroup> = self
            .days
            .iter()
            .map(|d| {
                BarGroup::with_label(
                    Line::from(d.label.clone()),
                    vec![
                        Bar::with_label("q", d.quarantined).style(s.quarantined),
                        Bar::with_label("r", d.released).style(s.released),
                        Bar::with_label("x", d.rejected).style(s.rejected),
                    ],
                )
            })
            .collect();
        let mut chart = BarChart::default()
            .bar_width(2)
            .bar_gap(0)
            .group_gap(1)
            .value_style(s.dim)
            .label_style(s.dim);
        for group in groups {
            chart = chart.data(group);
        }
        chart.render(inner, buf);
        if let Some(note) = &self.note {
            Paragraph::new(note.clone()).render(inner, buf);
        }
        // The whole history as a sparkline, with totals under it.
        let history = block("History: quarantined per day", self);
        let inner = history.inner(a.history);
        history.render(a.history, buf);
        let [spark, totals] =
            Layout::vertical([Constraint::Length(3), Constraint::Min(1)]).areas(inner);
        let width = usize::from(spark.width.max(1));
        let data: Vec<u64> = self
            .history
            .iter()
            .skip(self.history.len().saturating_sub(width))
            .copied()
            .collect();
        Sparkline::default()
            .data(&data)
            .style(s.quarantined)
            .render(spark, buf);
        Paragraph::new(self.history_lines.clone()).render(totals, buf);
        // What is quarantined now, by reason.
        let reasons = block("Quarantined now, by reason", self);
        let inner = reasons.inner(a.reasons);
        reasons.render(a.reasons, buf);
        let bars: Vec<Bar> = self
            .reasons
            .iter()
            .map(|(label, n)| {
                Bar::default()
                    .label(label.clone())
                    .value(*n)
                    .style(s.quarantined)
            })
            .collect();
        BarChart::default()
            .direction(Direction::Horizontal)
            .bar_width(1)
            .bar_gap(0)
            .value_style(s.dim)
            .data(BarGroup::new(bars))
            .render(inner, buf);
        let waiting = block("Waiting longest", self);
        let inner = waiting.inner(a.waiting);
        waiting.render(a.waiting, buf);
        let lines = crate::review::view::text::wrap(self.waiting.clone(), usize::from(inner.width));
        Paragraph::new(lines).render(inner, buf);
        // Each reviewer's releases (r) and rejections (x).
        let reviewers = block("Decisions by reviewer: r released · x rejected", self);
        let inner = reviewers.inner(a.reviewers);
        reviewers.render(a.reviewers, buf);
        if self.reviewers.is_empty() {
            Paragraph::new(Line::styled("no decisions yet", s.dim)).render(inner, buf);
            return;
        }
        let mut chart = BarChart::default()
            .direction(Direction::Horizontal)
            .bar_width(1)
            .bar_gap(0)
            .group_gap(1)
            .value_style(s.dim);
        for (who, released, rejected) in &self.reviewers {
            chart = chart.data(BarGroup::with_label(
                who.clone(),
                vec![
                    Bar::with_label("r", *released).style(s.released),
                    Bar::with_label("x", *rejected).style(s.rejected),
                ],
            ));
        }
        chart.render(inner, buf);
    }
}
