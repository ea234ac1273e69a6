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

/// How the answer's text describes the grid, so a model knows the numbering without guessing.
pub const NUMBERING: &str = "cells 1-24: 4 columns x 6 rows, numbered row by row from the top left; each number sits in its cell's top-left corner";

/// Draws the grid as dashed lines and each cell's number, built for JPEG. A sharp thin line puts
/// an edge into every 8×8 block it crosses, and that costs more than the rest of the image
/// (2 px lines: +46–88% base64 on the real screenshots; the earlier solid 8 px yellow bands with
/// scale-2 numbers: +109–125%). A flat block of one color costs almost nothing, so a line is
/// dashes of whole 8×8 blocks with gaps between them (what is under a line shows through). Each
/// dash is two blocks, one near black and one near white, so every dash shows on a dark screen
/// (dark mode) as on a light one; each number is one 8×8 glyph per digit, white on a black box,
/// legible on any background.
pub fn draw(frame: &mut Frame) {
    let (w, h) = (frame.width, frame.height);
    let (columns, rows) = lines(w, h);
    for x in columns {
        for y in (0..h).step_by(DASH_STEP as usize) {
            fill(frame, x, y, 8, 8, DARK);
            fill(frame, x, y + 8, 8, 8, LIGHT);
        }
    }
    for y in rows {
        for x in (0..w).step_by(DASH_STEP as usize) {
            fill(frame, x, y, 8, 8, DARK);
            fill(frame, x + 8, y, 8, 8, LIGHT);
        }
    }
    for cell in 1..=CELLS {
        let (x, y) = number_box(cell, w, h);
        let text = cell.to_string();
        fill(frame, x, y, text.len() as u32 * 8, 8, [0, 0, 0]);
        for (i, ch) in text.chars().enumerate() {
            glyph(frame, ch, x + i as u32 * 8, y, 1, [255, 255, 255]);
        }
    }
}

/// A dash's two blocks: one reads on light screens, the other on dark ones.
pub const DARK: [u8; 3] = [24, 24, 24];
pub const LIGHT: [u8; 3] = [232, 232, 232];
/// A dash (two blocks) and a gap of two blocks.
pub const DASH_STEP: u32 = 32;

/// The x of each column line and the y of each row line, in a `width`×`height` image.
pub fn lines(width: u32, height: u32) -> (Vec<u32>, Vec<u32>) {
    let block = |v: u32| v / 8 * 8;
    (
        (1..COLS).map(|c| block(c * width / COLS)).collect(),
        (1..ROWS).map(|r| block(r * height / ROWS)).collect(),
    )
}

/// Where `cell`'s number is drawn: the first whole block inside the cell after its top-left
/// line, so it covers the cell's corner and nothing near its middle.
pub fn number_box(cell: u32, width: u32, height: u32) -> (u32, u32) {
    let (col, row) = ((cell - 1) % COLS, (cell - 1) / COLS);
    let after_line = |v: u32| if v == 0 { 0 } else { v / 8 * 8 + 8 };
    (after_line(col * width / COLS), after_line(row * height / ROWS))
}

/// The 8×8 bitmap for `c`: the basic and Latin fonts, then a look-alike for common typography
/// (non-breaking hyphens and spaces, dashes, curly quotes, ellipsis, bullets), then `?`. Never a
/// box: a box reads as a character that is not there.
pub fn bitmap(c: char) -> [u8; 8] {
    let look_alike = match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{00a0}' | '\u{2000}'..='\u{200a}' | '\u{202f}' => ' ',
        '\u{2018}' | '\u{2019}' | '\u{201a}' | '\u{2032}' => '\'',
        '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{2033}' => '"',
        '\u{2026}' => '.',
        '\u{2022}' | '\u{00b7}' | '\u{2027}' => '*',
        other => other,
    };
    font8x8::BASIC_FONTS
        .get(look_alike)
        .or_else(|| font8x8::LATIN_FONTS.get(look_alike))
        .or_else(|| font8x8::BASIC_FONTS.get('?'))
        .unwrap_or([0; 8])
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

pub fn glyph(frame: &mut Frame, ch: char, x: u32, y: u32, scale: u32, rgb: [u8; 3]) {
    for (gy, bits) in bitmap(ch).iter().enumerate() {
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
    fn drawing_marks_dashed_lines_and_numbers_and_stays_in_bounds() {
        let mut f = Frame {
            width: 450,
            height: 1000,
            rgba: vec![128; 450 * 1000 * 4],
        };
        draw(&mut f);
        let at = |x: u32, y: u32| &f.rgba[((y * 450 + x) * 4) as usize..((y * 450 + x) * 4 + 3) as usize];
        let column = 450 / 4 / 8 * 8;
        assert_eq!(at(column, 512), DARK, "a column line's dash: a dark block");
        assert_eq!(at(column, 520), LIGHT, "then a light one");
        assert_eq!(at(column, 528), [128, 128, 128], "and the gap after it");
        assert_eq!(at(column - 1, 512), [128, 128, 128], "lines are one block wide");
        assert_eq!(at(160, 1000 / 6 / 8 * 8), DARK, "a row line's dash");
        assert_eq!(at(60, 600), [128, 128, 128], "inside a cell stays as it was");
        let (x, y) = number_box(6, 450, 1000);
        assert_eq!((x, y), (120, 168), "cell 6's number after the lines at 112 and 160");
    }

    #[test]
    fn characters_outside_the_font_get_a_look_alike_not_a_box() {
        assert_eq!(bitmap('\u{2011}'), bitmap('-'));
        assert_eq!(bitmap('\u{2019}'), bitmap('\''));
        assert_eq!(bitmap('漢'), bitmap('?'));
        assert_eq!(bitmap('é'), font8x8::LATIN_FONTS.get('é').unwrap());
    }
}
