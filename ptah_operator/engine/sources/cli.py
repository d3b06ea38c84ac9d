"""`ptah artifact <command>`: OCI artifacts of the layout Ptah reads, from the command line.

    ptah artifact push REF FILE... [--artifact-type TYPE]   push files as one artifact; prints
                                                           the manifest digest
    ptah artifact resolve REF                              print the digest REF names now
    ptah artifact inspect REF@DIGEST                       print the artifact type
    ptah artifact pull REF[@DIGEST] --out DIR              write the files (by digest: a tag is
                                                           resolved first)

Options of every command: `--insecure HOST[:PORT]` (repeatable; also PTAH_INSECURE_REGISTRIES)
for registries reached over plain HTTP, `--credentials DIR` (files `username`, `password`).
A file's name in the artifact is its base name. Exit codes: 0 done, 2 the command line is
wrong, 3 refused (a name, a size, a digest that does not match), 6 the registry cannot be
reached or refuses the credentials.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ptah_operator.engine.sources import oci
from ptah_operator.engine.sources.errors import (
    SourceError,
    SourceRefusedError,
    SourceUnreachableError,
)
from ptah_operator.engine.sources.files import read_credentials
from ptah_operator.engine.sources.verification import MIGRATIONS_ARTIFACT_TYPE

EXIT_DONE = 0
EXIT_USAGE = 2
EXIT_REFUSED = 3
EXIT_UNREACHABLE = 6


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ptah artifact", description=__doc__.splitlines()[0])
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--insecure", action="append", default=[], metavar="HOST[:PORT]")
    common.add_argument("--credentials", type=Path, default=None)
    commands = parser.add_subparsers(dest="command", required=True)
    push = commands.add_parser("push", parents=[common], help="push files as one artifact")
    push.add_argument("ref")
    push.add_argument("files", nargs="+", type=Path)
    push.add_argument("--artifact-type", default=MIGRATIONS_ARTIFACT_TYPE)
    resolve = commands.add_parser("resolve", parents=[common], help="the digest a ref names")
    resolve.add_argument("ref")
    inspect = commands.add_parser("inspect", parents=[common], help="an artifact's type")
    inspect.add_argument("ref")
    pull = commands.add_parser("pull", parents=[common], help="write an artifact's files")
    pull.add_argument("ref")
    pull.add_argument("--out", required=True, type=Path)
    return parser


def _run(args: argparse.Namespace) -> dict[str, object]:
    insecure = set(args.insecure) | oci.insecure_from_env(
        os.environ.get("PTAH_INSECURE_REGISTRIES")
    )
    client = oci.OciClient(
        insecure_registries=insecure, credentials=read_credentials(args.credentials)
    )
    ref = oci.parse_ref(args.ref)
    if args.command == "push":
        files: dict[str, bytes] = {}
        for path in args.files:
            if path.name in files:
                raise SourceRefusedError(f"two files are named {path.name}")
            files[path.name] = path.read_bytes()
        digest = client.push(ref, files, args.artifact_type)
        return {"ociRef": str(ref), "ociDigest": digest, "files": sorted(files)}
    if args.command == "resolve":
        return {"ociRef": str(ref), "ociDigest": client.resolve(ref)}
    if args.command == "inspect":
        return {"ociRef": str(ref), "artifactType": client.inspect(ref)}
    digest = ref.digest or client.resolve(ref)
    pulled = client.fetch(ref, digest)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, data in sorted(pulled.items()):
        (args.out / name).write_bytes(data)
    return {"ociRef": str(ref), "ociDigest": digest, "files": sorted(pulled)}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        answer = _run(args)
    except SourceUnreachableError as exc:
        sys.stderr.write(f"ptah artifact: {exc.reason}: {exc}\n")
        return EXIT_UNREACHABLE
    except SourceError as exc:
        sys.stderr.write(f"ptah artifact: {exc.reason}: {exc}\n")
        return EXIT_REFUSED
    except OSError as exc:
        sys.stderr.write(f"ptah artifact: {exc.strerror}: {exc.filename}\n")
        return EXIT_USAGE
    sys.stdout.write(json.dumps(answer, sort_keys=True) + "\n")
    return EXIT_DONE


if __name__ == "__main__":
    raise SystemExit(main())
