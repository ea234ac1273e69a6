//! The tap grid: 4 columns × 6 rows, cells numbered 1–24 row by row, drawn over a screenshot so a
//! model can say "cell 14, top-left" when no element fits. Lines and numbers scale with the image.

use font8x8::UnicodeFonts;

use super::Frame;

pub const COLS: u32 = 4;
pub const ROWS: u32 = 6;
pub const CELLS: u32 = COLS * ROWS;

// Where in a cell a tap lands. Corners sit a quarter of the cell in from the edge, so a tap
// never lands on a line between cells. (A comment, not a doc: it would go into tools/list.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Position {
    Center,
    TopLeft,
    TopRight,
    BottomLeft,
    BottomRight,
}

/// The point of `cell` (1-based) at `position`, in a `width`×`height` space.
pub fn point(cell: u32, position: Position, width: u32, height: u32) -> Option<(i32, i32)> {
    if !(1..=CELLS).contains(&cell) {
        return None;
    }
    let (col, row) = ((cell - 1) % COLS, (cell - 1) / COLS);
    let (cw, ch) = (width as f64 / COLS as f64, height as f64 / ROWS as f64);
    let (x0, y0) = (col as f64 * cw, row as f64 * ch);
    let (fx, fy) = match position {
        Position::Center => (0.5, 0.5),
        Position::TopLeft => (0.25, 0.25),
        Position::TopRight => (0.75, 0.25),
        Position::BottomLeft => (0.25, 0.75),
        Position::BottomRight => (0.75, 0.75),
    };
    Some(((x0 + fx * cw).round() as i32, (y0 + fy * ch).round() as i32))
}

/// Draws the grid lines and each cell's number (white on black). Lines and boxes sit on the
/// JPEG's 8-pixel blocks and are whole blocks thick: a block of one color costs a JPEG almost
/// nothing, while a thin line crossing blocks costs more than the rest of the image (measured on
/// the real launcher screenshot: +5K base64 chars for aligned 8 px lines, +14K for 2 px ones).
pub fn draw(frame: &mut Frame) {
    let (w, h) = (frame.width, frame.height);
    let line = if w.max(h) > 1500 { 16 } else { 8 };
    let snap = |v: u32| v / 8 * 8;
    for c in 1..COLS {
        fill(
            frame,
            snap(c * w / COLS).saturating_sub(line / 2),
            0,
            line,
            h,
            [255, 214, 0],
        );
    }
    for r in 1..ROWS {
        fill(
            frame,
            0,
            snap(r * h / ROWS).saturating_sub(line / 2),
            w,
            line,
            [255, 214, 0],
        );
    }
    // Digits about a tenth of a cell's height (16 px at 1000 px): larger ones cost more than they help.
    let scale = ((h / ROWS) / 10 / 8).max(2);
    let round_up = |v: u32| v.div_ceil(8) * 8;
    for cell in 1..=CELLS {
        let (col, row) = ((cell - 1) % COLS, (cell - 1) / COLS);
        let (x, y) = (snap(col * w / COLS) + line, snap(row * h / ROWS) + line);
        let text = cell.to_string();
        let (bw, bh) = (
            round_up(text.len() as u32 * 8 * scale + 2 * scale),
            round_up(8 * scale + 2 * scale),
        );
        fill(frame, x, y, bw, bh, [0, 0, 0]);
        for (i, ch) in text.chars().enumerate() {
            glyph(
                frame,
                ch,
                x + scale + i as u32 * 8 * scale,
                y + scale,
                scale,
                [255, 255, 255],
            );
        }
    }
}

pub fn fill(frame: &mut Frame, x: u32, y: u32, w: u32, h: u32, rgb: [u8; 3]) {
    for yy in y..(y + h).min(frame.height) {
        for xx in x..(x + w).min(frame.width) {
            let i = ((yy * frame.width + xx) * 4) as usize;
            frame.rgba[i..i + 3].copy_from_slice(&rgb);
            frame.rgba[i + 3] = 255;
        }
    }
}

pub(crate) fn glyph(frame: &mut Frame, ch: char, x: u32, y: u32, scale: u32, rgb: [u8; 3]) {
    let Some(rows) = font8x8::BASIC_FONTS.get(ch) else {
        return;
    };
    for (gy, bits) in rows.iter().enumerate() {
        for gx in 0..8u32 {
            if bits & (1 << gx) != 0 {
                fill(frame, x + gx * scale, y + gy as u32 * scale, scale, scale, rgb);
            }
        }
    }
}

/// Numbered boxes: each `(label, left, top, right, bottom)` in image pixels gets an outline and
/// its label (e.g. a ref's number) in a corner, sized like the grid's numbers.
pub fn annotate(frame: &mut Frame, boxes: &[(String, u32, u32, u32, u32)]) {
    let line = (frame.width.max(frame.height) / 500).max(2);
    let scale = (frame.height / ROWS / 6 / 8).max(1);
    let color = [255, 0, 170];
    for (label, l, t, r, b) in boxes {
        let (w, h) = (r.saturating_sub(*l).max(1), b.saturating_sub(*t).max(1));
        fill(frame, *l, *t, w, line, color);
        fill(frame, *l, b.saturating_sub(line), w, line, color);
        fill(frame, *l, *t, line, h, color);
        fill(frame, r.saturating_sub(line), *t, line, h, color);
        let pad = scale;
        fill(
            frame,
            *l,
            *t,
            label.len() as u32 * 8 * scale + 2 * pad,
            8 * scale + 2 * pad,
            color,
        );
        for (i, ch) in label.chars().enumerate() {
            glyph(
                frame,
                ch,
                l + pad + i as u32 * 8 * scale,
                t + pad,
                scale,
                [255, 255, 255],
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_and_positions_map_to_points_inside_the_cell() {
        assert_eq!(point(1, Position::Center, 1080, 2400), Some((135, 200)));
        assert_eq!(point(24, Position::BottomRight, 1080, 2400), Some((1013, 2300)));
        assert_eq!(point(6, Position::TopLeft, 1080, 2400), Some((338, 500)));
        assert_eq!(point(0, Position::Center, 1080, 2400), None);
        assert_eq!(point(25, Position::Center, 1080, 2400), None);
    }

    #[test]
    fn drawing_marks_lines_and_numbers_and_stays_in_bounds() {
        let mut f = Frame {
            width: 450,
            height: 1000,
            rgba: vec![128; 450 * 1000 * 4],
        };
        draw(&mut f);
        let at = |x: u32, y: u32| &f.rgba[((y * 450 + x) * 4) as usize..((y * 450 + x) * 4 + 3) as usize];
        assert_eq!(at(450 / 4, 500), [255, 214, 0], "a column line");
        assert_eq!(at(300, 1000 / 6 / 8 * 8), [255, 214, 0], "a row line");
        assert_eq!(
            at(450 / 4 / 8 * 8 - 5, 500),
            [128, 128, 128],
            "lines are 8 px, on 8 px blocks"
        );
        assert_eq!(at(60, 600), [128, 128, 128], "inside a cell stays as it was");
    }
}
