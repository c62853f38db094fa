"""Participant sessions: what one step of a Chat, Battle or Study conversation does, without the page.

- `turn_step`: the steps every session shares, in one order: a message checked, one stored turn, the
  verdict (label limits, label, store), a full store refused in words
- `chat`: the Chat's rules (start, one turn, the verdict, what a reload resumes)
- `turn_guard`: one step at a time per browser session
- `idempotent_sends`: a repeated send with the same client message id stores nothing
- `battle`: a battle's rules (start, turn, rating, vote, reveal); `battle_state`: a battle under way and
  each participant's current one; `pairing` chooses its two systems
- `study`: a study's rules (link, consent, tasks, attention check, completion)
- `participants`: one pseudonymous participant per browser, their dialogues, what a reload resumes
- `aspect_ratings`: the rating form's answers stored on a dialogue or one reply
- `refusal`: the `Refusal` a rule raises, in words for the participant (the page shows it)
"""
