"""Which queries ``kgx.kg serve`` refuses as naming ``SERVICE``: every way Oxigraph's parser reads
the keyword (no word boundary needed), none where the word is data (strings, IRIs, comments) or a
name (variables, local names). The real server's refusals are in test_serve.py."""

from __future__ import annotations

import pytest

from kgx.kg.serve_front import names_service, sparql_texts

URL = "<http://elsewhere.example/sparql>"


@pytest.mark.parametrize(
    "query",
    [
        f"SELECT * WHERE {{ SERVICE {URL} {{ ?s ?p ?o }} }}",
        f"select * where {{ Service Silent {URL} {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ ?s ?p ?o.SERVICE{URL}{{ ?a ?b ?c }} }}",
        f"SELECT * WHERE {{ ?s ?p 1SERVICE{URL}{{ ?a ?b ?c }} }}",
        f"SELECT * WHERE {{ ?s ?p trueSERVICE{URL}{{ ?a ?b ?c }} }}",
        f'SELECT * WHERE {{ ?s ?p "x"SERVICE{URL}{{ ?a ?b ?c }} }}',
        f"SELECT * WHERE {{ ?s ?p '''it's'''SERVICE {URL} {{ ?a ?b ?c }} }}",
        f"SELECT * WHERE {{ OPTIONAL {{ ?s ?p ?o }}SERVICE {URL} {{ ?a ?b ?c }} }}",
        f"PREFIX : {URL} SELECT * WHERE {{ service:x {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ # a comment\nSERVICE {URL} {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ ?s ex:a\\# SERVICE {URL} {{ ?a ?b ?c }} }}",  # an escaped '#' starts no comment
        "SELECT * WHERE { FILTER(?a<1) SERVICE ?endpoint { ?s ?p ?o } }",
        f"INSERT {{ ?s ?p ?o }} WHERE {{ SERVICE {URL} {{ ?s ?p ?o }} }}",
    ],
)
def test_every_spelling_of_the_keyword_is_refused(query):
    assert names_service(query)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT ?service WHERE { ?service ?p $SERVICE }",
        "SELECT * WHERE { ?s schema:serviceType ?o . ?o ex:a\\-SERVICE :SERVICE }",
        'SELECT * WHERE { ?s ?p "SERVICE <http://x/> {}" }',
        "SELECT * WHERE { ?s ?p '''a 'SERVICE' \"\"\" ''' }",
        "SELECT * WHERE { ?s <http://example.org/SERVICE> ?o }",
        "# SERVICE <http://x/> {}\nSELECT * WHERE { ?s ?p ?o }",
        "SELECT * WHERE { ?s ?p ?o FILTER(?a<?b&&?c>?d) }",
    ],
)
def test_the_word_as_data_or_a_name_is_not(query):
    assert not names_service(query)


def test_the_texts_of_a_request_are_its_parameters_form_and_body():
    q = "SELECT * WHERE { SERVICE <http://x/> { ?s ?p ?o } }"
    assert sparql_texts("/query?query=SELECT+1&query=ASK+%7B%7D", "", b"") == ["SELECT 1", "ASK {}"]
    assert sparql_texts("/query", "application/x-www-form-urlencoded", b"update=DROP+ALL") == ["DROP ALL"]
    assert sparql_texts("/query?default-graph-uri=g", "application/sparql-query", q.encode()) == [q]
    assert sparql_texts("/update", "application/sparql-update", b"CLEAR \xff") == ["CLEAR \ufffd"]
    assert sparql_texts("/store", "text/turtle", q.encode()) == []
