//! The loaded policy and its evaluation (reference `execpolicy.md` §5, spec 02
//! §Evaluation).

use std::collections::HashMap;

use serde::Serialize;

use crate::canonical::canonical_key;
use crate::decision::Decision;
use crate::host::ResolutionContext;
use crate::network::NetworkRule;
use crate::pattern::{PatternToken, PrefixPattern};
use crate::rule::{AbsolutePathBuf, PrefixRule, RuleMatch};

/// How a command is matched.
#[derive(Debug, Clone, Default)]
pub struct MatchOptions {
    /// Run the host-resolution stage (basename fallback) when the exact stage finds
    /// nothing (`--resolve-host-executables`).
    pub resolve_host_executables: bool,
    /// Where relative and `~` program tokens resolve from; `None` = the process's
    /// cwd and `$HOME`, read only when resolution actually runs.
    pub resolution: Option<ResolutionContext>,
}

impl MatchOptions {
    /// Options with host resolution on, against the process cwd and `$HOME`.
    pub fn resolving() -> Self {
        Self {
            resolve_host_executables: true,
            resolution: None,
        }
    }
}

/// The result of evaluating one or more commands.
///
/// JSON: `{"matchedRules":[..],"decision":".."}`; `decision` is absent when nothing
/// matched (reference §2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evaluation {
    /// Every match, in evaluation order (not sorted by severity).
    pub matched_rules: Vec<RuleMatch>,
    /// The strictest decision among the matches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
}

impl Evaluation {
    fn from_matches(matched_rules: Vec<RuleMatch>) -> Self {
        let decision = matched_rules.iter().map(RuleMatch::decision).max();
        Self {
            matched_rules,
            decision,
        }
    }

    /// True when at least one match came from an explicit rule.
    pub fn has_policy_match(&self) -> bool {
        self.matched_rules.iter().any(RuleMatch::is_policy_match)
    }
}

/// Rules sharing one literal first token, with a second-token index so a check
/// against a large group touches only plausible rules.
#[derive(Debug, Clone, Default)]
struct Group {
    /// Every rule of the group, as indices into `Policy::rules`, in load order.
    all: Vec<usize>,
    /// Exact (non-canonical) rules with at least two tokens, by each accepted second token.
    by_second: HashMap<String, Vec<usize>>,
    /// Rules the index cannot select: single-token or canonical ones.
    unindexed: Vec<usize>,
    /// Whether any rule of the group uses canonical matching.
    has_canonical: bool,
}

impl Group {
    fn push(&mut self, index: usize, rule: &PrefixRule) {
        self.all.push(index);
        self.has_canonical |= rule.pattern.canonical_matching;
        match rule.pattern.rest.first() {
            Some(second) if !rule.pattern.canonical_matching => {
                for alt in second.alternatives() {
                    let slot = self.by_second.entry(alt.clone()).or_default();
                    if slot.last() != Some(&index) {
                        slot.push(index);
                    }
                }
            }
            _ => self.unindexed.push(index),
        }
    }

    /// Candidate rule indices for `second` (the command's second token), in load order.
    fn candidates(&self, second: Option<&String>) -> Vec<usize> {
        let indexed: &[usize] = second
            .and_then(|s| self.by_second.get(s))
            .map_or(&[], Vec::as_slice);
        merge_sorted(&self.unindexed, indexed)
    }
}

fn merge_sorted(a: &[usize], b: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// A loaded exec policy: prefix rules grouped by first token, host-executable
/// bindings and network rules.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    rules: Vec<PrefixRule>,
    groups: HashMap<String, Group>,
    /// Canonical key of a group's first token → groups holding canonical rules, in
    /// the order they first received one (Airlock fixes the order Codex leaves to a hash map).
    canonical_groups: HashMap<String, Vec<String>>,
    host_executables: HashMap<String, Vec<AbsolutePathBuf>>,
    network_rules: Vec<NetworkRule>,
}

impl Policy {
    /// An empty policy (matches nothing).
    pub fn empty() -> Self {
        Self::default()
    }

