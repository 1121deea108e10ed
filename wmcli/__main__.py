"""`python -m wmcli ...` is `wm ...`: what `accelerate launch -m wmcli train ...` runs on each process."""

from . import run

run()
