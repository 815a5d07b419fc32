"""Small WC2014-shaped files (IRN's World Cup KB and questions), invented for the tests: KB lines
``subject<TAB>relation<TAB>object`` with ``*_inverse`` duplicates, and question lines of 5 fields
(1-hop, 2-hop) and 6 fields (conjunctive, paths joined by ``*``), answer sets written ``a/b/``."""

from __future__ import annotations

from pathlib import Path

KB = """\
Ana_ROCHA\tplays_in_club\tClub_Norte
Club_Norte\tplays_in_club_inverse\tAna_ROCHA
Ana_ROCHA\tplays_position\tForward
Forward\tplays_position_inverse\tAna_ROCHA
Ana_ROCHA\tplays_for_country\tAtlantis
Atlantis\tplays_for_country_inverse\tAna_ROCHA
Ana_ROCHA\tis_aged\t23
Club_Norte\tis_in_country\tAtlantis
Atlantis\tis_in_country_inverse\tClub_Norte
Bo_LINDQVIST\tplays_in_club\tClub_Norte
Club_Norte\tplays_in_club_inverse\tBo_LINDQVIST
Bo_LINDQVIST\tplays_position\tDefender
Bo_LINDQVIST\tplays_for_country\tAtlantis
Lemuria\tplays_for_country_inverse\tCy_OKAFOR
"""
# Edges once each: the inverse lines fold into these (Lemuria's only line is an inverse one).
EDGES = 9
ENTITIES = 9  # Ana, Bo, Cy, Club_Norte, Forward, Defender, Atlantis, Lemuria, 23

CONTEXT = "Ana_ROCHA#plays_in_club#Club_Norte///Ana_ROCHA#is_aged#23"
ONE_HOP = (
    f"which club does Ana_ROCHA play for ?\tClub_Norte\tAna_ROCHA#plays_in_club#Club_Norte\tClub_Norte/\t{CONTEXT}\n"
)
TWO_HOP = (
    "where is the club that Bo_LINDQVIST plays for ?\tAtlantis\t"
    f"Bo_LINDQVIST#plays_in_club#Club_Norte#is_in_country#Atlantis\tAtlantis/\t{CONTEXT}\n"
)
CONJUNCTIVE = (
    "which Atlantis player plays for Club_Norte ?\tAna_ROCHA\t"
    "Club_Norte#plays_in_club_inverse#Ana_ROCHA#<end>#Ana_ROCHA*"
    "Atlantis#plays_for_country_inverse#Ana_ROCHA#<end>#Ana_ROCHA\t"
    f"Ana_ROCHA/Bo_LINDQVIST/\t{CONTEXT}\tClub_Norte/Atlantis\n"
)


def write(folder: Path) -> tuple[Path, Path]:
    """(KB file, question file with the three kinds of line) under ``folder``."""
    kb, questions = folder / "WC2014.txt", folder / "WC-mixed.txt"
    kb.write_text(KB, encoding="utf-8")
    questions.write_text(ONE_HOP + TWO_HOP + CONJUNCTIVE, encoding="utf-8")
    return kb, questions
