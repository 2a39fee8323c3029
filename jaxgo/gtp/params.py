"""``kata-list_params``, ``kata-get_param KEY``, ``kata-set_param KEY VALUE``: the search options and the move
budget under KataGo's command names (keys and checks: ``jaxgo.gtp.settings``)."""

from __future__ import annotations

from jaxgo.gtp.protocol import require_count
from jaxgo.gtp.settings import get_param, param_names, set_param


def list_params(session, args):
    require_count(args, 0)
    return " ".join(param_names(session))


def kata_get_param(session, args):
    require_count(args, 1)
    return get_param(session, args[0])


def kata_set_param(session, args):
    require_count(args, 2)
    set_param(session, args[0], args[1])
    return ""


COMMANDS = {
    "kata-list_params": list_params,
    "kata-get_param": kata_get_param,
    "kata-set_param": kata_set_param,
}
