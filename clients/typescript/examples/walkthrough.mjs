// The README's partner walkthrough with the generated JavaScript/TypeScript client.
//
//   BASE=http://127.0.0.1:8000 SK=sk_test_... WHSEC=whsec_test_... node examples/walkthrough.mjs
//
// Creates a referral (and retries it), retrieves and lists it, sees a validation error, then
// starts a webhook receiver on 127.0.0.1, registers it, has the sandbox send it a signed event
// and verifies the signature. The server must allow loopback webhook targets
// (REHABREF_ALLOW_LOOPBACK_WEBHOOK_TARGETS=true), as in the README's step 7.
import assert from "node:assert/strict";
import { createServer } from "node:http";

import {
  ApiError,
  RehabrefClient,
  WebhookVerificationError,
  newIdempotencyKey,
  verifyWebhook,
} from "../index.js";

/** @param {string} name */
function setting(name) {
  const value = process.env[name];
  if (!value) throw new Error(`set ${name}`);
  return value;
}

const client = new RehabrefClient(setting("BASE"), setting("SK"));
const secret = setting("WHSEC");

// 1. Create a referral (assistant route), with an idempotency key.
/** @type {import("../index.js").ReferralCreateV1} */
const referral = {
  external_ref: "CLINIC-2026-0001",
  patient: { first_name: "Amaka", phone: "+2348031234567", city: "Lagos" },
  reason: "Lower back pain after lifting; physiotherapy recommended",
  care_mode: "either",
  preferred_contact: "messaging",
  route: "assistant",
  consent: { accepted: true, accepted_at: "2026-01-15T09:30:00Z", version: "2026-01", source: "clinic_form" },
  metadata: { campaign: "back-care-week" },
};
const key = newIdempotencyKey();
const created = await client.createReferral(referral, { idempotencyKey: key, requestId: "walkthrough-1" });
console.log("created", created.referral_id, created.status);

// 2. Retry with the same key: the same referral, nothing new.
const again = await client.createReferral(referral, { idempotencyKey: key });
assert.equal(again.referral_id, created.referral_id);
console.log("retried", again.referral_id);

// 4. Retrieve it by id and by your own reference.
const record = await client.getReferral(created.referral_id);
const page = await client.listReferrals({ external_ref: "CLINIC-2026-0001" });
assert.deepEqual(page.data, [record]);
console.log("retrieved", record.referral_id, record.status);

// 5. List, page by page.
const first = await client.listReferrals({ limit: 1 });
console.log("listed", first.data.length, "has_more", first.has_more);

// 6. A validation error: every problem at once, with a stable code.
try {
  await client.createReferral(
    // @ts-expect-error: deliberately invalid, to see the error
    { ...referral, external_ref: "CLINIC-2026-0201", care_mode: "sometimes" },
    { idempotencyKey: newIdempotencyKey(), requestId: "walkthrough-invalid" },
  );
  throw new Error("the invalid referral was accepted");
} catch (error) {
  if (!(error instanceof ApiError)) throw error;
  assert.equal(error.status, 422);
  assert.equal(error.code, "validation_error");
  assert.equal(error.requestId, "walkthrough-invalid");
  console.log("refused", error.status, error.code, Object.keys(error.fields).sort().join(","));
}

// 7. Receive a signed webhook on this machine and verify it.
/** @type {(delivery: { raw: Buffer, headers: import("node:http").IncomingHttpHeaders }) => void} */
let deliver = () => {};
/** @type {Promise<{ raw: Buffer, headers: import("node:http").IncomingHttpHeaders }>} */
const delivered = new Promise((resolve) => { deliver = resolve; });
const receiver = createServer((request, response) => {
  /** @type {Buffer[]} */
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    deliver({ raw: Buffer.concat(chunks), headers: request.headers });
    response.writeHead(204).end();
  });
});
await new Promise((resolve) => receiver.listen(0, "127.0.0.1", () => resolve(undefined)));
const address = /** @type {import("node:net").AddressInfo} */ (receiver.address());
const url = `http://127.0.0.1:${address.port}/hooks/rehabref`;
const endpoint = await client.createWebhookEndpoint({ url }, { idempotencyKey: newIdempotencyKey() });
console.log("registered", endpoint.endpoint_id, endpoint.status);
const sent = await client.triggerSandboxWebhook({ event: "referral.created", target_url: url });
const timeout = setTimeout(() => { throw new Error("no delivery within 60 s"); }, 60_000);
const { raw, headers } = await delivered;
clearTimeout(timeout);
const event = verifyWebhook(raw, headers, secret);
assert.equal(event.event_id, sent.event_id);
assert.equal(event.type, "referral.created");
console.log("verified", event.type, event.event_id);
const tampered = Buffer.from(raw.toString("utf8").replace("referral", "REFERRAL"));
assert.throws(() => verifyWebhook(tampered, headers, secret), WebhookVerificationError);
console.log("tampered delivery refused");
receiver.close();
console.log("walkthrough ok");
