// Retries against a small real HTTP server (node:http) that answers what each test needs.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { Custodian, parseRetryAfter, ServiceUnavailable, Throttled } from "custodian-client";

/** Start a server whose n-th request gets `answers[n]` (the last one repeats); return it and its URL. */
async function server(answers) {
  const seen = [];
  const http = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      seen.push({ method: request.method, url: request.url, headers: request.headers, body });
      const [status, headers, json] = answers[Math.min(seen.length - 1, answers.length - 1)];
      response.writeHead(status, { "Content-Type": "application/json", ...headers });
      response.end(json === undefined ? "" : JSON.stringify(json));
    });
  });
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${http.address().port}`;
  return { url, seen, close: () => new Promise((resolve) => http.close(resolve)) };
}

function client(url, options = {}) {
  const slept = [];
  const events = [];
  const custodian = new Custodian(url, "tok", {
    sleep: async (seconds) => void slept.push(seconds),
    onRetry: (event) => events.push(event),
    ...options,
  });
  return { custodian, slept, events };
}

const unavailable = (retryAfter) => [503, retryAfter === undefined ? {} : { "Retry-After": retryAfter }, { code: "service_unavailable", detail: "db down" }];

test("a 503 with Retry-After is waited out, then the answer is returned", async () => {
  const http = await server([unavailable("2"), [200, {}, { results: [], next: null }]]);
  try {
    const { custodian, slept, events } = client(http.url);
    assert.deepEqual(await custodian.receipts(), []);
    assert.equal(http.seen.length, 2);
    assert.deepEqual(slept, [2]);
    assert.deepEqual(events.map((e) => [e.status, e.attempt, e.retryAfter]), [[503, 1, 2]]);
    assert.equal(http.seen[1].headers.authorization, "Bearer tok");
  } finally {
    await http.close();
  }
});

test("a proposal's retries all carry the key its first attempt had", async () => {
  const http = await server([unavailable("0"), [429, { "Retry-After": "0" }, { code: "throttled" }], [201, {}, { id: "p1" }]]);
  try {
    const { custodian } = client(http.url);
    assert.equal((await custodian.propose("expire", { memoryId: "m1", baseRevision: 1, reason: "r" })).id, "p1");
    const keys = http.seen.map((request) => request.headers["idempotency-key"]);
    assert.equal(keys.length, 3);
    assert.match(keys[0], /^cc-[0-9a-f-]{36}$/);
    assert.deepEqual(new Set(keys).size, 1);
    assert.deepEqual(JSON.parse(http.seen[2].body), { action: "expire", memory_id: "m1", base_revision: 1, reason: "r" });
  } finally {
    await http.close();
  }
});

test("without Retry-After the client backs off exponentially, then throws after maxRetries", async () => {
  const http = await server([unavailable()]);
  try {
    const { custodian, slept } = client(http.url);
    await assert.rejects(custodian.receipts(), (error) => {
      assert.ok(error instanceof ServiceUnavailable);
      assert.equal(error.status, 503);
      return true;
    });
    assert.deepEqual(slept, [0.5, 1, 2, 4]);
    assert.equal(http.seen.length, 5);
  } finally {
    await http.close();
  }
});

test("a Retry-After beyond maxDelay is not slept: the typed error comes at once, saying it", async () => {
  const http = await server([[429, { "Retry-After": "120" }, { code: "throttled", detail: "slow down" }]]);
  try {
    const { custodian, slept } = client(http.url);
    await assert.rejects(custodian.recall("q"), (error) => {
      assert.ok(error instanceof Throttled);
      assert.equal(error.retryAfter, 120);
      return true;
    });
    assert.deepEqual(slept, []);
    assert.equal(http.seen.length, 1);
  } finally {
    await http.close();
  }
});

test("a lost connection is retried for reads and proposals, never for other writes", async () => {
  const http = await server([[200, {}, {}]]);
  const url = http.url;
  await http.close(); // nothing listens there any more
  const { custodian, slept } = client(url, { retry: { maxRetries: 2 } });
  await assert.rejects(custodian.registerEvidence("document", "d/1", {}), (error) => {
    assert.ok(error instanceof ServiceUnavailable);
    assert.equal(error.status, 0);
    assert.equal(error.code, "connection_failed");
    return true;
  });
  assert.deepEqual(slept, []);
  await assert.rejects(custodian.getEvidence("e1"), ServiceUnavailable);
  assert.deepEqual(slept, [0.5, 1]);
});

test("Retry-After is read as seconds or as an HTTP date", () => {
  const now = Date.parse("Tue, 01 Dec 2026 12:00:00 GMT");
  assert.equal(parseRetryAfter("3", now), 3);
  assert.equal(parseRetryAfter("Tue, 01 Dec 2026 12:00:10 GMT", now), 10);
  assert.equal(parseRetryAfter("Tue, 01 Dec 2026 11:00:00 GMT", now), 0);
  assert.equal(parseRetryAfter("soon", now), null);
  assert.equal(parseRetryAfter(null, now), null);
});

test("a next link naming another host is followed on the client's own base URL", async () => {
  const http = await server([
    [200, {}, { results: [{ id: "a" }], next: "http://elsewhere.example/base/api/v1/proposals/?cursor=xyz" }],
    [200, {}, { results: [{ id: "b" }], next: null }],
  ]);
  try {
    const { custodian } = client(`${http.url}/base/`);
    const ids = [];
    for await (const proposal of custodian.proposals({ status: "applied" })) ids.push(proposal.id);
    assert.deepEqual(ids, ["a", "b"]);
    assert.deepEqual(http.seen.map((r) => r.url), ["/base/api/v1/proposals/?status=applied", "/base/api/v1/proposals/?cursor=xyz"]);
  } finally {
    await http.close();
  }
});
