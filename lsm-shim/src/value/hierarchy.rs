//! The Bloom filter hierarchy (Bloofi: Crainiceanu & Lemire 2015; used for
//! LSM value search by Macyna & Ordonez, §II-C): a B+-tree-like tree whose
//! leaves are the tables' value filters and whose every internal node is the
//! bitwise OR of its children, so a node answers "maybe" for a term whenever
//! any leaf below it does. A search descends only into nodes that answer
//! "maybe" (Algorithm 1).
//!
//! Invariants (checked by [`Hierarchy::check`], tested after every change):
//! - every internal node's filter equals the OR of its children's;
//! - every internal node but the root has `d..=2d` children, the root
//!   `2..=2d`; one leaf alone is the root itself;
//! - all leaves are at the same depth, and every child's parent link is
//!   right.
//!
//! Two ways to follow a change of the leaf set, both
//! measured in `docs/value-search.md`:
//! - **path update** (Bloofi's): an insert appends the leaf to the rightmost
//!   bottom node and ORs it into that node's ancestors (`depth` word-array
//!   ORs), splitting a node that reaches `2d + 1` children into `d` and
//!   `d + 1`; a delete removes the leaf, borrows from or merges with a
//!   sibling a node left with `d - 1` children, and recomputes every node on
//!   the path (an OR cannot be undone: up to `2d` children's ORs per level);
//! - **rebuild**: pack the leaves bottom-up into nodes of `d` children (up
//!   to `2d - 1` where `d` does not divide): about `N · (1 + 1/d + 1/d² +
//!   …) = N · d / (d - 1)` ORs for `N` leaves.
//!
//! Nodes hold their filters behind `Arc`, so cloning a hierarchy for readers
//! copies only the node table; an update replaces the filters it touches.

use std::sync::Arc;

use amq::StandardBloom;

/// A leaf's position in the index's slot table.
pub(crate) type Slot = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Child {
    Leaf(Slot),
    Node(u32),
}

#[derive(Debug, Clone)]
struct Node {
    filter: Arc<StandardBloom>,
    children: Vec<Child>,
    parent: Option<u32>,
}

#[derive(Debug, Clone)]
struct Leaf {
    filter: Arc<StandardBloom>,
    parent: Option<u32>,
}

/// Filters probed by one search.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Probes {
    pub internal: u64,
    pub leaves: u64,
}

/// Whether every bit at `positions` is set in `f`: the probe of a filter
/// whose positions were computed once for the whole search.
#[inline]
pub(crate) fn has_all(f: &StandardBloom, positions: &[u64]) -> bool {
    let words = f.words();
    positions
        .iter()
        .all(|&b| words[(b >> 6) as usize] >> (b & 63) & 1 == 1)
}

/// The OR of `filters` (at least one), all of one shape.
fn or_all<'a>(mut filters: impl Iterator<Item = &'a StandardBloom>) -> StandardBloom {
    let mut acc = filters.next().expect("a node has children").clone();
    for f in filters {
        // One tree has one shape (the index refuses leaves of another).
        acc.union(f).expect("value filters of one tree share their shape");
    }
    acc
}

/// The hierarchy of order `d` over the trusted leaf filters.
#[derive(Debug, Clone)]
pub(crate) struct Hierarchy {
    order: usize,
    nodes: Vec<Option<Node>>,
    free: Vec<u32>,
    leaves: Vec<Option<Leaf>>,
    root: Option<Child>,
    len: usize,
}

impl Hierarchy {
    pub(crate) fn new(order: usize) -> Self {
        Hierarchy {
            order: order.max(2),
            nodes: Vec::new(),
            free: Vec::new(),
            leaves: Vec::new(),
            root: None,
            len: 0,
        }
    }

    /// Leaves held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Internal nodes.
    pub(crate) fn internal_nodes(&self) -> usize {
        self.nodes.len() - self.free.len()
    }

    /// Levels of internal nodes above the leaves.
    pub(crate) fn height(&self) -> usize {
        let mut h = 0;
        let mut c = self.root;
        while let Some(Child::Node(id)) = c {
            h += 1;
            c = self.node(id).children.first().copied();
        }
        h
    }

    fn node(&self, id: u32) -> &Node {
        self.nodes[id as usize].as_ref().expect("live node")
    }

    fn node_mut(&mut self, id: u32) -> &mut Node {
        self.nodes[id as usize].as_mut().expect("live node")
    }

    fn filter(&self, c: Child) -> &StandardBloom {
        match c {
            Child::Leaf(s) => &self.leaves[s as usize].as_ref().expect("live leaf").filter,
            Child::Node(id) => &self.node(id).filter,
        }
    }

