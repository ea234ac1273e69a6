//! uiautomator window dumps (`<hierarchy><node …>`), also Appium's page source dialect where the
//! element name is the class. Parsed into a flat tree that keeps every attribute, so it can be
//! written back out unchanged except for what was edited.

use std::fmt::Write as _;

/// A rectangle in device pixels, `[left,top][right,bottom]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
pub struct Bounds {
    pub left: i32,
    pub top: i32,
    pub right: i32,
    pub bottom: i32,
}

impl Bounds {
    pub fn parse(s: &str) -> Option<Bounds> {
        let nums: Vec<i32> = s
            .split(['[', ']', ','])
            .filter(|p| !p.is_empty())
            .map(|p| p.trim().parse().ok())
            .collect::<Option<_>>()?;
        match nums[..] {
            [left, top, right, bottom] => Some(Bounds {
                left,
                top,
                right,
                bottom,
            }),
            _ => None,
        }
    }

    pub fn center(&self) -> (i32, i32) {
        ((self.left + self.right) / 2, (self.top + self.bottom) / 2)
    }

    pub fn width(&self) -> i32 {
        self.right - self.left
    }

    pub fn height(&self) -> i32 {
        self.bottom - self.top
    }

    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.left && x < self.right && y >= self.top && y < self.bottom
    }

    pub fn is_empty(&self) -> bool {
        self.width() <= 0 || self.height() <= 0
    }
}

/// One element with all of its attributes in document order.
#[derive(Debug, Clone, PartialEq)]
pub struct UiNode {
    /// The XML element name: `node`, or the class name in Appium's dialect.
    pub tag: String,
    pub attrs: Vec<(String, String)>,
    pub parent: Option<usize>,
    pub children: Vec<usize>,
    pub depth: usize,
}

impl UiNode {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    pub fn set_attr(&mut self, name: &str, value: &str) {
        match self.attrs.iter_mut().find(|(k, _)| k == name) {
            Some((_, v)) => *v = value.to_string(),
            None => self.attrs.push((name.to_string(), value.to_string())),
        }
    }

    fn str_attr(&self, name: &str) -> &str {
        self.attr(name).unwrap_or("")
    }

    pub fn text(&self) -> &str {
        self.str_attr("text")
    }

    pub fn content_desc(&self) -> &str {
        self.str_attr("content-desc")
    }

    pub fn resource_id(&self) -> &str {
        self.str_attr("resource-id")
    }

    pub fn class(&self) -> &str {
        match self.attr("class") {
            Some(c) => c,
            None if self.tag != "node" => &self.tag,
            None => "",
        }
    }

    pub fn package(&self) -> &str {
        self.str_attr("package")
    }

    pub fn flag(&self, name: &str) -> bool {
        self.attr(name) == Some("true")
    }

    pub fn bounds(&self) -> Option<Bounds> {
        self.attr("bounds").and_then(Bounds::parse)
    }
}

/// A whole dump: `nodes[0]` is the first top-level node; order is document order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UiTree {
    pub rotation: i32,
    pub nodes: Vec<UiNode>,
}

#[derive(Debug, thiserror::Error)]
pub enum UiParseError {
    #[error("no <hierarchy> element in the dump (is this uiautomator XML?)")]
    NoHierarchy,
    #[error("invalid uiautomator XML: {0}")]
    Xml(#[from] roxmltree::Error),
}

/// Parses a dump. Text around the XML (such as `UI hierchary dumped to: /dev/tty`) is ignored.
pub fn parse_ui_dump(text: &str) -> Result<UiTree, UiParseError> {
    let start = text
        .find("<?xml")
        .or_else(|| text.find("<hierarchy"))
        .ok_or(UiParseError::NoHierarchy)?;
    // The end is looked for after the start: a stray `</hierarchy>` before it is no dump.
    let end = text[start..]
        .rfind("</hierarchy>")
        .map(|i| start + i + "</hierarchy>".len())
        .ok_or(UiParseError::NoHierarchy)?;
    let doc = roxmltree::Document::parse(&text[start..end])?;
    let root = doc.root_element();
    if root.tag_name().name() != "hierarchy" {
        return Err(UiParseError::NoHierarchy);
    }
    let mut tree = UiTree {
        rotation: root.attribute("rotation").and_then(|r| r.parse().ok()).unwrap_or(0),
        nodes: Vec::new(),
    };
    for child in root.children().filter(|n| n.is_element()) {
        add_node(&mut tree, child, None, 0);
    }
    Ok(tree)
}

fn add_node(tree: &mut UiTree, el: roxmltree::Node, parent: Option<usize>, depth: usize) {
    let id = tree.nodes.len();
    tree.nodes.push(UiNode {
        tag: el.tag_name().name().to_string(),
        attrs: el
            .attributes()
            .map(|a| (a.name().to_string(), a.value().to_string()))
            .collect(),
        parent,
        children: Vec::new(),
        depth,
    });
    if let Some(p) = parent {
        tree.nodes[p].children.push(id);
    }
    for child in el.children().filter(|n| n.is_element()) {
        add_node(tree, child, Some(id), depth + 1);
    }
}

impl UiTree {
    /// The top-level nodes, in order.
    pub fn roots(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes.len()).filter(|&i| self.nodes[i].parent.is_none())
    }

