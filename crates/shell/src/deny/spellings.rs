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
            Some((open, close, commas)) => {
                let prefix = &current[..open];
                let suffix = &current[close + 1..];
                let mut start = open + 1;
                let mut alternatives = Vec::new();
                for comma in commas.into_iter().chain([close]) {
                    alternatives.push(&current[start..comma]);
                    start = comma + 1;
                }
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

/// A `{...}` group with a top-level comma (the first to close, so an inner group of a
/// nest comes first; the words are the same): byte offsets of `{`, of the matching `}`
/// and of the group's commas. A `{` right after `$` opens a parameter expansion. One
/// pass over the word.
fn first_group(word: &str) -> Option<(usize, usize, Vec<usize>)> {
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
                if let Some(Some((start, commas))) = open.pop()
                    && !commas.is_empty()
                {
                    return Some((start, offset, commas));
                }
            }
            _ => {}
        }
    }
    None
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