    fn set_parent(&mut self, c: Child, parent: Option<u32>) {
        match c {
            Child::Leaf(s) => self.leaves[s as usize].as_mut().expect("live leaf").parent = parent,
            Child::Node(id) => self.node_mut(id).parent = parent,
        }
    }

    fn parent(&self, c: Child) -> Option<u32> {
        match c {
            Child::Leaf(s) => self.leaves[s as usize].as_ref().expect("live leaf").parent,
            Child::Node(id) => self.node(id).parent,
        }
    }

    /// A new node over `children` (their parent links set, its OR computed).
    fn alloc(&mut self, children: Vec<Child>, parent: Option<u32>) -> u32 {
        let filter = Arc::new(or_all(children.iter().map(|&c| self.filter(c))));
        let node = Node {
            filter,
            children,
            parent,
        };
        let id = match self.free.pop() {
            Some(id) => {
                self.nodes[id as usize] = Some(node);
                id
            }
            None => {
                self.nodes.push(Some(node));
                (self.nodes.len() - 1) as u32
            }
        };
        for c in self.node(id).children.clone() {
            self.set_parent(c, Some(id));
        }
        id
    }

    fn release(&mut self, id: u32) {
        self.nodes[id as usize] = None;
        self.free.push(id);
    }

    fn recompute(&mut self, id: u32) {
        let f = or_all(self.node(id).children.iter().map(|&c| self.filter(c)));
        self.node_mut(id).filter = Arc::new(f);
    }

    fn put_leaf(&mut self, slot: Slot, filter: Arc<StandardBloom>) {
        let i = slot as usize;
        if self.leaves.len() <= i {
            self.leaves.resize(i + 1, None);
        }
        debug_assert!(self.leaves[i].is_none(), "slot {slot} already a leaf");
        self.leaves[i] = Some(Leaf { filter, parent: None });
        self.len += 1;
    }

    /// Replaces the whole hierarchy by one packed bottom-up over `leaves`,
    /// in the given order.
    pub(crate) fn rebuild(&mut self, leaves: Vec<(Slot, Arc<StandardBloom>)>) {
        *self = Hierarchy::new(self.order);
        let mut level: Vec<Child> = Vec::with_capacity(leaves.len());
        for (slot, f) in leaves {
            self.put_leaf(slot, f);
            level.push(Child::Leaf(slot));
        }
        let d = self.order;
        while level.len() > 1 {
            // As few children per node as the order allows (the paper's
            // hierarchy: "exactly d child filters" but one): a node holding
            // fewer leaves' values has fewer ones, so it prunes more. It
            // answers "maybe" for an absent term with `(1 - e^(-k f n / m))^k`
            // for `f` children of `n` values each, and a search probes `f`
            // children under each "maybe" (`docs/value-search.md` measures
            // packing by 2d against this: twice the leaves probed).
            // g = max(1, ⌊n / d⌋) groups of ⌊n/g⌋ or ⌈n/g⌉ children: ≥ d, and
            // for n ≥ 2d, n/g < dn/(n - d) ≤ 2d; for n < 2d one group, the
            // root, with 2..2d.
            let n = level.len();
            let g = (n / d).max(1);
            let mut next = Vec::with_capacity(g);
            for i in 0..g {
                let group = level[i * n / g..(i + 1) * n / g].to_vec();
                next.push(Child::Node(self.alloc(group, None)));
            }
            level = next;
        }
        self.root = level.first().copied();
    }

    /// Adds a leaf (Bloofi's insert): appended under the rightmost bottom
    /// node, OR-ed into its ancestors, splitting nodes that overflow.
    pub(crate) fn insert(&mut self, slot: Slot, filter: Arc<StandardBloom>) {
        self.put_leaf(slot, filter);
        let leaf = Child::Leaf(slot);
        let mut p = match self.root {
            None => {
                self.root = Some(leaf);
                return;
            }
            Some(only @ Child::Leaf(_)) => {
                let id = self.alloc(vec![only, leaf], None);
                self.root = Some(Child::Node(id));
                return;
            }
            Some(Child::Node(r)) => r,
        };
        while let Some(&Child::Node(c)) = self.node(p).children.last() {
            p = c;
        }
        self.node_mut(p).children.push(leaf);
        self.set_parent(leaf, Some(p));
        // The OR of a set with one more member: OR the leaf in on the path.
        let leaf_filter = self.leaves[slot as usize]
            .as_ref()
            .expect("just put")
            .filter
            .clone();
        let mut a = Some(p);
        while let Some(id) = a {
            let node = self.node_mut(id);
            Arc::make_mut(&mut node.filter)
                .union(&leaf_filter)
                .expect("value filters of one tree share their shape");
            a = node.parent;
        }
        let mut cur = p;
        while self.node(cur).children.len() > 2 * self.order {
            cur = self.split(cur);
        }
    }

