"""The KG's config: what every backend has (``KGConfig``), and each backend's own schema.

A backend is registered with its schema and its opener (``kgx.kg.kg_backend``); ``kg=<option>``
composes the schema its YAML file extends (``defaults: [base_<backend>]``, as a method's file
extends its schema), so a setting exists only where it means something: ``kg.scope`` on RoG
subgraphs, ``kg.endpoint`` on an endpoint, ``kg.sources`` on the KGs built from files.

kgx's own backends: ``embedded`` (an Oxigraph store built from files: the demo, MetaQA,
PathQuestion, the replay KG, a custom KB), ``subgraph`` (RoG's per-question subgraphs) and
``endpoint`` (a SPARQL endpoint: Freebase on Virtuoso or QLever).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional

from kgx.core.config_checks import ConfigError, check_choice
from kgx.core.run_identity import added, execution

# Schema and bookkeeping relations that carry no answer (ToG, LMP and KnowPath drop them too).
DEFAULT_FILTERS: tuple[str, ...] = ("type.object.*", "common.*", "freebase.*", "kg.*", "*sameAs*", "*.key")


@dataclass
class NoiseConfig:
    """Seeded KG damage for robustness studies (LMP Table 3), applied at query time."""

    drop_relations: float = 0.0  # share of edges removed
    drop_names: float = 0.0  # share of entities whose names are removed
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("drop_relations", "drop_names"):
            if not 0.0 <= getattr(self, name) < 1.0:
                raise ConfigError(f"kg.noise.{name}={getattr(self, name)}: must lie in [0, 1)")


@dataclass
class KGConfig:
    """What every KG has, whatever its backend."""

    name: str = "demo"
    backend: str = "embedded"  # the registered backend that opens it (kgx.kg.KG_BACKENDS); set by kg=<option>
    # A run whose KG lacks topic entities of its questions stops before any question (kgx.run.preflight);
    # true runs it anyway, and those questions fall back to the model's own knowledge.
    allow_missing_topics: bool = execution(False)
    max_candidates: Optional[int] = None  # cap on relations/neighbours returned per call
    filters: list[str] = field(default_factory=lambda: list(DEFAULT_FILTERS))  # relation globs dropped
    noise: NoiseConfig = field(default_factory=NoiseConfig)
    # GoG's incomplete KGs (Xu et al., EMNLP 2024, Sec. 4.2): each crucial triple of a question (an
    # edge of its gold path, every relation between the two entities) is removed with this
    # probability, per question (kgx.diagnose.crucial); seeded by drop_seed, or by run.seed when null.
    drop: float = added(0.0)
    drop_seed: Optional[int] = added(None)

    # A run's identity holds every setting the one flat KG schema had before backends had schemas of
    # their own, at the value it meant (kgx.core.run_identity): finished runs keep their hashes.
    IDENTITY_BEFORE: ClassVar[dict[str, Any]] = {
        "sources": [],
        "format": "nt",
        "drop_inverse": None,
        "scope": "question",
        "split": None,
        "endpoint": None,
        "default_graph": None,
    }
    IDENTITY_AS: ClassVar[dict[str, Any]] = {}

    def __post_init__(self) -> None:
        if not 0.0 <= self.drop <= 1.0:
            raise ConfigError(
                f"kg.drop={self.drop}: must lie in [0, 1] (the share of each question's gold-path triples removed)"
            )
        if self.max_candidates is not None and self.max_candidates < 1:
            raise ConfigError(f"kg.max_candidates={self.max_candidates}: must be at least 1 (or null)")

    @property
    def data_format(self) -> str:
        """How the KG's data is written: a name-level format (tsv, metaqa, pathquestion, custom)
        ids entities by name; Freebase data (nt, an endpoint, RoG) by mid."""
        return "nt"


@dataclass
class EmbeddedKGConfig(KGConfig):
    """An Oxigraph store built from files on first use and reused after."""

    backend: str = "embedded"
    sources: list[str] = field(default_factory=list)  # files to load; [] = the bundled demo KG
    format: str = "nt"  # nt | ttl | tsv | metaqa | pathquestion | custom (tab-separated, any relation names)
    drop_inverse: Optional[str] = None  # relation suffix (e.g. "_inverse") of declared inverse triples, folded
    store: Optional[str] = execution()  # store directory; default <run.cache_dir>/kg/<name>

    @property
    def data_format(self) -> str:
        return self.format


@dataclass
class SubgraphKGConfig(KGConfig):
    """RoG's per-question Freebase subgraphs (``kg=subgraph``), built from the dataset's own files."""

    name: str = "subgraph"
    backend: str = "subgraph"
    sources: list[str] = field(default_factory=list)  # RoG parquet files or folders of shards
    # What a question sees: its own subgraph (question) or all of them as one KG (union).
    scope: str = "question"
    split: Optional[str] = None  # for a folder of shards in `sources`, the split whose shards load (test-*.parquet)
    store: Optional[str] = execution()  # store directory; default <run.cache_dir>/kg/<name>[-union]-<key>

    IDENTITY_AS: ClassVar[dict[str, Any]] = {"backend": "embedded", "format": "rog"}

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("kg.scope", self.scope, ("question", "union"))


@dataclass
class EndpointKGConfig(KGConfig):
    """A SPARQL endpoint holding Freebase-shaped RDF. Secrets live only in environment variables
    read when the KG opens (``headers_env``, ``user_env``, ``password_env`` name them)."""

    name: str = "sparql"
    backend: str = "endpoint"
    endpoint: str = ""  # SPARQL query URL; no ?query, no user:password@
    default_graph: Optional[str] = None  # graph IRI, sent as the default-graph-uri parameter of every query
    headers_env: dict[str, str] = execution(default_factory=dict)  # request header -> NAME of the env variable
    user_env: Optional[str] = execution()  # NAME of the env variable holding the HTTP basic-auth user
    password_env: Optional[str] = execution()  # NAME of the env variable holding its password (both or neither)
    timeout_s: float = execution(30.0)  # seconds, a float: each query whole, from sending it to its last byte
    retries: int = execution(3)  # per query, exponential backoff

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.timeout_s <= 0:
            raise ConfigError(f"kg.timeout_s={self.timeout_s}: must be a positive number of seconds")
        if self.retries < 0:
            raise ConfigError(f"kg.retries={self.retries}: must be >= 0")
        self._check_endpoint_access()

    def _check_endpoint_access(self) -> None:
        """Where and how to reach an endpoint. Secrets live only in environment variables read
        when the KG opens, so no config, log, trace or MLflow param ever holds one; a message
        about a field that may hold a secret never repeats its value."""
        import re
        from urllib.parse import urlsplit

        if not self.endpoint:
            raise ConfigError("kg.endpoint: a SPARQL URL is needed (kg.endpoint=http://host:port/sparql)")
        if self.endpoint:
            url = urlsplit(self.endpoint)
            if "@" in url.netloc or (not url.netloc and "@" in self.endpoint):
                raise ConfigError(
                    "kg.endpoint: credentials in the URL (user:password@host) are not accepted; "
                    "put them in environment variables named by kg.user_env and kg.password_env"
                )
            if url.scheme not in ("http", "https") or not url.netloc:
                raise ConfigError(f"kg.endpoint={self.endpoint}: must be an http:// or https:// URL")
            if "?" in self.endpoint:
                raise ConfigError(
                    f"kg.endpoint={url.scheme}://{url.netloc}{url.path}?...: remove the query "
                    f"string; kgx sends the query itself, and the graph with kg.default_graph=IRI"
                )
        if self.default_graph is not None and not re.fullmatch(
            r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]+", self.default_graph
        ):
            raise ConfigError(
                f"kg.default_graph={self.default_graph}: must be an absolute IRI "
                f"(e.g. http://rdf.freebase.com), or null for the endpoint's default"
            )
        variable = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
        for header, name in self.headers_env.items():
            if not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", header):
                raise ConfigError(f"kg.headers_env: {header!r} is not an HTTP header name")
            if header.lower() in ("accept", "content-type", "content-length", "host"):
                raise ConfigError(f"kg.headers_env.{header}: kgx sets this header itself")
            if header.lower() == "authorization" and (self.user_env or self.password_env):
                raise ConfigError("kg.headers_env.Authorization: conflicts with kg.user_env/kg.password_env; use one")
            if not variable.fullmatch(str(name)):
                raise ConfigError(
                    f"kg.headers_env.{header}: must be the NAME of an environment variable "
                    f"(letters, digits, _) holding the value, never the value itself"
                )
        for field_name in ("user_env", "password_env"):
            if getattr(self, field_name) is not None and not variable.fullmatch(getattr(self, field_name)):
                raise ConfigError(
                    f"kg.{field_name}: must be the NAME of an environment variable (letters, "
                    f"digits, _) holding the value, never the value itself"
                )
        if (self.user_env is None) != (self.password_env is None):
            raise ConfigError("kg.user_env, kg.password_env: basic auth needs both (or neither)")
