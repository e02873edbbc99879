"""The resident process: a warm interpreter that answers `hrm turn` without a cold start.

A one-shot `hrm turn` spends most of its time importing hrm (~250 ms of ~350 ms on two cores),
not taking the turn. After one runs in-process it starts a resident process for this
interpreter and installation (`server`): it imports what a turn imports, listens on a private
Unix socket, and exits after half an hour without a request or when hrm's source changes.
The next `hrm turn` (`client`) connects, hands over its arguments, working directory,
environment, umask and standard streams, and the resident process forks a child that runs the
command exactly as the one-shot would — on the client's terminal, in the client's environment,
with a fresh copy of the warm interpreter — while the client waits for its exit status and
passes Ctrl-C on. Nothing about a stack is kept between turns in the resident process: each
child opens and closes the stack as a one-shot does.

Linux only (it checks its peer's user with ``SO_PEERCRED``); ``HRM_RESIDENT=0`` turns it off,
``hrm resident status`` / ``stop`` look at and stop it. D403.
"""
