"""cli layer.

Every command of the manager's process starts here, so this is where kubernetes_asyncio is made
to load a module at a time (runtime/lazy_kubernetes.py, issue #17), before any command imports
it.
"""

from ptah_operator.runtime import lazy_kubernetes

lazy_kubernetes.install()
