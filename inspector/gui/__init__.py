"""Qt front end over inspector.core."""