    /// Appends a rule after every rule already loaded.
    pub fn push_rule(&mut self, rule: PrefixRule) {
        let index = self.rules.len();
        let key = rule.pattern.first.clone();
        if rule.pattern.canonical_matching {
            let groups = self
                .canonical_groups
                .entry(canonical_key(&key))
                .or_default();
            if !groups.contains(&key) {
                groups.push(key.clone());
            }
        }
        self.groups.entry(key).or_default().push(index, &rule);
        self.rules.push(rule);
    }

    /// Binds `name` to `paths`, replacing any earlier binding (reference §4.3).
    pub fn set_host_executable(&mut self, name: String, mut paths: Vec<AbsolutePathBuf>) {
        let mut seen = std::collections::HashSet::new();
        paths.retain(|p| seen.insert(p.clone()));
        self.host_executables.insert(name, paths);
    }

    /// Stores a validated network rule.
    pub fn push_network_rule(&mut self, rule: NetworkRule) {
        self.network_rules.push(rule);
    }

    /// Adds `prefix` as an allow rule to the live policy (used after an amendment was
    /// persisted), unless an allow rule already matches exactly that command.
    /// An empty prefix is ignored.
    pub fn add_allow_prefix_rule(&mut self, prefix: &[String]) {
        let Some((first, rest)) = prefix.split_first() else {
            return;
        };
        let already = self
            .matches_exact(prefix)
            .iter()
            .any(|m| matches!(m, RuleMatch::PrefixRuleMatch { decision: Decision::Allow, matched_prefix, .. } if matched_prefix.len() == prefix.len()));
        if already {
            return;
        }
        let rest = rest.iter().cloned().map(PatternToken::Single).collect();
        self.push_rule(PrefixRule {
            pattern: PrefixPattern::new(first.clone(), rest, false),
            decision: Decision::Allow,
            justification: None,
        });
    }

    /// A policy with this policy's host bindings but only `rules`; used to check a
    /// call's examples against its own rules (reference §4.2).
    pub(crate) fn with_only_rules(&self, rules: &[PrefixRule]) -> Self {
        let mut own = Self {
            host_executables: self.host_executables.clone(),
            ..Self::default()
        };
        for rule in rules {
            own.push_rule(rule.clone());
        }
        own
    }

    /// This policy's host bindings and only its `forbidden` rules: what still refuses a
    /// command while another rules file failed to load (the policy as a whole is then
    /// unavailable and every other command needs approval; spec 02).
    pub fn forbidden_only(&self) -> Self {
        let forbidden: Vec<PrefixRule> = self
            .rules
            .iter()
            .filter(|rule| rule.decision == Decision::Forbidden)
            .cloned()
            .collect();
        self.with_only_rules(&forbidden)
    }

    /// Every prefix rule in load order.
    pub fn rules(&self) -> &[PrefixRule] {
        &self.rules
    }

    /// Every network rule in load order.
    pub fn network_rules(&self) -> &[NetworkRule] {
        &self.network_rules
    }

    /// The host-executable binding for `name`, if any.
    pub fn host_executable(&self, name: &str) -> Option<&[AbsolutePathBuf]> {
        self.host_executables.get(name).map(Vec::as_slice)
    }

    /// Evaluates one command (no fallback: unmatched → no decision).
    pub fn check(&self, argv: &[String], options: &MatchOptions) -> Evaluation {
        Evaluation::from_matches(self.matches_for_command_with_options(argv, options))
    }

    /// Evaluates several segments of one script. A segment no rule matches gets a
    /// `heuristicsRuleMatch` with `fallback(segment)`; the overall decision is the
    /// strictest of all matches (spec 02 §Evaluation).
    pub fn check_multiple<S: AsRef<[String]>>(
        &self,
        segments: &[S],
        options: &MatchOptions,
        fallback: &dyn Fn(&[String]) -> Decision,
    ) -> Evaluation {
        let mut all = Vec::new();
        for segment in segments {
            let segment = segment.as_ref();
            let found = self.matches_for_command_with_options(segment, options);
            if found.is_empty() {
                all.push(RuleMatch::HeuristicsRuleMatch {
                    command: segment.to_vec(),
                    decision: fallback(segment),
                });
            } else {
                all.extend(found);
            }
        }
        Evaluation::from_matches(all)
    }

