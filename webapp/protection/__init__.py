"""Protection of the public arena: who a session is, how much it may do, and the researchers' controls.

- `identity`: the server-issued session identity (never the client's own session name)
- `vote_limits`, `label_limits`: per-user and per-address limits and flags on votes and labels (counted
  in the store)
- `study_limits`: new study workers per session and per address
- `login_limits`, `admin_auth`: researcher logins and their lockout
- `upload_limits`: how large an upload each app accepts
- `moderation`: hide, unhide or delete dialogues, with a log
"""
