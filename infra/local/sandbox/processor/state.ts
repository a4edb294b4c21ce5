/**
 * The processor sandbox's state on disk, so that a restart of `npm start` on persisted `.data` keeps what
 * Stripe would keep: every object, every idempotency key with its stored response, every event with its
 * delivery history. Without it, each intent the service recorded would answer 404 after a restart, and a
 * checkout retried under its idempotency key would create a second intent.
 *
 * One JSON file, `state.json`, rewritten whole on every change: written to `state.json.tmp`, flushed to disk,
 * then renamed over `state.json` (a rename replaces the file atomically), so a crash mid-write leaves the
 * previous state whole. Writes are serialised: one at a time, each of the whole state as it is when the write
 * starts, so a `save()` while a write is waiting to start joins that write.
 */
import { z } from 'zod';
import type { SandboxEvent } from './events';
import type { StoredResponse } from './idempotency';
import type { SandboxDispute, SavedObjects } from './objects';
import { readStateFile } from '../state-file';

/**
 * Bumped when the file's shape changes so that it could be misread; a file of another version is refused. A
 * field added to an object is not such a change: a file saved without it is read with it filled in
 * (`upgradeDispute`). A charge's refund list is not saved at all: it is made from the refunds when shown.
 */
export const STATE_VERSION = 1;

/** Everything the sandbox keeps, as plain data. */
export interface SandboxState extends SavedObjects {
  idempotency: StoredResponse[];
  events: SandboxEvent[];
}

const savedObject = z.looseObject({ id: z.string() });
/** Saved before disputes carried balance transactions, a dispute has none: it is upgraded when loaded. */
const savedDispute = z.looseObject({ id: z.string(), balance_transactions: z.array(savedObject).optional() });
/**
 * A shallow check of a state file: it is the sandbox's own, so this catches another file, another version
 * or a hand edit gone wrong, without restating every field of Stripe's objects.
 */
const StateFileContent = z.object({
  version: z.literal(STATE_VERSION),
  intents: z.array(savedObject),
  charges: z.array(savedObject),
  refunds: z.array(savedObject),
  disputes: z.array(savedDispute),
  idempotency: z.array(
    z.object({
      scope: z.string(),
      endpoint: z.string(),
      fingerprint: z.string(),
      status: z.int(),
      body: z.string(),
      requestId: z.string(),
      storedAt: z.number(),
    }),
  ),
  events: z.array(z.looseObject({ event: savedObject, outcome: z.enum(['pending', 'delivered', 'failed', 'dropped']), attempts: z.array(z.looseObject({})) })),
});

/**
 * The state saved in `dir`, or undefined on a first start (the directory is created then). A file that
 * cannot be read is an error that names it: starting empty over it would lose what it holds.
 */
export async function loadState(dir: string): Promise<SandboxState | undefined> {
  const content = await readStateFile(dir, StateFileContent, cannotRead);
  if (content === undefined) return undefined;
  const { version: _version, ...state } = content as z.infer<typeof StateFileContent> & SandboxState;
  return { ...state, disputes: state.disputes.map(upgradeDispute) };
}

/**
 * A dispute from a state file saved before disputes carried balance transactions gets none (Stripe's dispute
 * may have zero): its `charge.dispute.created` named no fee, and inventing one now would tell the service of a
 * withdrawal it was never told of. Closing it as won still adds the reinstatement.
 */
function upgradeDispute(dispute: SandboxDispute): SandboxDispute {
  const saved = dispute as Omit<SandboxDispute, 'balance_transactions'> & { balance_transactions?: SandboxDispute['balance_transactions'] };
  return saved.balance_transactions === undefined ? { ...saved, balance_transactions: [] } : dispute;
}

function cannotRead(path: string, reason: string): Error {
  return new Error(`processor sandbox: cannot read its state from ${path}: ${reason}. Move the file away to start with an empty sandbox.`);
}
