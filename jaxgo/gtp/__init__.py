"""``jaxgo gtp``: the Go Text Protocol front end, a thin adapter over ``jaxgo.search.player.Player``.

    protocol    framing, ``GtpError``, argument helpers, ``Dispatcher`` (registry name -> handler)
    session     ``GtpSession``: rules, game, Player, clock, log, quit flag, analysis stream and connection
    early       ``EarlyGame``: the first moves of a session, played without JAX while it loads
    warmup      the background thread that compiles ahead at start-up
    settings    search options and move budget as parameters, and their bounds (shared by the families)
    core        rules shell commands            play       genmove & co., handicap, clock, scoring, search info
    analysis    lz-/kata-analyze, *-genmove_analyze, jaxgo-pv_gfx
    territory   jaxgo-territory (CRF)           proof      attack / defend
    gogui       gogui-analyze_commands, gogui-interrupt          params   kata-list/get/set_param
    remote      KataGo queries for a game, ``RemoteSearch`` (the Player's search over ``jaxgo serve``)
    engine      composition: ``make_gtp_engine`` / ``make_remote_gtp_engine``
    loop        the stdin/stdout read loop: streamed analysis, interrupts, a clean end on quit / EOF / signals
    cli         ``jaxgo gtp`` options and ``main``
    bench       ``jaxgo bench gtp``: start-up and first-genmove latency

Building an engine and answering the first commands imports no JAX (handler families import the search, the
server and the board kernels inside their handlers), so a GUI gets its first answers at once.
"""
