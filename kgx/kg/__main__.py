"""``python -m kgx.kg load | serve | bench``: build a store, serve it over SPARQL, time it."""
from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from kgx.kg.bench import bench, candidate_entities
from kgx.kg.build import FORMATS, SourceError, build
from kgx.kg.embedded import EmbeddedKG
from kgx.kg.endpoint import EndpointKG
from kgx.kg.serve import OxigraphServer, ServerError

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
    # `kill` (SIGTERM) would end Python without unwinding and leave oxigraph running orphaned;
    # as an exit it unwinds the with-block, which stops the server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with OxigraphServer(args.store, port=args.port) as server:
        print(f"SPARQL query endpoint: {server.url}  (Ctrl-C stops it)", flush=True)
        try:
            code = server.wait()
        except KeyboardInterrupt:
            return 0
        print(f"oxigraph exited with code {code}:\n{server.stderr()}", file=sys.stderr)
        return code or 1


def _bench(args: argparse.Namespace) -> int:
    entities = candidate_entities(args.store)
    if args.endpoint == "serve":
        with OxigraphServer(args.store) as server:
            figures = bench(EndpointKG(server.url), entities, args.calls, args.seed)
    elif args.endpoint:
        figures = bench(EndpointKG(args.endpoint), entities, args.calls, args.seed)
    else:
        figures = bench(EmbeddedKG(args.store), entities, args.calls, args.seed)
    order = ("relations_median_ms", "neighbors_median_ms", "relations_p95_ms", "neighbors_p95_ms")
    print(" ".join(f"{k}={figures[k]:.3f}" for k in order)
          + f" relations_calls={figures['relations_calls']} neighbors_calls={figures['neighbors_calls']}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m kgx.kg", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    load = sub.add_parser("load", help="build a store from RDF or name-level triple files")
    load.add_argument("sources", nargs="+", type=Path, metavar="SRC")
    load.add_argument("--format", required=True, choices=FORMATS,
                      help="nt/ttl: RDF as is; tsv: head<TAB>relation<TAB>tail with dotted relations; "
                           "metaqa: head|relation|tail; pathquestion: head<TAB>relation<TAB>tail")
    load.add_argument("--store", required=True, type=Path, help="store directory (replaced when rebuilt)")
    load.add_argument("--skip-bad", action="store_true", help="drop malformed lines and count them "
                                                              "instead of failing")
    load.set_defaults(run=_load)

    serve = sub.add_parser("serve", help="serve a store read-only over SPARQL on 127.0.0.1")
    serve.add_argument("--store", required=True, type=Path)
    serve.add_argument("--port", type=int, default=OXIGRAPH_PORT)
    serve.set_defaults(run=_serve)

    timing = sub.add_parser("bench", help="median and p95 latency of relations and neighbors")
    timing.add_argument("--store", required=True, type=Path, help="store to draw entities from (and "
                                                                  "to query, without --endpoint)")
    timing.add_argument("--endpoint", help="SPARQL query URL holding the same data, or 'serve' to "
                                           "serve --store for the duration")
    timing.add_argument("--calls", type=int, default=200)
    timing.add_argument("--seed", type=int, default=0)
    timing.set_defaults(run=_bench)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.run(args)
    except (SourceError, FileNotFoundError, ServerError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
