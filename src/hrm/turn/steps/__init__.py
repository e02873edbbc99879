"""The steps of a turn, one module each; `hrm.turn.loop.STEPS` holds their order."""
