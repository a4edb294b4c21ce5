/**
 * The transaction lifecycle of decisions.md §5, written out here on its own (not imported from lib/domain, so a
 * broken state machine there cannot also break the oracle that judges it), and what a storm of processor events
 * may end in.
 *
 * Moves: pending → succeeded | failed | abandoned; failed → succeeded; succeeded → refunded | chargeback. No status
 * is ever entered twice, so the set of statuses a transaction moved through names its path uniquely: the path is
 * that set ordered by the machine. Under events delivered in any order, duplicated and concurrently, the service
 * must end in *some* serialisation of them: a valid path, one partner event per move, nothing for the rest.
 */

export type Status = 'pending' | 'succeeded' | 'failed' | 'abandoned' | 'refunded' | 'chargeback';
export type MovedTo = Exclude<Status, 'pending'>;

/**
 * decisions.md §5: the only moves a processor event may make, written out here on purpose rather than imported
 * from lib/domain, so the suites that judge the service by it (the storm, the webhook fuzzer) do not share a bug
 * with what they judge. `initialized` (the legacy flow before an intent) moves by no event.
 */
export const ALLOWED_MOVES: Readonly<Record<Status | 'initialized', readonly MovedTo[]>> = {
  initialized: [],
  pending: ['succeeded', 'failed', 'abandoned'],
  failed: ['succeeded'],
  succeeded: ['refunded', 'chargeback'],
  abandoned: [],
  refunded: [],
  chargeback: [],
};
const ALLOWED = ALLOWED_MOVES;

/**
 * The path through the machine that visits exactly `moved`, or `undefined` when no valid path does: e.g.
 * {succeeded, failed} is pending → failed → succeeded, and {abandoned, succeeded} is none. A status is never
 * entered twice on a valid path, so a repeated one (two partner events for one move) is no path either.
 */
export function pathOf(moved: readonly MovedTo[]): MovedTo[] | undefined {
  if (new Set(moved).size !== moved.length) return undefined;
  const walk = (at: Status, left: ReadonlySet<MovedTo>): MovedTo[] | undefined => {
    if (left.size === 0) return [];
    for (const to of ALLOWED[at]) {
      if (!left.has(to)) continue;
      const rest = walk(to, new Set([...left].filter((status) => status !== to)));
      if (rest !== undefined) return [to, ...rest];
    }
    return undefined;
  };
  return walk('pending', new Set(moved));
}

/** The status a path ends in. */
export const finalOf = (path: readonly MovedTo[]): Status => path.at(-1) ?? 'pending';
