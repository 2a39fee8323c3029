"""KataGo's rules in a query -- rule-set names, the short form, rules objects -- as jaxgo ``Rules``.

Scoring is always area (Tromp-Taylor) here: territory rules are accepted with a warning, and every final
response says which rules were used (``effective_rules``).  A value that is not understood raises ``RulesError``
(the protocol answers it as an error for the field ``rules``).
"""

from __future__ import annotations

import re

from jaxgo.go.config import Rules

# KataGo rule-set names -> (ko rule, suicide allowed, note).  Scoring is always area here.
RULE_SETS = {
    "tromp-taylor": ("positional", True), "chinese": ("situational", False),
    "chinese-ogs": ("positional", False), "chinese-kgs": ("positional", False),
    "aga": ("situational", False), "bga": ("situational", False), "new-zealand": ("situational", True),
    "stone-scoring": ("simple", False), "japanese": ("simple", False), "korean": ("simple", False),
    "aga-button": ("situational", False), "french": ("situational", False), "goe": ("positional", True),
    "ing": ("positional", True), "ancient-area": ("simple", False), "ancient-territory": ("simple", False),
}
RULE_ALIASES = {"tromptaylor": "tromp-taylor", "newzealand": "new-zealand", "nz": "new-zealand",
                "chineseogs": "chinese-ogs", "chinesekgs": "chinese-kgs", "stonescoring": "stone-scoring",
                "agabutton": "aga-button", "ancientarea": "ancient-area", "ancientterritory": "ancient-territory"}
TERRITORY_RULE_SETS = ("japanese", "korean", "ancient-territory")
# KataGo's SPIGHT ko has no counterpart here: it is played as situational superko (with the warning below).
KO_NAMES = {"SIMPLE": "simple", "POSITIONAL": "positional", "SITUATIONAL": "situational", "SPIGHT": "situational"}
# KataGo's rules object: the keys it accepts and their values (None: a JSON bool).
RULE_KEYS = {"ko": tuple(KO_NAMES), "scoring": ("AREA", "TERRITORY"), "score": ("AREA", "TERRITORY"),
             "tax": ("NONE", "SEKI", "ALL"),
             "suicide": None, "hasButton": None, "friendlyPassOk": None,
             "whiteHandicapBonus": ("0", "N-1", "N")}
# KataGo's short form, e.g. "koPOSITIONALscoreAREAtaxNONEsui1button0" (Rules::toString).
RULES_TEXT = re.compile(r"ko(SIMPLE|POSITIONAL|SITUATIONAL|SPIGHT)scor(?:e|ing)(AREA|TERRITORY)(?:tax(NONE|SEKI|ALL))?"
                        r"(?:sui([01]))?(?:button([01]))?(?:whb(0|N-1|N))?(?:fpok([01]))?(?:komi-?[0-9.]+)?",
                        re.IGNORECASE)
TERRITORY_NOTE = ("{asked} scoring by territory is not implemented here: positions are scored by area "
                  "(stones + territory, Tromp-Taylor) with the query's komi; win rates and score leads are "
                  "area-scoring figures")


class RulesError(ValueError):
    """A rules value that is not understood (the message says what is accepted)."""


def parse_rules(value, size: int, komi, warnings: list) -> Rules:
    """A KataGo rules value -> Rules; komi from the query or the rule set's default 7.5.  Accepted: KataGo's
    rule-set names (``tromp-taylor``, ``chinese``, ``chinese-ogs``, ``chinese-kgs``, ``japanese``, ``korean``,
    ``stone-scoring``, ``aga``, ``bga``, ``new-zealand``, ``aga-button``; any case, ``_`` or space for ``-``),
    its short form (``koPOSITIONALscoreAREAtaxNONEsui1``) and its rules object (``ko``, ``scoring``, ``tax``,
    ``suicide``, ``hasButton``, ``whiteHandicapBonus``, ``friendlyPassOk``).  Territory scoring is not
    implemented: such rules get a warning (``TERRITORY_NOTE``) and every final response says which rules were
    used (``effective_rules``)."""
    if isinstance(value, str):
        key = "-".join(value.strip().lower().replace("_", " ").replace("-", " ").split())  # "new zealand" too
        key = RULE_ALIASES.get(key, key)
        short = RULES_TEXT.fullmatch(value.strip())
        if short is not None:
            ko_rule, scoring = KO_NAMES[short.group(1).upper()], short.group(2).upper()
            suicide = short.group(4) == "1"
            asked = f"rules {value.strip()!r}:"
        elif key in RULE_SETS:
            ko_rule, suicide = RULE_SETS[key]
            scoring = "TERRITORY" if key in TERRITORY_RULE_SETS else "AREA"
            asked = f"{key} rules:"
        else:
            raise RulesError(f"unknown rules {value!r} (one of {', '.join(RULE_SETS)}, KataGo's short form "
                               "such as koPOSITIONALscoreAREAtaxNONEsui1, or a rules object)")
    elif isinstance(value, dict):
        _check_rules_object(value)
        ko_rule = KO_NAMES[value.get("ko", "POSITIONAL").upper()]
        suicide = value.get("suicide", True)  # KataGo's default for an object: Tromp-Taylor-like
        scoring = value.get("scoring", value.get("score", "AREA")).upper()
        asked = "rules object:"
        unused = [f"{key} {value[key]}" for key, plain in (("hasButton", False), ("whiteHandicapBonus", "0"))
                  if key in value and value[key] != plain]
        if unused:
            warnings.append(("rules", f"not applied here: {', '.join(unused)} (see the response's 'rules')"))
    else:
        raise RulesError("'rules' must be a rule-set name or an object")
    if scoring == "TERRITORY":
        warnings.append(("rules", TERRITORY_NOTE.format(asked=asked)))
    if "SPIGHT" in str(value).upper():
        warnings.append(("rules", "SPIGHT ko is played as situational superko here"))
    return Rules(size=size, komi=float(komi), ko_rule=ko_rule, suicide=suicide)


def _check_rules_object(value: dict) -> None:
    """RulesError for an unknown key or value in a KataGo rules object."""
    for key, item in value.items():
        if key not in RULE_KEYS:
            raise RulesError(f"unknown key {key!r} in the rules object (one of {', '.join(RULE_KEYS)})")
        allowed = RULE_KEYS[key]
        if allowed is None:
            if not isinstance(item, bool):
                raise RulesError(f"rules {key!r} must be true or false")
        elif not isinstance(item, str) or item.upper() not in allowed:
            raise RulesError(f"rules {key!r} must be one of {', '.join(allowed)}, not {item!r}")


def effective_rules(rules: Rules) -> dict:
    """The rules a search scores by, as KataGo writes a rules object: area scoring, no tax, no button."""
    return {"ko": rules.ko_rule.upper(), "scoring": "AREA", "tax": "NONE", "suicide": bool(rules.suicide),
            "hasButton": False, "whiteHandicapBonus": "0", "friendlyPassOk": True}

