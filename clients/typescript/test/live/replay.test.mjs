// A retried proposal is replayed, not stored twice: a relay in front of the live Custodian loses
// the server's first answer (answering 503 instead), and the client's retry gets the replay.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { Custodian } from "custodian-client";

import { OWNER_CONTEXT, preference, RUN, URL_ } from "../helpers.mjs";

/** Forward each request to Custodian; swallow the first proposal answer. Record what went upstream. */
async function lossyRelay() {
  const upstream = [];
  const http = createServer(async (request, response) => {
    const chunks = [];
    for await (const chunk of request) chunks.push(chunk);
    const headers = { ...request.headers };
    delete headers.host;
    delete headers["content-length"];
    const answer = await fetch(URL_ + request.url, {
      method: request.method,
      headers,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    });
    const text = await answer.text();
    upstream.push({ url: request.url, key: request.headers["idempotency-key"], status: answer.status, replayed: answer.headers.get("Idempotent-Replayed"), text });
    if (request.url === "/api/v1/proposals/" && upstream.filter((u) => u.url === request.url).length === 1) {
      response.writeHead(503, { "Content-Type": "application/problem+json", "Retry-After": "0" });
      response.end(JSON.stringify({ code: "service_unavailable", detail: "the answer was lost" }));
      return;
    }
    response.writeHead(answer.status, { "Content-Type": answer.headers.get("Content-Type") ?? "application/json" });
    response.end(text);
  });
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${http.address().port}`, upstream, close: () => new Promise((r) => http.close(r)) };
}

test("a proposal whose answer was lost is replayed on retry, under the same key", async () => {
  const relay = await lossyRelay();
  try {
    const events = [];
    const custodian = new Custodian(relay.url, process.env.CUSTODIAN_TOKEN, { onRetry: (e) => events.push(e) });
    const said = await custodian.registerEvidence("conversation", `chat/${crypto.randomUUID()}`, { text: "Jazz." });
    const proposal = await custodian.propose("create", {
      memory: preference(`Alice listens to jazz (${RUN})`),
      evidence: [said],
      policyContext: OWNER_CONTEXT,
    });
    const sent = relay.upstream.filter((u) => u.url === "/api/v1/proposals/");
    assert.equal(sent.length, 2);
    assert.equal(sent[0].key, sent[1].key);
    assert.equal(sent[0].replayed, null);
    assert.equal(sent[1].replayed, "true");
    assert.equal(JSON.parse(sent[0].text).id, proposal.id, "the retry answered the proposal first stored");
    assert.deepEqual(events.map((e) => [e.status, e.path]), [[503, "/api/v1/proposals/"]]);
  } finally {
    await relay.close();
  }
});
