"""``python -m kgx.kg load | serve | bench | check | freebase build``: build a store, serve it
over SPARQL, time it, tell whether an endpoint looks like Freebase, and build Freebase itself
from its dump into a Virtuoso database."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from contextlib import ExitStack
from pathlib import Path

from kgx.core.cli import plain
from kgx.core.config import ConfigError
from kgx.core.kg_config import EndpointKGConfig
from kgx.core.sources import SourceError
from kgx.kg.bench import bench, candidate_entities
from kgx.kg.check import check, verdict
from kgx.kg.embedded import EmbeddedKG
from kgx.kg.endpoint import connect
from kgx.kg.freebase import KGError
from kgx.kg.pipelines import FORMATS, build
from kgx.kg.pipelines.dump_filter import BuildError
from kgx.kg.serve import OxigraphServer, ServerError
from kgx.kg.sparql import SparqlKG

OXIGRAPH_PORT = 7878  # Oxigraph's own default, so a served store has a URL one can remember


def _load(args: argparse.Namespace) -> int:
    result = build(args.sources, args.format, args.store, skip_bad=args.skip_bad)
    if result.reused:
        print(f"{result.store} is up to date with these sources; figures are from its build")
    if result.skipped:
        print(f"skipped={result.skipped} malformed lines (first: {result.first_skipped})")
    rate = result.triples / result.seconds if result.seconds else float("inf")
    print(f"triples={result.triples} seconds={result.seconds:.3f} triples_per_s={rate:.0f}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    # `kill` (SIGTERM) would end Python without unwinding and leave the server running orphaned;
    # as an exit it unwinds the with-block, which stops the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if (args.store is None) == (args.db is None):
        raise ConfigError("give --store DIR (a kgx store) or --db DIR (a database built by freebase build)")
    if args.db is not None:
        if args.engine != "virtuoso":
            raise ConfigError("--db is a Virtuoso database: add --engine virtuoso")
        return _serve_db(args)
    if args.engine == "virtuoso":
        from kgx.kg.virtuoso import VirtuosoServer

        with VirtuosoServer(args.store, http_port=args.port or OXIGRAPH_PORT) as server:
            print(
                f"SPARQL query endpoint: {server.url}  graph {server.graph} (kg.default_graph)  "
                f"started in {server.startup_s:.1f} s, loaded in {server.load_s:.1f} s (Ctrl-C stops it)",
                flush=True,
            )
            try:
                code = server.process.wait()
            except KeyboardInterrupt:
                return 0
            print(f"virtuoso exited with code {code}:\n{server.log_tail()}", file=sys.stderr)
            return code or 1
    with OxigraphServer(args.store, port=args.port or OXIGRAPH_PORT) as server:
        print(f"SPARQL query endpoint: {server.url}  (Ctrl-C stops it)", flush=True)
        try:
            code = server.wait()
        except KeyboardInterrupt:
            return 0
        print(f"oxigraph exited with code {code}:\n{server.stderr()}", file=sys.stderr)
        return code or 1


def _serve_db(args: argparse.Namespace) -> int:
    from kgx.kg.virtuoso.db import VirtuosoDB, require_built, saved_sizing, size_for

    built = require_built(args.db)
    with VirtuosoDB(args.db, saved_sizing(args.db) or size_for(), http_port=args.port, isql_port=args.isql_port) as db:
        print(
            f"SPARQL query endpoint: {db.url}  graph {built['graph']} (kg.default_graph), "
            f"{built['triples']:,} triples, database {args.db} (Ctrl-C stops it)",
            flush=True,
        )
        print(f"check it: python -m kgx.kg check --endpoint {db.url} --default-graph {built['graph']}", flush=True)
        try:
            code = db.process.wait()
        except KeyboardInterrupt:
            return 0
        print(f"virtuoso exited with code {code}:\n{db.log_tail()}", file=sys.stderr)
        return code or 1


def _freebase_build(args: argparse.Namespace) -> int:
    from kgx.kg.pipelines.freebase_dump import BuildOptions, build_freebase

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # unwind: the server shuts down cleanly
    opts = BuildOptions(
        db=args.db,
        dump=args.dump,
        filtered=args.filtered,
        rule=args.rule,
        chunk_lines=args.chunk_lines,
        chunk_format=args.chunk_format,
        loaders=args.loaders,
        workers=args.workers,
        memory_gb=args.memory_gb,
        max_bad=args.max_bad,
        graph=args.graph,
        checkpoint_every_s=args.checkpoint_every_s,
    )
    try:
        report = build_freebase(opts)
    except KeyboardInterrupt:
        print("interrupted: rerun the same command to resume (finished chunks and loads are kept)", file=sys.stderr)
        return 130
    f = report.filter
    if f:
        rate = f" seconds={report.filter_s:.1f} mb_per_s={report.filter_mb_per_s:.1f}" if report.filter_s else ""
        print(
            f"filter: lines={f['lines']} kept={f['kept']} dropped={f['dropped']} malformed={f['malformed']}"
            + (f" (first at lines {', '.join(map(str, f['first_malformed']))})" if f["malformed"] else "")
            + rate
        )
    rate = report.triples_loaded_now / report.load_s if report.loaded_now and report.load_s else 0
    print(
        f"load: chunks={report.chunks} already_loaded={report.already_loaded} loaded_now={report.loaded_now} "
        f"seconds={report.load_s:.1f}" + (f" triples_per_s={rate:.0f}" if rate else "")
    )
    print(f"database: {args.db} triples={report.triples} size_gb={report.database_gb:.2f} graph={args.graph}")
    print(f"serve it: python -m kgx.kg serve --engine virtuoso --db {args.db}")
    return 0


def _open(args: argparse.Namespace, stack: ExitStack) -> tuple[SparqlKG, str]:
    """The KG the command queries and where it is: ``--endpoint`` (a URL, with the settings of
    kg.*, or ``serve`` to serve ``--store`` meanwhile), else the ``--store`` in-process."""
    if not args.endpoint:
        if not args.store:
            raise ConfigError("give --endpoint URL, or --store DIR (alone, or with --endpoint serve)")
        return EmbeddedKG(args.store), str(args.store)
    url = args.endpoint
    if url == "serve":
        if not args.store:
            raise ConfigError("--endpoint serve needs --store DIR to serve")
        url = stack.enter_context(OxigraphServer(args.store)).url
    cfg = EndpointKGConfig(
        name="cli",
        endpoint=url,
        default_graph=args.default_graph,
        headers_env=dict(args.header_env),
        user_env=args.user_env,
        password_env=args.password_env,
        timeout_s=args.timeout_s,
    )
    return connect(cfg), url


def _header_env(text: str) -> tuple[str, str]:
    header, _, variable = text.partition("=")
    if not header or not variable:
        raise argparse.ArgumentTypeError(f"{text!r}: use HEADER=VARIABLE, e.g. X-Api-Key=FREEBASE_KEY")
    return header, variable


def _bench(args: argparse.Namespace) -> int:
    with ExitStack() as stack:
        kg, _ = _open(args, stack)
        figures = bench(kg, candidate_entities(kg), args.calls, args.seed)
    order = ("relations_median_ms", "neighbors_median_ms", "relations_p95_ms", "neighbors_p95_ms")
    print(
        " ".join(f"{k}={figures[k]:.3f}" for k in order)
        + f" relations_calls={figures['relations_calls']} neighbors_calls={figures['neighbors_calls']}"
    )
    return 0


def _check(args: argparse.Namespace) -> int:
    with ExitStack() as stack:
        kg, url = _open(args, stack)
        graph = f" (default graph {args.default_graph})" if args.default_graph else ""
        print(f"endpoint {url}{graph}", flush=True)
        findings = check(kg)
    for finding in findings:
        print(f"{finding.what:<8} {finding.status:<4} {finding.detail}")
    usable, line = verdict(findings)
    print(line)
    return 0 if usable else 1


def _endpoint_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--default-graph", metavar="IRI", help="graph to query (kg.default_graph)")
    command.add_argument(
        "--header-env",
        action="append",
        default=[],
        metavar="HEADER=VAR",
        type=_header_env,
        help="send HEADER with the value of environment variable VAR (kg.headers_env)",
    )
    command.add_argument("--user-env", metavar="VAR", help="basic-auth user from VAR (kg.user_env)")
    command.add_argument("--password-env", metavar="VAR", help="basic-auth password from VAR (kg.password_env)")
    command.add_argument("--timeout-s", type=float, default=30.0, help="seconds per request (kg.timeout_s)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m kgx.kg", description=plain(__doc__), formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="command", required=True)

    load = sub.add_parser("load", help="build a store from RDF or name-level triple files")
    load.add_argument("sources", nargs="+", type=Path, metavar="SRC")
    load.add_argument(
        "--format",
        required=True,
        choices=FORMATS,
        help="nt/ttl: RDF as is; tsv: head<TAB>relation<TAB>tail with dotted relations; "
        "metaqa: head|relation|tail; pathquestion: head<TAB>relation<TAB>tail",
    )
    load.add_argument("--store", required=True, type=Path, help="store directory (replaced when rebuilt)")
    load.add_argument("--skip-bad", action="store_true", help="drop malformed lines and count them instead of failing")
    load.set_defaults(run=_load)

    serve = sub.add_parser(
        "serve", help="serve a store read-only over SPARQL on 127.0.0.1, or a built Virtuoso database (--db) in place"
    )
    serve.add_argument("--store", type=Path, help="a kgx store directory")
    serve.add_argument("--db", type=Path, help="a database built by `freebase build` (with --engine virtuoso)")
    serve.add_argument("--port", type=int, help=f"HTTP port (oxigraph: {OXIGRAPH_PORT}; virtuoso: a free one)")
    serve.add_argument("--isql-port", type=int, help="Virtuoso's SQL port with --db (default: a free one)")
    serve.add_argument(
        "--engine",
        choices=("oxigraph", "virtuoso"),
        default="oxigraph",
        help="virtuoso: a private Virtuoso instance (apt-get install virtuoso-opensource) "
        "loaded with the store, the papers' Freebase engine",
    )
    serve.set_defaults(run=_serve)

    timing = sub.add_parser("bench", help="median and p95 latency of relations and neighbors")
    timing.add_argument("--store", type=Path, help="store to query in-process, or to serve with --endpoint serve")
    timing.add_argument(
        "--endpoint", help="SPARQL query URL (entities are drawn from it), or 'serve' to serve --store for the duration"
    )
    timing.add_argument("--calls", type=int, default=200)
    timing.add_argument("--seed", type=int, default=0)
    _endpoint_options(timing)
    timing.set_defaults(run=_bench)

    looks = sub.add_parser("check", help="does an endpoint look like Freebase? exit 1 when it does not")
    looks.add_argument("--endpoint", required=True, help="SPARQL query URL, or 'serve' to serve --store")
    looks.add_argument("--store", type=Path, help="store to serve with --endpoint serve")
    _endpoint_options(looks)
    looks.set_defaults(run=_check)
    _freebase_parser(sub)
    return p


def _freebase_parser(sub: argparse._SubParsersAction) -> None:
    from kgx.kg.pipelines.dump_filter import RULES

    freebase = sub.add_parser("freebase", help="Freebase from its dump: filter, bulk-load into Virtuoso")
    build = freebase.add_subparsers(dest="action", required=True).add_parser(
        "build",
        help="filter freebase-rdf-latest.gz into chunks and bulk-load them into a Virtuoso database in --db; "
        "rerun the same command to resume after any interruption",
    )
    build.add_argument("--db", required=True, type=Path, help="directory of the chunks and the database")
    build.add_argument("--dump", type=Path, help="freebase-rdf-latest.gz as downloaded")
    build.add_argument(
        "--filtered",
        type=Path,
        help="already-filtered N-Triples (a file or a directory of .nt/.nt.gz files): skip the filter",
    )
    build.add_argument(
        "--rule",
        choices=RULES,
        default="english",
        help="english: ns subjects and predicates, "
        "English/untagged/typed literals; tog: exactly ToG's FilterEnglishTriplets.py",
    )
    build.add_argument("--chunk-lines", type=int, default=10_000_000, help="kept lines per chunk")
    build.add_argument(
        "--chunk-format", choices=("gz", "nt"), default="gz", help="gzip chunks (1/10 the disk) or plain N-Triples"
    )
    build.add_argument(
        "--loaders",
        type=int,
        default=max(1, (os.cpu_count() or 2) // 2),
        help="concurrent rdf_loader_run() (default: half the cores)",
    )
    build.add_argument(
        "--workers",
        type=int,
        default=max(1, (os.cpu_count() or 2) - 1),
        help="filter processes (default: the cores but one, which decompresses)",
    )
    build.add_argument(
        "--memory-gb", type=float, help="memory for Virtuoso's buffers (default: 3/4 of what is available)"
    )
    build.add_argument("--max-bad", type=int, default=1000, help="stop past this many malformed dump lines")
    build.add_argument("--graph", default="http://freebase.com", help="graph IRI (kg.default_graph)")
    build.add_argument(
        "--checkpoint-every-s",
        type=float,
        default=600.0,
        help="checkpoint the database at least this often while loading (what a kill keeps)",
    )
    build.set_defaults(run=_freebase_build)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except (SourceError, FileNotFoundError, ServerError, ConfigError, KGError, BuildError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
