"""``jaxgo gtp``: the Go Text Protocol front end, a thin adapter over ``jaxgo.search.player.Player``.

    protocol    framing, ``GtpError``, argument helpers, ``Dispatcher`` (registry name -> handler)
    session     ``GtpSession``: rules, game, Player, log, quit flag, analysis stream and connection
    core        rules shell commands            play       genmove & co., handicap, clock, scoring, search info
    analysis    lz-/kata-analyze, *-genmove_analyze, jaxgo-pv_gfx
    territory   jaxgo-territory (CRF)           proof      attack / defend      gogui   gogui-analyze_commands
    remote      KataGo queries for a game, ``RemoteSearch`` (the Player's search over ``jaxgo serve``)
    engine      composition: ``make_gtp_engine`` / ``make_remote_gtp_engine``
    loop        the stdin/stdout read loop with streamed analysis
    cli         ``jaxgo gtp`` options and ``main``
"""
