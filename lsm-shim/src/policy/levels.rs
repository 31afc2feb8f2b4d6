//! [`PerLevel`]: a choice per level, with the first and bottommost levels
//! nameable apart, shared by the key filter and range filter policies.

/// One entry per level from level 0 (the last applies to every deeper
/// level), and optional entries for level 0 and for the bottommost level
/// that take precedence over the list.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PerLevel<T> {
    pub levels: Vec<T>,
    /// Level 0's entry (every flush's table), if named apart.
    pub first: Option<T>,
    /// The entry of tables written to the bottommost level, if named.
    pub bottommost: Option<T>,
}

impl<T: Copy> PerLevel<T> {
    /// `levels`, which must not be empty, with no named levels.
    pub(crate) fn new(levels: Vec<T>) -> Self {
        debug_assert!(!levels.is_empty());
        PerLevel {
            levels,
            first: None,
            bottommost: None,
        }
    }

    /// The entry of a table written to `level`; `bottommost` says whether no
    /// deeper level holds data (ignored for level 0, never bottommost).
    pub(crate) fn for_level(&self, level: usize, bottommost: bool) -> T {
        self.named(level, bottommost)
            .unwrap_or(self.levels[level.min(self.levels.len() - 1)])
    }

    /// The entry named for `level` as the first or the bottommost level, if
    /// one is.
    pub(crate) fn named(&self, level: usize, bottommost: bool) -> Option<T> {
        if level == 0 {
            self.first
        } else if bottommost {
            self.bottommost
        } else {
            None
        }
    }

    /// Every entry: the list's, then the named ones.
    pub(crate) fn all(&self) -> impl Iterator<Item = &T> {
        self.levels.iter().chain(&self.first).chain(&self.bottommost)
    }

    /// `"first A / B / C / bottommost D"`, each entry named by `one`.
    pub(crate) fn describe(&self, one: impl Fn(&T) -> String) -> String {
        self.describe_with(self.levels.iter().map(&one).collect::<Vec<_>>().join(" / "), one)
    }

    /// `body` (what the list says) with the named levels around it.
    pub(crate) fn describe_with(&self, body: String, one: impl Fn(&T) -> String) -> String {
        let mut s = match &self.first {
            Some(f) => format!("first {} / {body}", one(f)),
            None => body,
        };
        if let Some(b) = &self.bottommost {
            s.push_str(&format!(" / bottommost {}", one(b)));
        }
        s
    }
}
