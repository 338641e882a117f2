//! Word spellings that bash turns into other words before it runs a command: brace
//! expansion (`{r,}m` → `rm m`) and `$IFS` splitting (`rm${IFS}-rf`), issue 18 item 2
//! (field log BL-03). The deny view adds the re-spelled argv next to the loose one, so
//! a rule sees the command bash would run; both readings only ever add commands.

/// At most this many words come out of the brace expansion of one argv; past it the
/// expansion stops (the loose reading is still in the view).
const MAX_EXPANDED_WORDS: usize = 64;

/// At most this many partial expansions are kept in flight for one word.
const MAX_EXPANSION_STEPS: usize = 256;

/// `argv` re-spelled the way bash would split and expand it, when that differs from
/// `argv`: `$IFS`/`${IFS}` split words, and `{a,b}` alternatives expand into several
/// words (at most [`MAX_EXPANDED_WORDS`]). `None` when nothing changes or the result
/// would be empty.
pub(super) fn respelled(argv: &[String]) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for word in argv {
        for piece in split_ifs(word) {
            out.extend(brace_expand(&piece));
        }
        if out.len() >= MAX_EXPANDED_WORDS {
            // The command and its first arguments are what rules match.
            out.truncate(MAX_EXPANDED_WORDS);
            break;
        }
    }
    (out.first().is_some_and(|program| !program.is_empty()) && out != argv).then_some(out)
}

/// Splits at every `$IFS` / `${IFS}` (bash splits an unquoted expansion of IFS into
/// nothing but field separators with the default value); empty pieces are dropped.
fn split_ifs(word: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut rest = word;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("${IFS}") {
            pieces.push(std::mem::take(&mut current));
            rest = after;
            continue;
        }
        if let Some(after) = rest.strip_prefix("$IFS")
            && !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        {
            pieces.push(std::mem::take(&mut current));
            rest = after;
            continue;
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            current.push(c);
        }
        rest = chars.as_str();
    }
    pieces.push(current);
    pieces.retain(|piece| !piece.is_empty());
    pieces
}

/// The words bash's brace expansion makes of `word` (`{a,b}c` → `ac bc`, nested groups
/// too; `${x}` and groups without a top-level comma are left alone). Bounded by
/// [`MAX_EXPANSION_STEPS`] and [`MAX_EXPANDED_WORDS`]; iterative, so a deeply nested word
/// cannot exhaust the stack.
fn brace_expand(word: &str) -> Vec<String> {
    let mut done = Vec::new();
    let mut pending = vec![word.to_owned()];
    let mut steps = 0;
    while let Some(current) = pending.pop() {
        steps += 1;
        if steps > MAX_EXPANSION_STEPS || done.len() >= MAX_EXPANDED_WORDS {
            done.push(current);
            continue;
        }
        match first_group(&current) {
            Some((open, close, alternatives)) => {
                let prefix = &current[..open];
                let suffix = &current[close + 1..];
                // Pushed in reverse so that the words come out in bash's order.
                for alternative in alternatives.into_iter().rev() {
                    pending.push(format!("{prefix}{alternative}{suffix}"));
                }
            }
            None => done.push(current),
        }
    }
    done.retain(|expanded| !expanded.is_empty());
    done
}

/// A `{...}` group bash expands: one with a top-level comma, or a sequence expression
/// (`{a..c}`, `{1..9..2}`, `{01..3}`; finding F2: `t{o..o}uch` is `touch`). The first to
/// close comes first (an inner group of a nest; the words are the same): byte offsets of
/// `{` and of the matching `}`, and the group's alternatives (a sequence is cut at
/// [`MAX_EXPANDED_WORDS`] items). A `{` right after `$` opens a parameter expansion. One
/// pass over the word.
fn first_group(word: &str) -> Option<(usize, usize, Vec<String>)> {
    let bytes = word.as_bytes();
    // Open groups: where each starts and its commas so far; `None` for `${`.
    let mut open: Vec<Option<(usize, Vec<usize>)>> = Vec::new();
    for (offset, &byte) in bytes.iter().enumerate() {
        match byte {
            b'{' => {
                let parameter = offset > 0 && bytes.get(offset - 1) == Some(&b'$');
                open.push((!parameter).then(|| (offset, Vec::new())));
            }
            b',' => {
                if let Some(Some((_, commas))) = open.last_mut() {
                    commas.push(offset);
                }
            }
            b'}' => {
                let Some(Some((start, commas))) = open.pop() else {
                    continue;
                };
                if commas.is_empty() {
                    if let Some(items) = word.get(start + 1..offset).and_then(sequence) {
                        return Some((start, offset, items));
                    }
                    continue;
                }
                let mut alternatives = Vec::new();
                let mut from = start + 1;
                for comma in commas.into_iter().chain([offset]) {
                    alternatives.push(word.get(from..comma).unwrap_or_default().to_owned());
                    from = comma + 1;
                }
                return Some((start, offset, alternatives));
            }
            _ => {}
        }
    }
    None
}

