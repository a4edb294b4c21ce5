/** Payout rails with a fault injected at the port, for settlement tests that need the rail to misbehave. */
import { settlementDeps } from '../../lib/composition';
import { PayoutOutcomeUnknown } from '../../lib/use-cases/ports/payouts';
import type { SettlementDeps } from '../../lib/use-cases/settlements';

/** Rails that pay, then lose the answer: the rail paid, the service cannot know. */
export const answerLost: SettlementDeps = {
  ...settlementDeps,
  rails: {
    ...settlementDeps.rails,
    pay: async (request) => {
      await settlementDeps.rails.pay(request);
      throw new PayoutOutcomeUnknown('rail A did not answer within 9000 ms');
    },
  },
};
