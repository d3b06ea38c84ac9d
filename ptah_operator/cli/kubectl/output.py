"""`-o json` and `-o yaml` on the read verbs: the object the verb reads, as the API server
gives it, for scripts.

- `migration NAME -o F`, `schema NAME -o F`: the resource.
- `plan KIND/NAME -o F`: the plan object status.plan names, while it is that object (its UID);
  `plan schema/NAME --applied -o F`: the plan status.applied records, while its digest is the
  one recorded. No plan of that kind: an error line, exit 1 (as `kubectl get` of an absent
  object).
- `wait KIND/NAME -o F`: the phase lines are not printed; once the phase is reached, the
  resource as it is then.

Keys are sorted, JSON is indented by four spaces, as kubectl prints them. These read raw
manifests only: no API model is built, so they are the fastest answers the plugin gives.
"""

from __future__ import annotations

import json
from typing import Any

from ptah_operator.api.constants import Kind
from ptah_operator.cli.kubectl.errors import EXIT_OK, CommandError
from ptah_operator.cli.kubectl.lookup import Reads
from ptah_operator.cli.kubectl.targets import TARGETS

FORMATS = ("json", "yaml")


def render(obj: dict[str, Any], output: str) -> str:
    if output == "json":
        return json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False) + "\n"
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text: str = yaml.dump(
        obj, Dumper=dumper, default_flow_style=False, sort_keys=True, allow_unicode=True
    )
    return text


async def show_object(session: Reads, kind: Kind, name: str, output: str) -> int:
    obj = await session.get(kind, name)
    assert obj is not None
    session.say(render(obj, output))
    return EXIT_OK


async def show_plan_object(
    session: Reads, kind: Kind, name: str, applied: bool, output: str
) -> int:
    target = TARGETS[kind]
    obj = await session.get(kind, name)
    assert obj is not None
    status = obj.get("status") or {}
    record = status.get("applied") if applied else status
    reference = (record or {}).get("plan") or {}
    what = "confirmed Apply (status.applied)" if applied else "plan published"
    if not reference.get("name"):
        raise CommandError(f"{target.noun} {name} has no {what}")
    plan = await session.get(target.plan_kind, str(reference["name"]), missing_ok=True)
    uid = reference.get("uid")
    meta = (plan or {}).get("metadata") or {}
    if plan is None or (uid is not None and meta.get("uid") != uid):
        raise CommandError(f"plan {reference['name']} of {target.noun} {name} no longer exists")
    if applied and ((plan.get("spec") or {}).get("digest") != (record or {}).get("digest")):
        raise CommandError(f"plan {reference['name']} no longer holds what was applied")
    session.say(render(plan, output))
    return EXIT_OK
