//! Rules for runs with a user in the loop (tau-bench's simulated customer and the like), where
//! the agent proposes a change, the user consents, and only a successful state-changing call is
//! progress: a consent the agent never acted on, a user that ended the episode in the very turn
//! it consented, and a hand-over to a person the user asked for.

use super::actions::Action;
use crate::model::{Role, Step, Trajectory};
use crate::rules::profile::Profile;

/// The last user message that consents to a change the agent had just proposed, with the
/// agent's proposal before it.
#[must_use]
pub fn last_consent<'t>(t: &'t Trajectory, p: &Profile) -> Option<(&'t Step, &'t Step)> {
    let users: Vec<&Step> = t.steps.iter().filter(|s| s.role == Role::User).collect();
    let first_user = users.first().map(|s| s.index)?;
    users.iter().rev().find_map(|u| {
        if u.index == first_user || !p.consent.is_match(&u.text) {
            return None;
        }
        let proposal = super::mechanics::reply_before(t, u.index as usize)?;
        let text = proposal.text.trim_end();
        (proposal.tool_calls.is_empty() && p.asks.is_match(text) && (!p.asks_for_details.is_match(text) || p.proposes.is_match(text)))
            .then_some((*u, proposal))
    })
}

/// Whether it issued a change after `step` (a call the environment refused still issued it).
#[must_use]
pub fn changed_after(acts: &[Action<'_>], step: u32) -> bool {
    acts.iter().any(|a| a.at.step > step && a.mutates())
}

/// The user ended the episode in the turn it consented, so the agent never had a turn to act.
#[must_use]
pub fn ended_on_consent<'t>(t: &'t Trajectory, acts: &[Action<'_>], p: &Profile) -> Option<&'t Step> {
    if p.user_ends.list.is_empty() {
        return None;
    }
    let (u, proposal) = last_consent(t, p)?;
    let last_user = t.steps.iter().rev().find(|s| s.role == Role::User)?;
    // Consent to be handed to a person ends the episode as the user wanted: no change was left
    // for the agent to make.
    (u.index == last_user.index
        && p.user_ends.is_match(&u.text)
        && !changed_after(acts, u.index)
        && !consents_to_a_hand_over(&u.text, &proposal.text, p))
    .then_some(u)
}

/// The sentences of a message, each with its closing mark.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    text.split_inclusive(['.', '?', '!', '\n']).filter(|s| !s.trim().is_empty())
}

/// What the user said yes to was being handed to a person: the sentences that consent name a
/// person ("Yes, transfer me now!"); or, where they do not say what they agree to ("Yes."), every
/// question or offer of the proposal was the hand-over ("Would you like me to transfer you to a
/// human agent?"). A proposal that also asks to go ahead with a change ("If you want me to
/// proceed, please reply with ... For the other booking, a human agent must help"), answered by
/// a yes to the change, proposed that change.
#[must_use]
pub fn consents_to_a_hand_over(consent: &str, proposal: &str, p: &Profile) -> bool {
    let saying: Vec<&str> = sentences(consent).filter(|s| p.consent.is_match(s.trim())).collect();
    if !saying.is_empty() && saying.iter().all(|s| p.asks_for_human.is_match(s)) {
        return true;
    }
    if saying.iter().any(|s| p.asks_for_human.is_match(s)) {
        return false;
    }
    let asking: Vec<&str> = sentences(proposal).filter(|s| p.asks.is_match(s.trim_end()) || p.proposes.is_match(s)).collect();
    if asking.is_empty() {
        return p.asks_for_human.is_match(proposal);
    }
    asking.iter().all(|s| p.asks_for_human.is_match(s))
}

/// The user asked to be handed to a person before the agent's hand-over at `step`.
#[must_use]
pub fn user_asked_for_human(t: &Trajectory, step: u32, p: &Profile) -> bool {
    t.steps[..step as usize].iter().rev().find(|s| s.role == Role::User).is_some_and(|u| p.asks_for_human.is_match(&u.text))
}

/// The agent's next reply after the user's message at `step` tells the user it cannot make the
/// change (a policy or an earlier change stands in the way): blocked, not a plan it kept to itself.
#[must_use]
pub fn declined_after(t: &Trajectory, step: u32, p: &Profile) -> bool {
    t.steps[step as usize + 1..]
        .iter()
        .find(|s| s.role == Role::Assistant && !s.text.trim().is_empty())
        .is_some_and(|s| s.tool_calls.is_empty() && declines(&s.text, p))
}

/// A reply that tells the user the agent cannot do what was asked, and does not ask to go ahead
/// with something else ("I cannot expedite the refund. Would you like me to proceed with the
/// return?" still proposes a change).
#[must_use]
pub fn declines(text: &str, p: &Profile) -> bool {
    p.declines.is_match(text) && !p.asks.is_match(text.trim_end())
}
