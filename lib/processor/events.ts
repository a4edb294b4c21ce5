/**
 * Inbound processor events on the Stripe adapter: the signature checked Stripe's way with the SDK's own
 * verifier, then the event read into the service's terms ({@link ProcessorEvent}), so no Stripe type reaches a
 * use case. Pure apart from the clock the verifier reads.
 *
 * Order: header present -> webhook secret configured -> signature over the exact raw body (and its timestamp
 * within {@link SIGNATURE_TOLERANCE_SECONDS}) -> JSON -> an event object -> its mapping. Nothing unverified is
 * parsed, so an unsigned body can never tell the service anything, not even that it is malformed.
 */
import Stripe from 'stripe';
import { errors } from '../domain/errors';
import { isObject, nonEmptyString, toProcessorEvent } from './event-objects';
import type { ProcessorEvent } from '../use-cases/ports/processor';

export { toProcessorEvent };

/** How old a signature's timestamp may be (Stripe's default): a captured event cannot be replayed later. */
const SIGNATURE_TOLERANCE_SECONDS = 300;

/**
 * Verifies `rawBody` against `signatureHeader` (`t=<unix seconds>,v1=<hex HMAC-SHA256>`) with `webhookSecret`,
 * and reads the event. See the port (`Processor.verifyEvent`) for the errors.
 */
export function verifyStripeEvent(
  rawBody: string,
  signatureHeader: string | undefined,
  webhookSecret: string | undefined,
  nowMs: number = Date.now(),
): ProcessorEvent {
  if (signatureHeader === undefined || signatureHeader.trim() === '') throw errors.processorSignatureMissing();
  if (webhookSecret === undefined) throw errors.processorWebhookSecretMissing();
  verifySignature(rawBody, signatureHeader, webhookSecret, nowMs);
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    throw errors.invalidWebhookJson();
  }
  // A thin (v2) event notification is not an event the service reads: what the SDK's constructEvent refuses too.
  if (isObject(parsed) && parsed.object === 'v2.core.event') throw errors.invalidWebhookJson();
  if (!isObject(parsed) || nonEmptyString(parsed.id) === undefined || nonEmptyString(parsed.type) === undefined) {
    throw errors.invalidWebhookJson();
  }
  return toProcessorEvent(parsed.id as string, parsed.type as string, isObject(parsed.data) ? parsed.data.object : undefined);
}

/**
 * The signature step alone, with the SDK's own verifier (`verifyHeader`: the step `constructEvent` runs before it
 * parses). Any failure of it is PROCESSOR_SIGNATURE_INVALID, whatever the SDK throws: for some malformed headers
 * (`t=1,v1=`, an empty signature) it throws a plain Error rather than its StripeSignatureVerificationError, and
 * such a header must never be taken for a verified body that is not JSON.
 */
function verifySignature(rawBody: string, signatureHeader: string, webhookSecret: string, nowMs: number): void {
  const verifier = Stripe.webhooks.signature;
  if (verifier === null) throw new Error("the stripe SDK's webhook signature helper is missing");
  try {
    // As bytes: the SDK refuses an empty string before it looks at the signature, while bytes, even none, are
    // verified; a validly signed empty body is then refused for what it is (not JSON), not for its signature.
    verifier.verifyHeader(Buffer.from(rawBody, 'utf8'), signatureHeader, webhookSecret, SIGNATURE_TOLERANCE_SECONDS, undefined, nowMs);
  } catch {
    throw errors.processorSignatureInvalid();
  }
  // The SDK bounds only a signature's age: one dated in the future would stay replayable until then.
  if (!(signedAt(signatureHeader) * 1000 <= nowMs + SIGNATURE_TOLERANCE_SECONDS * 1000)) throw errors.processorSignatureInvalid();
}

/**
 * The `t=` of a signature header the SDK accepted, read exactly as the SDK reads it (its `parseHeader`: the items
 * split on `,` and `=`, the key exactly `t`, `parseInt`), so it is the timestamp the signature covered. A header
 * with no `t`, more than one, or one that is not a number gives NaN, which no comparison passes: refused.
 */
function signedAt(header: string): number {
  const timestamps = header.split(',').filter((item) => item.split('=')[0] === 't');
  return timestamps.length === 1 ? Number.parseInt(timestamps[0]!.split('=')[1] ?? '', 10) : Number.NaN;
}
