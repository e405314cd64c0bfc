"""Qt item models over the session's document: they format immutable core values, they never compute."""