/// The items of a brace sequence expression `X..Y` or `X..Y..STEP` (integers, possibly
/// zero-padded, or single ASCII letters), at most [`MAX_EXPANDED_WORDS`]; `None` when
/// `inside` is not one.
fn sequence(inside: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = inside.split("..").collect();
    let (first, last, step) = match parts.as_slice() {
        [first, last] => (*first, *last, 1),
        [first, last, step] => (
            *first,
            *last,
            step.parse::<i64>().ok()?.unsigned_abs().max(1),
        ),
        _ => return None,
    };
    let step = usize::try_from(step).unwrap_or(usize::MAX);
    let letter = |text: &str| {
        let mut chars = text.chars();
        chars
            .next()
            .filter(|c| c.is_ascii_alphabetic() && chars.next().is_none())
    };
    if let (Some(from), Some(to)) = (letter(first), letter(last)) {
        let (low, high) = (u32::from(from.min(to)), u32::from(from.max(to)));
        let mut items: Vec<String> = (low..=high)
            .step_by(step)
            .take(MAX_EXPANDED_WORDS)
            .filter_map(char::from_u32)
            .map(String::from)
            .collect();
        if from > to {
            items.reverse();
        }
        return Some(items);
    }
    let number = |text: &str| {
        let digits = text.strip_prefix('-').unwrap_or(text);
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| text.parse::<i64>().ok())
            .flatten()
    };
    let (from, to) = (number(first)?, number(last)?);
    let padded = |text: &str| text.trim_start_matches('-').starts_with('0') && text.len() > 1;
    let width = if padded(first) || padded(last) {
        first.len().max(last.len())
    } else {
        0
    };
    let step = i64::try_from(step).unwrap_or(i64::MAX);
    let mut items = Vec::new();
    let mut current = from;
    while items.len() < MAX_EXPANDED_WORDS {
        items.push(format!("{current:0width$}"));
        if current == to {
            break;
        }
        let next = if from <= to {
            current.saturating_add(step)
        } else {
            current.saturating_sub(step)
        };
        if (from <= to && next > to) || (from > to && next < to) {
            break;
        }
        current = next;
    }
    Some(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|word| (*word).to_owned()).collect()
    }

    #[test]
    fn brace_alternatives_become_words() {
        assert_eq!(brace_expand("{r,}m"), words(&["rm", "m"]));
        assert_eq!(brace_expand("{rm,-rf,x}"), words(&["rm", "-rf", "x"]));
        assert_eq!(
            brace_expand("a{b,{c,d}}e"),
            words(&["abe", "ace", "abe", "ade"])
        );
        assert_eq!(brace_expand("${HOME}"), words(&["${HOME}"]));
        assert_eq!(brace_expand("{x}"), words(&["{x}"]));
        assert_eq!(brace_expand("t{o..o}uch"), words(&["touch"]));
        assert_eq!(brace_expand("-{e..e}xec"), words(&["-exec"]));
        assert_eq!(brace_expand("{a..c}"), words(&["a", "b", "c"]));
        assert_eq!(brace_expand("{c..a}"), words(&["c", "b", "a"]));
        assert_eq!(brace_expand("{1..3}"), words(&["1", "2", "3"]));
        assert_eq!(brace_expand("{3..1}"), words(&["3", "2", "1"]));
        assert_eq!(brace_expand("{1..7..3}"), words(&["1", "4", "7"]));
        assert_eq!(brace_expand("{01..03}"), words(&["01", "02", "03"]));
        assert_eq!(brace_expand("{-1..1}"), words(&["-1", "0", "1"]));
        assert_eq!(brace_expand("{a..3}"), words(&["{a..3}"]));
        assert_eq!(brace_expand("{1..}"), words(&["{1..}"]));
        assert!(brace_expand("{1..100000}").len() <= MAX_EXPANDED_WORDS);
        assert_eq!(brace_expand("{{{{"), words(&["{{{{"]));
    }

    #[test]
    fn expansion_is_bounded() {
        let word = "{a,b}".repeat(40);
        assert!(brace_expand(&word).len() <= MAX_EXPANDED_WORDS + MAX_EXPANSION_STEPS);
        let nested = format!("{}x{}", "{a,".repeat(5000), "}".repeat(5000));
        assert!(!brace_expand(&nested).is_empty());
    }

    #[test]
    fn ifs_splits_words() {
        assert_eq!(split_ifs("rm${IFS}-rf${IFS}x"), words(&["rm", "-rf", "x"]));
        assert_eq!(split_ifs("rm$IFS-rf"), words(&["rm", "-rf"]));
        assert_eq!(split_ifs("$IFSX"), words(&["$IFSX"]));
        assert_eq!(
            respelled(&words(&["rm${IFS}-rf${IFS}x"])),
            Some(words(&["rm", "-rf", "x"]))
        );
        assert_eq!(respelled(&words(&["ls", "-l"])), None);
    }
}
