"""``jaxgo serve --http``: the JSON/SSE endpoints, and the page in headless Chromium with a screenshot check.

The browser test needs Debian's ``chromium`` + ``chromium-driver`` and the ``selenium`` package (skipped
otherwise).  Set JAXGO_WEB_SCREENSHOT=PATH to keep the screenshot (docs/figures/server_web.png is made so).
"""

import json
import os
import select
import shutil
import socket
import struct
import time
import urllib.parse
import urllib.request

import numpy as np
import pytest

from jaxgo.search.config import SearchConfig
from jaxgo.server import transports
from jaxgo.server.engine import AnalysisEngine
from jaxgo.server.engine_config import EngineConfig
from jaxgo.server.web import WebServer

TIMEOUT = 240
# A short 9x9 game written for these tests (Black builds the top, White the bottom).
GAME = (b"(;GM[1]FF[4]SZ[9]KM[7.5]PB[black]PW[white];B[ee];W[ec];B[dc];W[ed];B[cd];W[fe];B[ef];W[ff];B[eg]"
        b";W[fg];B[fh];W[gh];B[eh];W[dd];B[ce];W[de])")


@pytest.fixture(scope="module")
def web():
    search = SearchConfig(playout_policy="light", bias_c2=0.0, leaves_per_batch=8)
    engine = AnalysisEngine(EngineConfig(search=search, max_boards=256, buckets=(256,))).start()
    server = WebServer(engine, 0)
    transports.start_in_thread(server)
    yield {"url": f"http://127.0.0.1:{server.server_address[1]}", "engine": engine, "server": server}
    server.shutdown()
    server.server_close()
    assert server.open_connections() == 0
    assert engine.stop(wait=False, timeout=30)


@pytest.fixture(scope="module")
def base_url(web):
    return web["url"]


def fetch(url, data=None):
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=TIMEOUT) as reply:
        return reply.status, reply.read()


