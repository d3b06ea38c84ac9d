"""The generic controller runtime: informers, work queues, controllers, leader election, manager.

Contract: nothing here knows of Ptah's resources or of any other `ptah_operator` package (an
import-linter contract holds it), so the runtime could live on as a library of its own. Its
semantics and numbers are client-go's and controller-runtime's; docs/controller-runtime.md
says why it is built the way it is. The operator's shell over it is `ptah_operator.controller`.
"""
