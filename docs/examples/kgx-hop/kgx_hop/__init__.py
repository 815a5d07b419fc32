"""kgx-hop: an example of every kind of kgx component, in a package of its own."""
