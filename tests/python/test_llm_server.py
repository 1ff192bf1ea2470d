# tinygrad-llm --serve (src/tg/llm/server.cpp) with real clients: Python's http.client, curl and the official openai
# npm package. Checked: the routes and their OpenAI shapes, streamed text equal to the unstreamed text and to the
# program's own completion, errors as 400/404 with a message, a client that goes mid-stream stopping its generation,
# and 64 concurrent clients each answered (or refused with 503 when the queue is full), none lost.
# The server runs on CPU, so the per-device runs of this folder skip it.
import http.client, json, os, re, shutil, socket, subprocess, sys, threading, time
from pathlib import Path
import pytest
import tinygrad
from conftest import ON_CPU, dies_with_us, write_tiny_llama

PROGRAM = Path(tinygrad.__file__).resolve().parents[2] / "tinygrad-llm"  # build/python/tinygrad -> build
pytestmark = [pytest.mark.skipif(not ON_CPU, reason="the server runs once, on CPU"),
              pytest.mark.skipif(not PROGRAM.exists(), reason=f"{PROGRAM} is not built")]

class Server:
  def __init__(self, model, *args):
    self.proc = subprocess.Popen([str(PROGRAM), "--model", str(model), "--serve", "--port", "0", *args],
                                 stderr=subprocess.PIPE, text=True, env=dict(os.environ, DEV="CPU"),
                                 preexec_fn=dies_with_us())
    self.log = []
    line = self.proc.stderr.readline()  # "tinygrad-llm: serving on http://127.0.0.1:PORT ..."
    m = re.search(r"serving on http://([\d.]+):(\d+)", line)
    assert m, line + self.proc.stderr.read()
    self.host, self.port = m.group(1), int(m.group(2))
    threading.Thread(target=lambda: self.log.extend(iter(self.proc.stderr.readline, "")), daemon=True).start()
  def request(self, method, path, body=None, raw=None, timeout=60):
    c = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
    data = raw if raw is not None else (json.dumps(body) if body is not None else None)
    c.request(method, path, body=data, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    out = r.status, r.getheader("Content-Type"), r.read().decode()
    c.close()
    return out
  def json(self, method, path, body=None, **kw):
    status, _, text = self.request(method, path, body, **kw)
    return status, json.loads(text)
  def stop(self):
    self.proc.terminate()
    assert self.proc.wait(timeout=30) == 0

@pytest.fixture(scope="module")
def model(tmp_path_factory):
  p = tmp_path_factory.mktemp("llm_server") / "tiny.gguf"
  write_tiny_llama(p, context=512)
  return p

@pytest.fixture(scope="module")
def server(model):
  s = Server(model)
  yield s
  s.stop()

def sse_events(text):
  lines = [l[len("data: "):] for l in text.split("\n") if l.startswith("data: ")]
  assert lines[-1] == "[DONE]", text
  return [json.loads(l) for l in lines[:-1]]

def program_completion(model, prompt, n):
  r = subprocess.run([str(PROGRAM), "--model", str(model), "--prompt", prompt, "-n", str(n), "--json"],
                     capture_output=True, text=True, check=True, env=dict(os.environ, DEV="CPU"))
  return json.loads(r.stdout)

def test_health_and_models(server):
  assert server.json("GET", "/health") == (200, {"status": "ok"})
  status, body = server.json("GET", "/v1/models")
  assert status == 200 and body["object"] == "list" and [m["id"] for m in body["data"]] == ["tiny"]
  assert body["data"][0]["meta"]["n_ctx"] == 512

def test_completion_is_the_programs(server, model):
  status, body = server.json("POST", "/v1/completions", {"model": "tiny", "prompt": "hi", "max_tokens": 6, "temperature": 0})
  assert status == 200 and body["object"] == "text_completion", body
  want = program_completion(model, "hi", 6)
  assert body["choices"][0]["text"] == want["text"]
  assert body["usage"] == {"prompt_tokens": len(want["prompt_tokens"]), "completion_tokens": len(want["tokens"]),
                           "total_tokens": len(want["prompt_tokens"]) + len(want["tokens"])}
  assert body["choices"][0]["finish_reason"] in ("stop", "length")
  # token ids as the prompt: the same
  status, by_ids = server.json("POST", "/v1/completions", {"prompt": want["prompt_tokens"], "max_tokens": 6, "temperature": 0})
  assert status == 200 and by_ids["choices"][0]["text"] == want["text"]

def test_chat_streamed_equals_unstreamed(server):
  req = {"model": "tiny", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hello"}],
         "max_tokens": 12, "temperature": 0}
  status, body = server.json("POST", "/v1/chat/completions", req)
  assert status == 200 and body["object"] == "chat.completion", body
  msg = body["choices"][0]["message"]
  assert msg["role"] == "assistant" and isinstance(msg["content"], str)
  status, ctype, text = server.request("POST", "/v1/chat/completions", {**req, "stream": True, "stream_options": {"include_usage": True}})
  assert status == 200 and ctype.startswith("text/event-stream")
  events = sse_events(text)
  assert all(e["object"] == "chat.completion.chunk" and e["id"] == events[0]["id"] for e in events)
  assert events[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
  content = "".join(e["choices"][0]["delta"].get("content", "") for e in events if e["choices"])
  assert content == msg["content"]
  finishes = [e["choices"][0]["finish_reason"] for e in events if e["choices"] and e["choices"][0]["finish_reason"]]
  assert finishes == [body["choices"][0]["finish_reason"]]
  assert events[-1]["choices"] == [] and events[-1]["usage"] == body["usage"]
  # the streamed completion: the same text as the unstreamed one
  status, _, text = server.request("POST", "/v1/completions", {"prompt": "hi", "max_tokens": 6, "temperature": 0, "stream": True})
  _, plain = server.json("POST", "/v1/completions", {"prompt": "hi", "max_tokens": 6, "temperature": 0})
  assert "".join(e["choices"][0]["text"] for e in sse_events(text)) == plain["choices"][0]["text"]

def test_stop_strings_and_seeds(server):
  base = {"prompt": "hi", "max_tokens": 24, "temperature": 1.0, "seed": 11}
  _, a = server.json("POST", "/v1/completions", base)
  _, b = server.json("POST", "/v1/completions", base)
  assert a["choices"][0]["text"] == b["choices"][0]["text"]  # a seed repeats
  text = a["choices"][0]["text"]
  stop = text[len(text) // 2:len(text) // 2 + 2]
  _, c = server.json("POST", "/v1/completions", {**base, "stop": [stop]})
  assert c["choices"][0]["text"] == text[:text.index(stop)] and c["choices"][0]["finish_reason"] == "stop"

def test_curl(server):
  curl = shutil.which("curl")
  if curl is None: pytest.skip("curl is not installed")
  url = f"http://{server.host}:{server.port}/v1/chat/completions"
  req = json.dumps({"model": "tiny", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 5, "temperature": 0})
  out = subprocess.run([curl, "-sS", "-H", "Content-Type: application/json", "-d", req, url], capture_output=True, text=True, check=True)
  body = json.loads(out.stdout)
  assert body["choices"][0]["message"]["role"] == "assistant"
  streamed = subprocess.run([curl, "-sSN", "-H", "Content-Type: application/json", "-d", req[:-1] + ', "stream": true}', url],
                            capture_output=True, text=True, check=True)
  events = sse_events(streamed.stdout)
  assert "".join(e["choices"][0]["delta"].get("content", "") for e in events) == body["choices"][0]["message"]["content"]
  bad = subprocess.run([curl, "-s", "-o", "/dev/null", "-w", "%{http_code}", "-d", "{not json", url], capture_output=True, text=True)
  assert bad.stdout == "400"

def test_openai_npm_client(server):
  root = Path(__file__).resolve().parents[2]
  if shutil.which("node") is None or not (root / "tests/llm/node_modules/openai").exists():
    pytest.skip("node or the openai npm package (tools/setup.sh) is missing")
  out = subprocess.run(["node", str(root / "tests/llm/openai_client.mjs"), f"http://{server.host}:{server.port}/v1", "tiny"],
                       capture_output=True, text=True, timeout=120)
  assert out.returncode == 0, out.stderr
  r = json.loads(out.stdout)
  assert r["models"] == ["tiny"]
  assert r["streamed"] == r["chat"] and r["finish"] == r["chat_finish"] and r["usage"] == r["chat_usage"]
  _, direct = server.json("POST", "/v1/completions", {"prompt": "hi", "max_tokens": 5, "temperature": 0})
  assert r["completion"] == direct["choices"][0]["text"]
  assert r["notFound"]["status"] == 404 and "no-such-model" in r["notFound"]["message"]

@pytest.mark.parametrize("body,status,words", [
  ("{not json", 400, ["not JSON"]),
  ('[1, 2]', 400, ["body", "object"]),
  ({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"}, 400, ["temperature", "number", "string"]),
  ({"messages": [{"role": "user", "content": "x"}], "max_tokens": -1}, 400, ["max_tokens"]),
  ({"messages": [{"role": "user", "content": "x"}], "stream": 1}, 400, ["stream", "boolean"]),
  ({"messages": [{"role": "wizard", "content": "x"}]}, 400, ["wizard"]),
  ({"messages": "hello"}, 400, ["messages"]),
  ({}, 400, ["messages", "missing"]),
  ({"model": "gpt-4", "messages": [{"role": "user", "content": "x"}]}, 404, ["gpt-4", "tiny"]),
  ({"messages": [{"role": "user", "content": "word " * 600}]}, 400, ["context of 512"]),
  ({"messages": [{"role": "user", "content": "x"}], "n": 2}, 400, ["'n'"]),
])
def test_bad_requests(server, body, status, words):
  got, _, text = server.request("POST", "/v1/chat/completions", raw=body if isinstance(body, str) else json.dumps(body))
  assert got == status, text
  err = json.loads(text)["error"]
  assert all(w in err["message"] for w in words), err
  if "context" in words[0]: assert err["code"] == "context_length_exceeded"

def test_unknown_route_is_404(server):
  status, body = server.json("GET", "/v2/nothing")
  assert status == 404 and "/v2/nothing" in body["error"]["message"]

def test_a_client_that_goes_stops_its_generation(server):
  s = socket.create_connection((server.host, server.port))
  req = json.dumps({"prompt": "hi", "max_tokens": 400, "temperature": 1.0, "stream": True})
  s.sendall(f"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {len(req)}\r\n\r\n{req}".encode())
  s.settimeout(60)
  got = b""
  while b"data: " not in got:  # the headers, then the first event
    chunk = s.recv(4096)
    assert chunk, got  # the server closed before its first event
    got += chunk
  s.close()
  for _ in range(100):  # the server notices at its next writes
    if any("the client went" in l for l in server.log): break
    time.sleep(0.1)
  went = [l for l in server.log if "the client went" in l]
  assert went, server.log
  assert int(re.search(r"after (\d+) tokens", went[-1]).group(1)) < 400
  assert server.json("GET", "/health")[0] == 200  # and it goes on serving

def concurrent(server, n, body):
  results = [None] * n
  def one(i):
    try: results[i] = server.json("POST", "/v1/completions", body, timeout=300)
    except Exception as e: results[i] = (None, repr(e))
  threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
  for t in threads: t.start()
  for t in threads: t.join()
  return results

def test_64_concurrent_clients_are_all_answered(server):
  results = concurrent(server, 64, {"prompt": "hi", "max_tokens": 3, "temperature": 0})
  assert all(status == 200 for status, _ in results), [r for r in results if r[0] != 200][:3]
  assert len({body["choices"][0]["text"] for _, body in results}) == 1  # greedy: one answer, whoever came first

def test_a_full_queue_answers_503(model):
  s = Server(model, "--max-queue", "2")
  try:
    results = concurrent(s, 16, {"prompt": "hi", "max_tokens": 40, "temperature": 0})
  finally:
    s.stop()
  statuses = [status for status, _ in results]
  assert set(statuses) <= {200, 503} and statuses.count(200) >= 3 and statuses.count(503) >= 1, statuses
  assert all("busy" in body["error"]["message"] for status, body in results if status == 503)
