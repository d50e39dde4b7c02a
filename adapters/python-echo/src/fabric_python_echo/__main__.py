"""`python -m fabric_python_echo`: the command a `python`-kind descriptor runs."""

from fabric_python_echo.adapter import main

main()
