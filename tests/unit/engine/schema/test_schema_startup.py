"""A schema Job starts on what it reads (issue #16): the HCL reader (python-hcl2, lark) is
loaded by the first HCL file, not by every Job. In a fresh interpreter, where imports show."""

from __future__ import annotations

from tests.support.fresh_interpreter import probe


def test_a_schema_job_loads_the_hcl_reader_only_for_an_hcl_file() -> None:
    found = probe(
        """
        import json, sys
        import ptah_operator.runner.schema
        from ptah_operator.engine.schema.hcl import parse_hcl
        from ptah_operator.engine.schema.model import Dialect
        before = sorted(m for m in sys.modules if m.split(".")[0] in ("hcl2", "lark"))
        parse_hcl(Dialect.POSTGRESQL, 'schema "public" {}', "s.hcl")
        print(json.dumps({"before": before, "after": "hcl2" in sys.modules}))
        """
    )
    assert found == {"before": [], "after": True}