    /// All rule matches for `argv`: the exact stage, then (only if it found nothing
    /// and resolution is on) the host-resolution stage (reference §5.2–5.3).
    pub fn matches_for_command_with_options(
        &self,
        argv: &[String],
        options: &MatchOptions,
    ) -> Vec<RuleMatch> {
        let exact = self.matches_exact(argv);
        if !exact.is_empty() || !options.resolve_host_executables {
            return exact;
        }
        match &options.resolution {
            Some(ctx) => self.matches_resolved(argv, ctx),
            None => self.matches_resolved(argv, &ResolutionContext::from_process()),
        }
    }

    fn matches_exact(&self, argv: &[String]) -> Vec<RuleMatch> {
        let Some(program) = argv.first() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if let Some(group) = self.groups.get(program) {
            self.collect(group.candidates(argv.get(1)), argv, None, &mut out);
        }
        if !self.canonical_groups.is_empty() {
            for key in self
                .canonical_groups
                .get(&canonical_key(program))
                .into_iter()
                .flatten()
            {
                if key != program {
                    self.collect_canonical(&self.groups[key], argv, None, &mut out);
                }
            }
        }
        out
    }

    fn matches_resolved(&self, argv: &[String], ctx: &ResolutionContext) -> Vec<RuleMatch> {
        let Some(resolved) = argv.first().and_then(|p| ctx.resolve(p)) else {
            return Vec::new();
        };
        let Some(basename) = resolved.as_path().file_name().and_then(|n| n.to_str()) else {
            return Vec::new();
        };
        let gated_out = |name: &str| {
            self.host_executables
                .get(name)
                .is_some_and(|paths| !paths.contains(&resolved))
        };
        if gated_out(basename) {
            return Vec::new();
        }
        let mut substituted = Vec::with_capacity(argv.len());
        substituted.push(basename.to_string());
        substituted.extend_from_slice(&argv[1..]);
        let mut out = Vec::new();
        if let Some(group) = self.groups.get(basename) {
            self.collect(
                group.candidates(argv.get(1)),
                &substituted,
                Some(&resolved),
                &mut out,
            );
        }
        if !self.canonical_groups.is_empty() {
            for key in self
                .canonical_groups
                .get(&canonical_key(basename))
                .into_iter()
                .flatten()
            {
                if key != basename && !gated_out(key) {
                    self.collect_canonical(
                        &self.groups[key],
                        &substituted,
                        Some(&resolved),
                        &mut out,
                    );
                }
            }
        }
        out
    }

    fn collect(
        &self,
        indices: impl IntoIterator<Item = usize>,
        argv: &[String],
        resolved: Option<&AbsolutePathBuf>,
        out: &mut Vec<RuleMatch>,
    ) {
        for index in indices {
            let rule = &self.rules[index];
            if rule.pattern.matches(argv) {
                out.push(RuleMatch::PrefixRuleMatch {
                    matched_prefix: argv[..rule.pattern.len()].to_vec(),
                    decision: rule.decision,
                    resolved_program: resolved.cloned(),
                    justification: rule.justification.clone(),
                });
            }
        }
    }

    fn collect_canonical(
        &self,
        group: &Group,
        argv: &[String],
        resolved: Option<&AbsolutePathBuf>,
        out: &mut Vec<RuleMatch>,
    ) {
        if group.has_canonical {
            let canonical = group
                .all
                .iter()
                .copied()
                .filter(|&i| self.rules[i].pattern.canonical_matching);
            self.collect(canonical, argv, resolved, out);
        }
    }

    /// The prefixes of every `allow` rule, alternatives expanded, in load order and
    /// without duplicates (for the model-facing instructions, spec 08).
    pub fn get_allowed_prefixes(&self) -> Vec<Vec<String>> {
        let mut out: Vec<Vec<String>> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for rule in self.rules.iter().filter(|r| r.decision == Decision::Allow) {
            let mut prefixes = vec![vec![rule.pattern.first.clone()]];
            for position in &rule.pattern.rest {
                prefixes = prefixes
                    .into_iter()
                    .flat_map(|p| {
                        position.alternatives().iter().map(move |alt| {
                            let mut next = p.clone();
                            next.push(alt.clone());
                            next
                        })
                    })
                    .collect();
            }
            for prefix in prefixes {
                if seen.insert(prefix.clone()) {
                    out.push(prefix);
                }
            }
        }
        out
    }
}
