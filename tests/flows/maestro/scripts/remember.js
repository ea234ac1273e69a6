// Keeps what was typed (TYPED, this script's own env) for the flow's later checks.
output.typed = TYPED;
