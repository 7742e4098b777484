//! What an alignment says: whether the texts contradict, whether one
//! covers the other, and the verdict and explanation shown to users.

use super::*;

impl Comparison {
    /// The reading of two texts of which one is longer than the rules
    /// read ([`MAX_COMPARED_WORDS`]), without aligning them: the same
    /// words are the same text, which covers itself; any other pair is
    /// kept apart, unread. `None` where both are short enough to read.
    pub(super) fn unread(a: &[Token], b: &[Token]) -> Option<Self> {
        if !too_long(a, b) {
            return None;
        }
        let same = a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.word == y.word);
        let content = a.iter().filter(|t| t.is_content()).count();
        Some(if same {
            Comparison {
                aligned: content,
                content: [content; 2],
                ..Comparison::default()
            }
        } else {
            Comparison {
                too_long: Some([a.len(), b.len()]),
                ..Comparison::default()
            }
        })
    }

    /// The rules that said something of the texts, in the order they first
    /// did: the hunk rules (`align/rules.rs`) and the rules over the whole
    /// texts that found a conflict.
    pub fn rules(&self) -> &[&'static str] {
        &self.rules
    }

    /// Records that `rule` said something.
    pub(super) fn heard(&mut self, rule: &'static str) {
        if !self.rules.contains(&rule) {
            self.rules.push(rule);
        }
    }

    /// Adds a conflict, and the rule that found it.
    pub(super) fn add_conflict(&mut self, conflict: Conflict) {
        self.heard(conflict.rule);
        self.conflicts.push(conflict);
    }

    /// Settles this reading with `reverse`, the same texts read the other
    /// way round: a contradiction or a merge stands only where both
    /// readings find it. Where both may merge, each side keeps the larger
    /// count of details and moved words, so either order chooses the same
    /// text to keep.
    pub(super) fn settle_with(&mut self, reverse: &Comparison) {
        let contradicts = self.contradicts();
        if contradicts != reverse.contradicts()
            || (!contradicts && self.never_merged() != reverse.never_merged())
        {
            self.other_order_differs = true;
            self.heard("both_orders");
        } else if !self.never_merged() {
            self.extra = [
                self.extra[0].max(reverse.extra[1]),
                self.extra[1].max(reverse.extra[0]),
            ];
            self.moved = self.moved.max(reverse.moved);
        }
    }

    /// The texts state the same proposition and disagree about it: at least
    /// one conflict, no other fact swapped, at most one antonym or value
    /// slot, and little else different. A side that negates may add
    /// nothing (a negated specific statement does not deny the general
    /// one: "not riding a horse by a creek" / "riding a horse"); the other
    /// side may be more specific.
    pub fn contradicts(&self) -> bool {
        // The shared proposition: two aligned content words, or one when
        // nothing else differs ("The car is red" / "… blue"; "I have a
        // `car`" / "I do not have a `vehicle`" names one thing) or the
        // opposed predicate differs only by a complement.
        let aligned = self.aligned + self.generalisations + self.synonymous;
        let shared = aligned >= 2
            || (aligned == 1
                && (self.extra == self.specifics || self.opposed_predicate == Some(self.extra)));
        // A framed text does not state the shared words: "Sam `hopes` to
        // live in Paris" is compatible with "Sam does not live in Paris".
        // Nor does a side that speaks of another possession ("the user's
        // `wife's` birthday", "the user's `work` laptop").
        if self.conflicts.is_empty()
            || self.other_order_differs
            || !self.substitutions.is_empty()
            || !shared
            || self.reframes.contains(&true)
            || self.another_possession
        {
            return false;
        }
        if let [Some(x), Some(y)] = self.frames {
            // One text in the past, the other in the present, speak of
            // different times ("Emma was unhappy with her job" / "Emma is
            // happy …"); two past events with another value are two
            // occurrences ("went to the gym on Monday" / "… on Wednesday").
            let occurrences =
                x.event && y.event && self.conflicts.iter().all(|c| c.kind == ConflictKind::Value);
            if x.tense.apart(y.tense) || occurrences {
                return false;
            }
        }
        let slots = self
            .conflicts
            .iter()
            .filter(|c| c.negated_side.is_none() && c.kind != ConflictKind::Antonym)
            .count()
            + usize::from(
                self.conflicts
                    .iter()
                    .any(|c| c.kind == ConflictKind::Antonym),
            );
        let negated: Vec<usize> = self
            .conflicts
            .iter()
            .filter_map(|c| c.negated_side)
            .collect();
        // A denial beside another relation may deny only that relation:
        // "does not live `in` London" / "lives `near` London".
        if !negated.is_empty() && !self.relations.is_empty() {
            return false;
        }
        // Values of a narrowed referent and of its plainer name may be two
        // things' values; a denial or an opposite still speaks of the one
        // named ("`no` dog" denies "a black dog"; "the `young` boy is
        // jumping `into` the pool" / "the boy … `out of` …").
        if negated.is_empty()
            && self.narrows.contains(&true)
            && self.conflicts.iter().all(|c| c.kind == ConflictKind::Value)
        {
            return false;
        }
        // A denial beside an opposed value denies another value: "Liam is
        // not learning German" / "… learning Italian" agree, as "The car is
        // not red" / "The car is blue" do.
        if slots > 1 || (slots == 1 && !negated.is_empty()) {
            return false;
        }
        (0..2).all(|side| {
            let allowed = if negated.contains(&side) {
                // A denial may date itself: "Kevin doesn't have a car
                // anymore" denies "Kevin has a car" from now on.
                self.dating[side]
            } else if !negated.is_empty() {
                // A general denial denies every specific case ("There is
                // no puppy rolling" / "A puppy is repeatedly rolling from
                // side to side on its back"), not another thing the
                // denied noun only modifies ("did not go to college" /
                // "went to a college party").
                if self.another_thing[side] {
                    0
                } else {
                    usize::MAX
                }
            } else if self.extra[1 - side] == 0 {
                // The other side states the proposition with nothing of its
                // own; this one may say more about it ("riding a big wave
                // across dark green water" / "riding a small wave").
                usize::MAX
            } else {
                (self.content[side] / 3).max(1)
            };
            self.extra[side] <= allowed
        })
    }

    /// The texts say different things, so no merge may join them, fused
    /// or not: a conflict, a substitution, a reframing, a denial, a more
    /// general word, another relation, [another tense](Self::retensed),
    /// or a shared noun that on one side is part of the name of another
    /// thing ("a dog" / "a dog `collar`", "the president" / "the vice
    /// president").
    pub fn never_merged(&self) -> bool {
        self.too_long.is_some()
            || !self.conflicts.is_empty()
            || self.other_order_differs
            || self.another_thing.contains(&true)
            || self.reframes.contains(&true)
            || !self.substitutions.is_empty()
            || self.negation_differs
            || !self.relations.is_empty()
            || self.generalisations > 0
            || self.retensed
    }

    /// Neither text covers the other: what is [never
    /// merged](Self::never_merged), words in another order, or details on
    /// both sides. Some of these merge with a fused text
    /// (`engram::detect::Prepared::mergeable`).
    pub fn keeps_apart(&self) -> bool {
        self.never_merged() || self.moved > 0 || (self.extra[0] > 0 && self.extra[1] > 0)
    }

    /// Whether side `side`'s text carries every content word of the other.
    pub fn covers(&self, side: usize) -> bool {
        !self.never_merged() && self.moved == 0 && self.extra[1 - side] == 0
    }

    /// What the alignment means for the detectors, in one line;
    /// `keeps_order` says whether the shared words keep their order up to
    /// a moved block (`engram::detect::fuse::same_order`), which a merge needs,
    /// and `fusable` whether a fused text may join texts that each have
    /// details of their own (`engram::detect::fuse::fusable`).
    pub fn verdict(&self, keeps_order: bool, fusable: bool) -> String {
        if let Some([x, y]) = self.too_long {
            return format!(
                "not a contradiction; never merged (too long to compare word by word: {x} and \
                 {y} words, where the rules read at most {MAX_COMPARED_WORDS})"
            );
        }
        let mut parts = vec![format!("{} content words aligned", self.aligned)];
        if !keeps_order {
            parts.push("the shared words trade roles".to_owned());
        }
        if !self.conflicts.is_empty() {
            parts.push(format!("conflicts: {}", self.explanation()));
        }
        for (x, y) in &self.substitutions {
            parts.push(format!("different facts: `{x}` ↔ `{y}`"));
        }
        for (x, y) in &self.relations {
            parts.push(format!("different relations: `{x}` ↔ `{y}`"));
        }
        if !self.generalised.is_empty() {
            let pairs: Vec<String> = self
                .generalised
                .iter()
                .map(|(x, y)| format!("`{x}` ↔ `{y}`"))
                .collect();
            parts.push(format!("more general words: {}", pairs.join(", ")));
        }
        for (side, which) in [(0, "first"), (1, "second")] {
            if self.reframes[side] {
                parts.push(format!("the {which} reframes the shared words"));
            }
            if self.another_thing[side] {
                parts.push(format!(
                    "the {which} speaks of another thing than a shared word"
                ));
            }
        }
        if self.negation_differs {
            parts.push("a negation that bears on no shared word".to_owned());
        }
        if self.other_order_differs {
            parts.push(
                "read with the second text first, the shared words pair otherwise".to_owned(),
            );
        }
        if self.retensed
            && let [Some(x), Some(y)] = self.frames
        {
            let (past, other) = if x.tense == Tense::Past {
                (x, y)
            } else {
                (y, x)
            };
            parts.push(format!(
                "one in the {}, the other in the {}",
                past.tense.name(),
                other.tense.name()
            ));
        }
        if self.extra != [0, 0] {
            parts.push(format!(
                "details only in the first: {}, only in the second: {}",
                self.extra[0], self.extra[1]
            ));
        }
        if !self.rules.is_empty() {
            parts.push(format!("rules: {}", self.rules.join(", ")));
        }
        // As `Prepared::mergeable` decides: a block moved in one order is no
        // detail ("On Fridays the team deploys …" / "The team deploys … on
        // Fridays"), so only details decide which text covers the other.
        let decision = if self.contradicts() {
            "contradiction"
        } else if self.never_merged() || !keeps_order {
            "not a contradiction; never merged"
        } else if self.extra[0] > 0 && self.extra[1] > 0 && !fusable {
            "neither covers the other; never merged (a detail of each beside one shared word, a denial, or a detail that is no name, number or noun)"
        } else if self.extra[0] > 0 && self.extra[1] > 0 {
            "neither covers the other; merged only with a fused text (`consolidation.fuse_merges`)"
        } else if self.extra == [0, 0] {
            "mergeable either way"
        } else if self.extra[1] == 0 {
            "mergeable into the first"
        } else {
            "mergeable into the second"
        };
        format!("{decision} ({})", parts.join("; "))
    }

    /// The conflicts as one readable sentence.
    pub fn explanation(&self) -> String {
        self.conflicts
            .iter()
            .map(|c| c.detail.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    }
}
