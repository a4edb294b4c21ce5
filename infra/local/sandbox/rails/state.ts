/**
 * The sandbox rails' state on disk (`<data dir>/rails-sandbox/state.json`), so that a restart of `npm start` on
 * persisted `.data` keeps every transfer and every paid idempotency key: a rail that forgot a paid key would pay
 * a retried batch a second time.
 *
 * Written as the processor sandbox writes its own (`state.ts`): the whole state, to a temporary
 * file, flushed, then renamed over `state.json` (atomic), one write at a time; a `save()` while a write waits to
 * start joins that write. A file that cannot be read stops the start with a message that names it.
 */
import { z } from 'zod';
import type { SavedRail } from './ledger';
import { readStateFile } from '../state-file';

/** Bumped when the file's shape changes; a file of another version is refused rather than misread. */
export const RAILS_STATE_VERSION = 1;

export interface RailsState {
  'rail-a': SavedRail;
  'rail-b': SavedRail;
}

const SavedRailContent = z.object({
  failNext: z.boolean(),
  transfers: z.array(
    z.object({
      transfer_id: z.string(),
      batch_id: z.string(),
      amount: z.number(),
      currency: z.string(),
      partner_id: z.string(),
      client_id: z.string(),
      status: z.enum(['paid', 'failed']),
      reason: z.string().nullable(),
      idempotency_key: z.string(),
      created_at: z.string(),
    }),
  ),
});

const StateFileContent = z.object({ version: z.literal(RAILS_STATE_VERSION), 'rail-a': SavedRailContent, 'rail-b': SavedRailContent });

/** The state saved in `dir`, or undefined on a first start (the directory is created then). */
export async function loadRailsState(dir: string): Promise<RailsState | undefined> {
  const content = (await readStateFile(dir, StateFileContent, cannotRead)) as z.infer<typeof StateFileContent> | undefined;
  return content === undefined ? undefined : { 'rail-a': content['rail-a'], 'rail-b': content['rail-b'] };
}

function cannotRead(path: string, reason: string): Error {
  return new Error(
    `sandbox rails: cannot read their state from ${path}: ${reason}. Move the file away to start with empty rails (every paid idempotency key is then forgotten).`,
  );
}
