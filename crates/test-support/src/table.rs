//! The tab-separated files beside the runners: one record a line, `#` starts a comment
//! line, blank lines are ignored. Tabs separate fields because keys contain spaces.

/// One record: its 1-based line number and its fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row<'a> {
    pub line: usize,
    pub fields: Vec<&'a str>,
}

/// The records of `text`, fields trimmed.
pub fn rows(text: &str) -> Vec<Row<'_>> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with('#') && !l.trim().is_empty())
        .map(|(n, l)| Row {
            line: n + 1,
            fields: l.split('\t').map(str::trim).collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_blank_lines_are_not_rows() {
        let rows = rows("# header\n\na b\t 3 \n# more\nc\n");
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].line, 3);
        assert_eq!(rows[0].fields, ["a b", "3"]);
        assert_eq!(rows[1].fields, ["c"]);
    }
}
