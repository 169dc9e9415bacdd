// Custodian as Vercel AI SDK tools: remember, recall, forget, each a governed call as one agent.
// Here the tools are executed as the AI SDK executes a model's tool calls; in an application pass
// them to generateText / streamText: `await generateText({ model, tools, prompt })`.
// CUSTODIAN_URL and CUSTODIAN_TOKEN (an agent token) come from the environment.
import { Custodian } from "custodian-client";
import { custodianTools } from "custodian-client/ai";

const custodian = new Custodian(process.env.CUSTODIAN_URL ?? "http://127.0.0.1:8000", process.env.CUSTODIAN_TOKEN);
const tools = custodianTools(custodian, { about: "user:pm-alice" }); // whom memories are about by default
const run = crypto.randomUUID().slice(0, 8);
const options = (name) => ({ toolCallId: `${name}-${run}`, messages: [] });

// Every key is required (strict mode); null takes the default.
const remembered = await tools.remember.execute(
  {
    statement: `Alice prefers charts over tables (${run})`,
    about: null,
    memory_type: null,
    scope: null,
    evidence_text: "Alice: charts, please, not tables.",
    evidence_kind: null,
    dedupe_key: null,
    risk_level: null,
  },
  options("remember"),
);
console.log(`remember: ${remembered.message}`);

const recalled = await tools.recall.execute({ query: `charts ${run}`, limit: 3, include_inactive: null }, options("recall"));
console.log(`recall: ${recalled.items[0]?.text}`);

const forgotten = await tools.forget.execute(
  { memory_id: remembered.memory_id, reason: "Alice changed her mind", how: "expire", risk_level: null },
  options("forget"),
);
console.log(`forget: ${forgotten.message}`);