    /// Splits an overflowing node into two siblings; returns the parent.
    fn split(&mut self, id: u32) -> u32 {
        let half = self.node(id).children.len() / 2;
        let right = self.node_mut(id).children.split_off(half);
        let parent = self.node(id).parent;
        let new = self.alloc(right, parent);
        self.recompute(id);
        match parent {
            Some(p) => {
                // The parent's OR is unchanged: same grandchildren.
                let node = self.node_mut(p);
                let at = node
                    .children
                    .iter()
                    .position(|&c| c == Child::Node(id))
                    .expect("child of its parent");
                node.children.insert(at + 1, Child::Node(new));
                p
            }
            None => {
                let root = self.alloc(vec![Child::Node(id), Child::Node(new)], None);
                self.root = Some(Child::Node(root));
                root
            }
        }
    }

    /// Removes a leaf (Bloofi's delete): a node left with `d - 1` children
    /// borrows one from a sibling with more than `d`, or merges into it; the
    /// root with one child is replaced by that child; every node on the
    /// path is recomputed.
    pub(crate) fn remove(&mut self, slot: Slot) {
        let leaf = Child::Leaf(slot);
        let parent = self.parent(leaf);
        self.leaves[slot as usize] = None;
        self.len -= 1;
        let Some(p) = parent else {
            self.root = None;
            return;
        };
        self.node_mut(p).children.retain(|&c| c != leaf);
        let mut cur = p;
        loop {
            let n = self.node(cur).children.len();
            let Some(up) = self.node(cur).parent else {
                // The root: 2..=2d children, or it steps aside for its one.
                if n == 1 {
                    let only = self.node(cur).children[0];
                    self.set_parent(only, None);
                    self.root = Some(only);
                    self.release(cur);
                } else {
                    self.recompute(cur);
                }
                return;
            };
            if n >= self.order {
                self.recompute(cur);
                let mut a = Some(up);
                while let Some(id) = a {
                    self.recompute(id);
                    a = self.node(id).parent;
                }
                return;
            }
            // Underflow: a non-root parent has ≥ d ≥ 2 children and the
            // root ≥ 2, so there is a sibling.
            let siblings = &self.node(up).children;
            let at = siblings
                .iter()
                .position(|&c| c == Child::Node(cur))
                .expect("child of its parent");
            let (sib_at, left) = if at > 0 { (at - 1, true) } else { (at + 1, false) };
            let Child::Node(sib) = siblings[sib_at] else {
                unreachable!("siblings of a node are nodes")
            };
            if self.node(sib).children.len() > self.order {
                let moved = if left {
                    self.node_mut(sib).children.pop()
                } else {
                    Some(self.node_mut(sib).children.remove(0))
                }
                .expect("sibling has children");
                if left {
                    self.node_mut(cur).children.insert(0, moved);
                } else {
                    self.node_mut(cur).children.push(moved);
                }
                self.set_parent(moved, Some(cur));
                self.recompute(sib);
                self.recompute(cur);
            } else {
                // (d - 1) + d = 2d - 1 children: within bounds.
                let moved = std::mem::take(&mut self.node_mut(cur).children);
                for &c in &moved {
                    self.set_parent(c, Some(sib));
                }
                let s = self.node_mut(sib);
                if left {
                    s.children.extend(moved);
                } else {
                    s.children.splice(0..0, moved);
                }
                self.recompute(sib);
                self.node_mut(up).children.retain(|&c| c != Child::Node(cur));
                self.release(cur);
            }
            cur = up;
        }
    }

    /// Algorithm 1: the slots of the leaves that answer "maybe" for the
    /// term whose probe positions are `positions`, descending only into
    /// nodes that answer "maybe".
    pub(crate) fn search(&self, positions: &[u64], out: &mut Vec<Slot>, probes: &mut Probes) {
        let mut stack: Vec<Child> = self.root.into_iter().collect();
        while let Some(c) = stack.pop() {
            let maybe = has_all(self.filter(c), positions);
            match c {
                Child::Leaf(s) => {
                    probes.leaves += 1;
                    if maybe {
                        out.push(s);
                    }
                }
                Child::Node(id) => {
                    probes.internal += 1;
                    if maybe {
                        stack.extend(self.node(id).children.iter().rev());
                    }
                }
            }
        }
    }

    /// Word-array ORs a path update of `adds` inserts and `removes` deletes
    /// costs, against a rebuild of the resulting leaves, per the cost model
    /// in the module docs: whether the path update is cheaper.
    pub(crate) fn path_update_is_cheaper(&self, adds: usize, removes: usize) -> bool {
        let n = (self.len + adds).saturating_sub(removes).max(1) as f64;
        let d = self.order as f64;
        let depth = (n.ln() / d.ln()).ceil().max(1.0);
        let path = adds as f64 * (depth + 1.0) + removes as f64 * depth * 1.5 * d;
        // Nodes packed by d: n + n/d + n/d² + … ORs.
        let rebuild = n * d / (d - 1.0);
        path < rebuild
    }

