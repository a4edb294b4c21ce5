/**
 * One sandbox rail's book: every payout attempt (a transfer, paid or failed), the paid idempotency keys, and the
 * fail-next switch. The rules of the rail protocol (docs/rails.md) live here:
 * - a key already paid answers that same transfer again (a replay) when the payout is the same, and a conflict
 *   when it is another: nothing is paid twice under one key;
 * - a failed attempt does not consume its key: the next attempt under it is a new try;
 * - requests under one key run one at a time ({@link RailLedger.serialise}), so a second waits for the first to
 *   be answered (and saved) and then replays it, or tries anew after a failure; a lookup of the key
 *   ({@link RailLedger.paid}) waits the same way, so it answers only what is saved.
 * Keys are kept for ever: forgetting a paid key would let a retry pay a batch twice.
 */
import { randomBytes } from 'node:crypto';

/** What a payout asks for, checked (api.ts). */
export interface PayoutInput {
  batch_id: string;
  /** Major units, positive, with no more decimals than the currency has. */
  amount: number;
  currency: string;
  partner_id: string;
  client_id: string;
}

/** One payout attempt, as kept (and saved in the state file). */
export interface TransferRecord extends PayoutInput {
  transfer_id: string;
  status: 'paid' | 'failed';
  reason: string | null;
  idempotency_key: string;
  created_at: string;
}

/** One item of `GET /rail-x/transfers` (decisions.md §1). */
export interface TransferItem {
  transfer_id: string;
  batch_id: string;
  amount: number;
  currency: string;
  status: 'paid' | 'failed';
}

export interface SavedRail {
  failNext: boolean;
  transfers: TransferRecord[];
}

export type Attempt =
  | { kind: 'paid'; transfer: TransferRecord }
  | { kind: 'replay'; transfer: TransferRecord }
  | { kind: 'failed'; transfer: TransferRecord }
  | { kind: 'conflict'; transfer: TransferRecord };

const ID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export class RailLedger {
  private readonly transfers: TransferRecord[];
  private readonly paidByKey = new Map<string, TransferRecord>();
  /** The last request queued under each key that is in use; settles (never rejects) once it is answered. */
  private readonly queues = new Map<string, Promise<void>>();
  private failNext: boolean;

  constructor(
    /** `tr_a_` or `tr_b_`. */
    private readonly idPrefix: string,
    saved: SavedRail = { failNext: false, transfers: [] },
  ) {
    this.transfers = [...saved.transfers];
    this.failNext = saved.failNext;
    for (const transfer of this.transfers) if (transfer.status === 'paid') this.paidByKey.set(transfer.idempotency_key, transfer);
  }

  /** The next payout attempt fails (once; asking again before it is used changes nothing). */
  setFailNext(): void {
    this.failNext = true;
  }

  /**
   * One payout attempt under `key`, decided at once (synchronously, so nothing interleaves with it): a replay or
   * a conflict when the key is paid, else a new transfer, failed if fail-next was set.
   */
  attempt(key: string, payout: PayoutInput): Attempt {
    const paid = this.paidByKey.get(key);
    if (paid !== undefined) return { kind: samePayout(paid, payout) ? 'replay' : 'conflict', transfer: paid };
    const fail = this.failNext;
    this.failNext = false;
    const transfer: TransferRecord = {
      transfer_id: `${this.idPrefix}${randomId(16)}`,
      ...pick(payout),
      status: fail ? 'failed' : 'paid',
      reason: fail ? 'the sandbox was told to fail this payout (fail-next)' : null,
      idempotency_key: key,
      created_at: new Date().toISOString(),
    };
    this.transfers.push(transfer);
    if (!fail) this.paidByKey.set(key, transfer);
    return { kind: fail ? 'failed' : 'paid', transfer };
  }

  /** The transfer paid under `key`, if one was (a failed attempt is not one). */
  paid(key: string): TransferRecord | undefined {
    return this.paidByKey.get(key);
  }

  /** Runs `work` once every request queued earlier under `key` has finished. */
  serialise<T>(key: string, work: () => Promise<T>): Promise<T> {
    const result = (this.queues.get(key) ?? Promise.resolve()).then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(key, tail);
    void tail.then(() => {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    });
    return result;
  }

  /** Every attempt, oldest first. */
  list(): TransferItem[] {
    return this.transfers.map(({ transfer_id, batch_id, amount, currency, status }) => ({ transfer_id, batch_id, amount, currency, status }));
  }

  save(): SavedRail {
    return { failNext: this.failNext, transfers: this.transfers.map((transfer) => ({ ...transfer })) };
  }
}

const pick = (payout: PayoutInput): PayoutInput => ({
  batch_id: payout.batch_id,
  amount: payout.amount,
  currency: payout.currency,
  partner_id: payout.partner_id,
  client_id: payout.client_id,
});

function samePayout(paid: PayoutInput, payout: PayoutInput): boolean {
  return JSON.stringify(pick(paid)) === JSON.stringify(pick(payout));
}

function randomId(length: number): string {
  const bytes = randomBytes(length);
  // 256 is not a multiple of 62: the slight bias is harmless in a sandbox id.
  return Array.from(bytes, (byte) => ID_ALPHABET[byte % ID_ALPHABET.length]).join('');
}
