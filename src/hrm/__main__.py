"""`python -m hrm` runs the command line."""

from hrm.cli.__main__ import main

main()