    /// Checks every invariant of the module docs; `Err` names the first
    /// broken one. For tests.
    #[cfg(test)]
    pub(crate) fn check(&self) -> Result<(), String> {
        let max = 2 * self.order;
        let Some(root) = self.root else {
            return if self.len == 0 {
                Ok(())
            } else {
                Err(format!("no root but {} leaves", self.len))
            };
        };
        if self.parent(root).is_some() {
            return Err("root has a parent".into());
        }
        let mut leaf_depth = None;
        let mut seen_leaves = 0;
        let mut stack = vec![(root, 0usize)];
        while let Some((c, depth)) = stack.pop() {
            let Child::Node(id) = c else {
                seen_leaves += 1;
                if *leaf_depth.get_or_insert(depth) != depth {
                    return Err("leaves at different depths".into());
                }
                continue;
            };
            let node = self.node(id);
            let n = node.children.len();
            let ok = if Some(c) == self.root {
                (2..=max).contains(&n)
            } else {
                (self.order..=max).contains(&n)
            };
            if !ok {
                return Err(format!("node {id} has {n} children, order {}", self.order));
            }
            if *node.filter != or_all(node.children.iter().map(|&ch| self.filter(ch))) {
                return Err(format!("node {id} is not the OR of its children"));
            }
            for &ch in &node.children {
                if self.parent(ch) != Some(id) {
                    return Err(format!("a child of node {id} names another parent"));
                }
                stack.push((ch, depth + 1));
            }
        }
        if seen_leaves != self.len || self.leaves.iter().flatten().count() != self.len {
            return Err(format!("{seen_leaves} leaves reachable, {} held", self.len));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn leaf(i: u64) -> Arc<StandardBloom> {
        let mut f = StandardBloom::with_shape(256, 3).unwrap();
        for j in 0..3 {
            amq::Insert::insert(&mut f, format!("t{i}-{j}").as_bytes()).unwrap();
        }
        Arc::new(f)
    }

    fn positions(term: &str) -> Vec<u64> {
        leaf(0).probe_positions(amq::hash_key(term.as_bytes())).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 200, rng_seed: proptest::test_runner::RngSeed::Fixed(12), ..ProptestConfig::default() })]
        /// Any sequence of inserts and removes, by path update or rebuild,
        /// keeps every invariant, and a search finds every leaf holding the
        /// term (no false negatives) and only leaves whose own filter says
        /// "maybe".
        #[test]
        fn invariants_hold_after_any_sequence(
            order in 2usize..6,
            ops in proptest::collection::vec((any::<bool>(), 0u32..40, any::<bool>()), 1..120),
        ) {
            let mut h = Hierarchy::new(order);
            let mut live: std::collections::BTreeSet<u32> = Default::default();
            for (add, s, rebuild) in ops {
                if add && !live.contains(&s) {
                    live.insert(s);
                    h.insert(s, leaf(u64::from(s)));
                } else if !add && live.contains(&s) {
                    live.remove(&s);
                    h.remove(s);
                }
                if rebuild {
                    h.rebuild(live.iter().map(|&s| (s, leaf(u64::from(s)))).collect());
                }
                if let Err(e) = h.check() {
                    return Err(TestCaseError::fail(e));
                }
                prop_assert_eq!(h.len(), live.len());
            }
            for &s in &live {
                let pos = positions(&format!("t{s}-1"));
                let mut out = Vec::new();
                h.search(&pos, &mut out, &mut Probes::default());
                prop_assert!(out.contains(&s));
                for o in out {
                    prop_assert!(has_all(&leaf(u64::from(o)), &pos));
                }
            }
        }
    }

    #[test]
    fn rebuild_packs_within_bounds_and_prunes() {
        for n in 0..200u32 {
            let mut h = Hierarchy::new(3);
            h.rebuild((0..n).map(|s| (s, leaf(u64::from(s)))).collect());
            h.check().unwrap();
            assert_eq!(h.len(), n as usize);
        }
        let mut h = Hierarchy::new(3);
        h.rebuild((0..100).map(|s| (s, leaf(u64::from(s)))).collect());
        let mut out = Vec::new();
        let mut probes = Probes::default();
        h.search(&positions("t42-0"), &mut out, &mut probes);
        assert!(out.contains(&42));
        // 100 small filters of 3 terms in 256 bits: most subtrees are pruned.
        assert!(probes.leaves < 50, "{probes:?}");
    }
}
