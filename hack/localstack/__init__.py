"""The local stack: real servers on loopback for tests, benchmarks and the demo.

Nothing here is a fake. `controlplane` runs a real etcd, kube-apiserver and
kube-controller-manager; `postgres` and `mariadb` run real database servers from Debian's
packages in throwaway data directories. Each server is a context manager that starts it,
waits until it answers, and stops it (and removes its data) on exit. A server that cannot
start raises `StackError` with the reason and the tail of its log: callers fail loudly,
they never skip.
"""

from localstack.process import StackError

__all__ = ["StackError"]