def test_page_sgf_and_stream_endpoints(base_url):
    status, page = fetch(base_url + "/")
    assert status == 200 and b"jaxgo analysis board" in page and b"board.js" in page
    status, fields = fetch(base_url + "/api/sgf", GAME)
    fields = json.loads(fields)
    assert fields["size"] == 9 and fields["moves"][:2] == [["B", "E5"], ["W", "E7"]] and len(fields["moves"]) == 16
    with pytest.raises(urllib.error.HTTPError) as info:
        fetch(base_url + "/api/sgf", b"(;GM[1]SZ[9];B[zz")
    assert info.value.code == 400
    query = {"id": "web", "moves": fields["moves"][:3], "rules": "chinese", "boardXSize": 9, "boardYSize": 9,
             "maxVisits": 32, "includeOwnership": True}
    status, body = fetch(base_url + "/api/stream?q=" + urllib.parse.quote(json.dumps(query)))
    events = [json.loads(line[6:]) for line in body.decode().splitlines() if line.startswith("data: ")]
    assert events[-1] == {} and events[0]["id"] == "web" and len(events[0]["ownership"]) == 81
    status, body = fetch(base_url + "/api/stream?q=" + urllib.parse.quote("{broken"))
    assert b'"error"' in body
    status, body = fetch(base_url + "/api/query", json.dumps(dict(query, id="post")).encode())
    assert json.loads(body)[0]["id"] == "post"


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_web_board_in_headless_chromium(base_url, tmp_path):
    webdriver = pytest.importorskip("selenium.webdriver")
    browser = find_chromium()
    driver_path = shutil.which("chromedriver")
    if browser is None or driver_path is None:
        pytest.skip("chromium / chromedriver not installed (apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1100,900"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.get(base_url + "/")
        driver.execute_script("jaxgo.newBoard(9); return 0;")
        # Load the game through the page's SGF path, then step back to move 6.
        driver.execute_script("const f = new File([arguments[0]], 'game.sgf'); jaxgo.loadSgf(f);", GAME.decode())
        wait_for(driver, "return jaxgo.state.moves.length === 16")
        driver.execute_script("jaxgo.goTo(12);")
        # A real click on the board: point C2 (column 2, row 7 from the top) for Black.
        canvas = driver.find_element(By.ID, "board")
        step = canvas.size["width"] / 10
        offset = (int(step * 3 - canvas.size["width"] / 2), int(step * 8 - canvas.size["height"] / 2))
        ActionChains(driver).move_to_element_with_offset(canvas, *offset).click().perform()
        assert driver.execute_script("return jaxgo.state.moves.length") == 13
        assert driver.execute_script("return jaxgo.state.moves[12]") == ["B", "C2"]
        driver.find_element(By.ID, "visits").clear()
        driver.find_element(By.ID, "visits").send_keys("256")
        driver.find_element(By.ID, "analyze").click()
        wait_for(driver, "return document.getElementById('status').textContent === 'done'")
        assert "%" in driver.find_element(By.ID, "winrate").text
        assert len(driver.find_elements(By.CSS_SELECTOR, "#moves li")) > 0
        assert driver.execute_script("return jaxgo.state.analysis.ownership.length") == 81
        driver.find_element(By.ID, "graphvisits").clear()
        driver.find_element(By.ID, "graphvisits").send_keys("32")
        driver.find_element(By.ID, "graph").click()
        wait_for(driver, "return Object.keys(jaxgo.state.graph).length === 14")
        time.sleep(0.3)
        plain = str(tmp_path / "no_ownership.png")
        driver.find_element(By.ID, "showown").click()  # heatmap off, for comparison
        assert driver.save_screenshot(plain)
        driver.find_element(By.ID, "showown").click()
        time.sleep(0.2)
        path = os.environ.get("JAXGO_WEB_SCREENSHOT") or str(tmp_path / "server_web.png")
        assert driver.save_screenshot(path)
    finally:
        driver.quit()
    check_screenshot(path, plain)


def chromium_driver():
    webdriver = pytest.importorskip("selenium.webdriver")
    browser = find_chromium()
    driver_path = shutil.which("chromedriver")
    if browser is None or driver_path is None:
        pytest.skip("chromium / chromedriver not installed (apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1100,900"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(driver_path), options=options)


def test_web_board_drops_old_analysis_plays_engine_moves_and_names_the_win_rate(base_url):
    """Issue 47: after a board-size change the old analysis stayed (and a stream still running for the old
    position kept drawing on the new one); the engine could not be asked for a move; the candidates' win rate
    did not say whose it was."""
    from selenium.webdriver.common.by import By

    driver = chromium_driver()
    try:
        driver.get(base_url + "/")
        driver.execute_script("jaxgo.newBoard(9); return 0;")
        driver.find_element(By.ID, "visits").clear()
        driver.find_element(By.ID, "visits").send_keys("64")
        driver.find_element(By.ID, "analyze").click()
        wait_for(driver, "return document.getElementById('status').textContent === 'done'")
        assert len(driver.find_elements(By.CSS_SELECTOR, "#moves li")) > 0
        driver.execute_script("jaxgo.newBoard(5); return 0;")
        assert driver.find_element(By.ID, "status").text == "no analysis of this position (Analyze)"  # not "done"
        assert driver.find_element(By.ID, "winrate").text == "Black win rate: -"
        assert driver.find_elements(By.CSS_SELECTOR, "#moves li") == []
        assert driver.execute_script("return jaxgo.state.analysis") is None
        assert "Black's win rate" in driver.find_element(By.ID, "movesheader").text
        driver.find_element(By.ID, "enginemove").click()
        wait_for(driver, "return jaxgo.state.moves.length === 1")
        colour, move = driver.execute_script("return jaxgo.state.moves[0]")
        assert colour == "B" and (move == "pass" or (move[0] in "ABCDE" and move[1:] in "12345"))
        assert driver.find_element(By.ID, "status").text == f"engine played B {move}"
    finally:
        driver.quit()


def wait_for(driver, script, timeout=TIMEOUT):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if driver.execute_script(script):
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for: {script}")


def check_screenshot(path, plain_path):
    """The board (wood colour), stones (near black / near white), the ownership shading (the board differs from
    the same page with the heatmap off) and the win-rate curve are visible."""
    import matplotlib.image

    image = matplotlib.image.imread(path)[..., :3]
    plain = matplotlib.image.imread(plain_path)[..., :3]
    assert image.shape[0] >= 700 and image.shape[1] >= 900
    board, plain_board = image[60:600, 10:580], plain[60:600, 10:580]
    wood = np.all(np.abs(plain_board - np.array([0xDC, 0xB3, 0x5C]) / 255) < 0.06, axis=-1).mean()
    black = np.all(board < 0.12, axis=-1).mean()
    white = np.all(board > 0.94, axis=-1).mean()
    shaded = (np.abs(board - plain_board).max(axis=-1) > 0.04).mean()
    assert wood > 0.4, "board not drawn"
    assert black > 0.01 and white > 0.01, "stones not drawn"
    assert shaded > 0.2, "no ownership shading"
    graph = image[:, 600:]
    assert np.any(np.all(np.abs(graph - np.array([0x33, 0x66, 0xCC]) / 255) < 0.08, axis=-1)), "no win-rate graph"


def open_stream(url, query):
    """A raw socket with the request of an /api/stream for ``query`` sent and the headers read."""
    host, port = url[len("http://"):].split(":")
    sock = socket.create_connection((host, int(port)), timeout=TIMEOUT)
    path = "/api/stream?q=" + urllib.parse.quote(json.dumps(query))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    reader = sock.makefile("rb")
    while reader.readline() not in (b"\r\n", b""):
        pass
    return sock, reader


def wait_until_gone(engine, ident, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline and any(t.query.id == ident for t in list(engine._active)):
        time.sleep(0.05)
    return not any(t.query.id == ident for t in list(engine._active))


def test_dropped_streams_cancel_their_queries_without_tracebacks(web, capfd):
    # Six pages that leave: three after the first report (the browser closes the EventSource), three before
    # any (a long search without reports: only the socket watch can notice).  Each query would run for
    # 10,000,000 playouts; all are dropped, and the server prints no BrokenPipeError traceback.
    for k in range(6):
        query = {"id": f"drop{k}", "moves": [["B", "E5"]], "rules": "chinese", "boardXSize": 9, "boardYSize": 9,
                 "maxVisits": 10_000_000}
        if k < 3:
            query["reportDuringSearchEvery"] = 0.1
        sock, reader = open_stream(web["url"], query)
        if k < 3:
            line = reader.readline()
            while line in (b": keepalive\n", b"\n"):  # SSE comments while the search starts
                line = reader.readline()
            assert line.startswith(b"data: ")
        else:
            deadline = time.time() + TIMEOUT
            while not any(t.query.id == query["id"] and t.started for t in list(web["engine"]._active)):
                assert time.time() < deadline
                time.sleep(0.05)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset, as a killed tab
        reader.close()
        sock.close()
        assert wait_until_gone(web["engine"], query["id"]), f"query drop{k} still searching"
    time.sleep(0.5)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipeError" not in err


# -- issue 61: the listener under hostile clients (no engine needed: these requests never reach it) -----------
class NoEngine:
    """Stands in for the engine behind routes that never submit a query."""

    def client_closed(self, client) -> None:
        pass


@pytest.fixture
def listener():
    servers = []

    def start(**limits):
        server = WebServer(NoEngine(), 0, limits=transports.ConnectionLimits(**limits))
        transports.start_in_thread(server)
        servers.append(server)
        return ("127.0.0.1", server.server_address[1]), server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def http_request(address, raw: bytes, timeout: float = 30.0) -> bytes:
    with socket.create_connection(address, timeout=timeout) as sock:
        sock.sendall(raw)
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    return reply


def post(path: str, body: bytes) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"
            .encode("ascii") + body)


def test_sgf_upload_of_4_mib_of_empty_nodes_is_refused_naming_the_cap(listener):
    """4 MiB of empty nodes cost 30-40 s of CPU and about 1 GB kept; now refused before parsing."""
    from jaxgo.go.sgf import MAX_SGF_MOVES, MAX_SGF_NODES

    address, _ = listener()
    reply = http_request(address, post("/api/sgf", b"(;" + b";" * ((4 << 20) - 3) + b")"))
    assert reply.startswith(b"HTTP/1.1 400") and f"at most {MAX_SGF_NODES} nodes".encode() in reply, reply[:300]
    reply = http_request(address, post("/api/sgf", b"(;SZ[9]" + b";B[];W[]" * MAX_SGF_MOVES + b")"))
    assert reply.startswith(b"HTTP/1.1 400") and f"at most {MAX_SGF_MOVES} moves".encode() in reply, reply[:300]
    reply = http_request(address, post("/api/sgf", GAME))
    assert reply.startswith(b"HTTP/1.1 200") and b'"size": 9' in reply


def test_a_request_trickled_one_header_a_second_is_cut_at_the_request_deadline(listener):
    """Slowloris: the stall timeout applied per read, so one header line a second stayed connected forever."""
    address, server = listener(stall_seconds=1.0)
    with socket.create_connection(address, timeout=30) as sock:
        sock.sendall(b"GET /api/version HTTP/1.1\r\nHost: x\r\n")
        closed = False
        for k in range(40):  # 40 header lines, 0.25 s apart: ten times the deadline
            readable, _, _ = select.select([sock], [], [], 0.25)
            if readable and sock.recv(1) == b"":
                closed = True
                break
            try:
                sock.sendall(f"X-Slow-{k}: 1\r\n".encode("ascii"))
            except OSError:
                closed = True
                break
    assert closed, "the trickled request kept its connection"
    assert http_request(address, b"GET /api/version HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") \
        .startswith(b"HTTP/1.1 200")


def test_a_connection_beyond_the_cap_gets_an_http_503_with_a_body(listener):
    """The refusal was a bare JSON line (clients saw BadStatusLine)."""
    address, server = listener(max_connections=1, stall_seconds=10.0)
    with socket.create_connection(address, timeout=30) as held:
        held.sendall(b"GET /api/version HTTP/1.1\r\nHost: x\r\n")  # holds the only slot
        deadline = time.monotonic() + 30
        while server.open_connections() < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(f"http://{address[0]}:{address[1]}/api/version", timeout=30)
        assert info.value.code == 503 and "server busy" in json.loads(info.value.read())["error"]


def test_favicon_is_204(listener):
    address, _ = listener()
    reply = http_request(address, b"GET /favicon.ico HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 204")