    /// Writes the tree back out in uiautomator's one-line format.
    pub fn to_xml(&self) -> String {
        let mut out = format!(
            "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"{}\">",
            self.rotation
        );
        for root in self.roots() {
            self.write_node(&mut out, root);
        }
        out.push_str("</hierarchy>");
        out
    }

    fn write_node(&self, out: &mut String, id: usize) {
        let node = &self.nodes[id];
        out.push('<');
        out.push_str(&node.tag);
        for (k, v) in &node.attrs {
            let _ = write!(out, " {k}=\"{}\"", escape_xml(v));
        }
        if node.children.is_empty() {
            out.push_str(" />");
            return;
        }
        out.push('>');
        for &c in &node.children {
            self.write_node(out, c);
        }
        let _ = write!(out, "</{}>", node.tag);
    }

    /// The deepest node whose bounds contain the point and that satisfies `pred`.
    pub fn deepest_at(&self, x: i32, y: i32, pred: impl Fn(&UiNode) -> bool) -> Option<usize> {
        (0..self.nodes.len())
            .filter(|&i| {
                let n = &self.nodes[i];
                pred(n) && n.bounds().is_some_and(|b| b.contains(x, y))
            })
            .max_by_key(|&i| (self.nodes[i].depth, i))
    }

    /// True if `ancestor` is `id` or one of its ancestors.
    pub fn is_within(&self, id: usize, ancestor: usize) -> bool {
        let mut cur = Some(id);
        while let Some(c) = cur {
            if c == ancestor {
                return true;
            }
            cur = self.nodes[c].parent;
        }
        false
    }
}

/// An attribute value as uiautomator writes it: its dumper turns the characters XML 1.1 does not
/// allow into `.` (`AccessibilityNodeInfoDumper.stripInvalidXMLChars`); NUL, U+FFFE and U+FFFF,
/// which XML cannot carry at all, are `.` too. Markup characters and the whitespace an XML reader
/// would fold into spaces are written as references, as its serializer does.
fn escape_xml(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '&' => s.push_str("&amp;"),
            '<' => s.push_str("&lt;"),
            '>' => s.push_str("&gt;"),
            '"' => s.push_str("&quot;"),
            '\'' => s.push_str("&apos;"),
            '\n' => s.push_str("&#10;"),
            '\r' => s.push_str("&#13;"),
            '\t' => s.push_str("&#9;"),
            c if not_in_a_dump(c) => s.push('.'),
            c => s.push(c),
        }
    }
    s
}

/// The characters uiautomator's dump shows as `.`.
fn not_in_a_dump(c: char) -> bool {
    matches!(c as u32, 0x0..=0x8 | 0xB..=0xC | 0xE..=0x1F | 0x7F..=0x84 | 0x86..=0x9F | 0xFDD0..=0xFDDF | 0xFFFE | 0xFFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" class="android.widget.FrameLayout" bounds="[0,0][1080,2400]"><node index="0" text="Wi-Fi &amp; more" class="android.widget.TextView" clickable="true" bounds="[0,100][1080,200]" /></node></hierarchy>UI hierchary dumped to: /dev/tty"#;

    #[test]
    fn round_trips_and_finds_the_deepest_node() {
        let tree = parse_ui_dump(SMALL).unwrap();
        assert_eq!(tree.nodes.len(), 2);
        assert_eq!(tree.nodes[1].text(), "Wi-Fi & more");
        assert_eq!(tree.nodes[1].bounds().unwrap().center(), (540, 150));
        assert_eq!(tree.deepest_at(10, 150, |_| true), Some(1));
        assert_eq!(parse_ui_dump(&tree.to_xml()).unwrap(), tree);
    }

    #[test]
    fn text_without_a_hierarchy_is_an_error() {
        assert!(matches!(
            parse_ui_dump("ERROR: null root node"),
            Err(UiParseError::NoHierarchy)
        ));
        // Found by the fuzzer: the closing tag before the opening one once sliced backwards.
        assert!(matches!(
            parse_ui_dump("</hierarchy> noise <?xml version='1.0'?><hierarchy>"),
            Err(UiParseError::NoHierarchy)
        ));
    }
}
