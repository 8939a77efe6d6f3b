//! Drawing: `impl Widget` for the view model's parts.
//!
//! These functions place what [`crate::review::view::build_view`] produced and nothing more:
//! they read no state, hold no locks and never see an unsanitized string.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph, Row, Table, Widget};

use crate::review::view::{Body, OverlayView, PaneView, QueueView, View};

impl Widget for &View {
    fn render(self, _area: Rect, buf: &mut Buffer) {
        let layout = self.layout;
        Paragraph::new(self.header.clone())
            .style(self.header.style)
            .render(layout.header, buf);
        match &self.body {
            Body::Queue(queue) => queue.render(layout.body, buf),
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
