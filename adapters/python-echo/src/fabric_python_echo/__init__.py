"""fabric.python-echo: an echo adapter served by upstream's persistent lifecycle host."""

from fabric_python_echo.adapter import ADAPTER_ID, EchoRuntime, main

__all__ = ["ADAPTER_ID", "EchoRuntime", "main"]
