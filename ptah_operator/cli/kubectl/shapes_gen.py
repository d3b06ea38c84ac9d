"""Write `shapes.py`, the field tables the read verbs read manifests by, from the API models.

`python -m ptah_operator.cli.kubectl.shapes_gen` writes it; `--check` exits 1 when the file is
not what the models give now (a unit test runs the same comparison). Each model reachable from
the kinds the read verbs print becomes one table: per field its Python name, its wire name,
its type as `manifest` converts it, and its default as JSON (or `REQUIRED`).

Only this generator imports pydantic; the read verbs import the tables it wrote.
"""

from __future__ import annotations

import enum
import sys
import types
import typing
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import AwareDatetime, BaseModel, TypeAdapter
from pydantic_core import PydanticUndefined

from ptah_operator.api.migration import PtahMigration
from ptah_operator.api.plans import PtahMigrationPlan, PtahSchemaPlan, PtahSchemaPlanChunk
from ptah_operator.api.schema import PtahSchema

ROOTS: tuple[type[BaseModel], ...] = (
    PtahMigration,
    PtahSchema,
    PtahMigrationPlan,
    PtahSchemaPlan,
    PtahSchemaPlanChunk,
)
TARGET = Path(__file__).with_name("shapes.py")

HEADER = '''"""The field tables `manifest` reads the read verbs' objects by: written by `shapes_gen` from
the API models (do not edit; run `python -m ptah_operator.cli.kubectl.shapes_gen`).

SHAPES: model name -> [extra keys allowed, fields]; a field is [Python name, wire name, type,
default as JSON or REQUIRED]. A type is ["str"], ["int"], ["bool"], ["time"], ["any"],
["enum", ENUM], ["literal", ENUM or null, values], ["model", MODEL], ["list", TYPE],
["dict", TYPE] or ["optional", TYPE]; ENUM names a class of api.constants. JSON in a string:
read in a millisecond, and no formatter rewrites it.
"""

from __future__ import annotations

import json
from typing import Any

REQUIRED = "<required>"

'''


def _type(annotation: Any, models: list[type[BaseModel]]) -> tuple[Any, ...]:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type(args[0], models)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(rest) < len(args):
            return ("optional", _type(rest[0], models))
        return ("any",)
    if origin is list:
        return ("list", _type(args[0], models))
    if origin is dict:
        inner = _type(args[1], models)
        return ("dict", inner)
    if origin is typing.Literal:
        enums = {type(a) for a in args if isinstance(a, enum.Enum)}
        if enums:
            (enum_class,) = enums
            return ("literal", enum_class.__name__, tuple(a.value for a in args))
        return ("literal", None, tuple(args))
    if annotation is AwareDatetime:
        return ("time",)
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            models.append(annotation)
            return ("model", annotation.__name__)
        if issubclass(annotation, enum.Enum):
            return ("enum", annotation.__name__)
        if issubclass(annotation, datetime):
            return ("time",)
        if annotation is bool:
            return ("bool",)
        if annotation is int:
            return ("int",)
        if annotation is str:
            return ("str",)
    return ("any",)


def shapes() -> dict[str, tuple[bool, tuple[tuple[Any, ...], ...]]]:
    """Every model reachable from ROOTS, by name, as its table."""
    tables: dict[str, tuple[bool, tuple[tuple[Any, ...], ...]]] = {}
    seen: dict[str, type[BaseModel]] = {}
    todo = list(ROOTS)
    while todo:
        model = todo.pop(0)
        name = model.__name__
        if name in seen:
            if seen[name] is not model:
                raise SystemExit(f"two models are named {name}")
            continue
        seen[name] = model
        fields = []
        for field_name, info in model.model_fields.items():
            kind = _type(info.annotation, todo)
            if info.default_factory is not None:
                default: Any = info.default_factory()  # type: ignore[call-arg]
            else:
                default = info.default
            if default is PydanticUndefined:
                dumped: Any = "<required>"
            else:
                adapter: TypeAdapter[Any] = TypeAdapter(info.annotation)  # type: ignore[arg-type]
                dumped = adapter.dump_python(default, mode="json", by_alias=True)
            fields.append((field_name, info.alias or field_name, kind, dumped))
        tables[name] = (model.model_config.get("extra") == "allow", tuple(fields))
    return dict(sorted(tables.items()))


def source() -> str:
    import json

    rows = []
    for name, (extra, fields) in shapes().items():
        listed = ",\n".join(f"    {json.dumps(list(field))}" for field in fields)
        rows.append(f"{json.dumps(name)}: [{json.dumps(extra)}, [\n{listed}\n]]")
    body = ",\n".join(rows)
    return f'{HEADER}SHAPES: dict[str, Any] = json.loads(\n    r"""\n{{\n{body}\n}}\n"""\n)\n'


def main() -> None:
    text = source()
    if "--check" in sys.argv[1:]:
        if TARGET.read_text() != text:
            sys.stderr.write(f"{TARGET} is not what the API models give: run shapes_gen\n")
            raise SystemExit(1)
        return
    TARGET.write_text(text)


if __name__ == "__main__":
    main()
