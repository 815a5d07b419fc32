"""A paper table of the plugin's own: its published figures in ``published/*.csv``, its sweep in
``kgx_conf/paper/hop_table1.yaml`` (``python -m kgx -m +paper=hop_table1``)."""

from pathlib import Path

from kgx.report.paper_published import PaperTable, paper_tables

paper_tables(
    Path(__file__).resolve().parent / "published",
    PaperTable("hop_table1", "One-hop (an example)", "Table 1", "Hits@1 (%) of one_hop on the example questions"),
)
